#!/usr/bin/env bash
# Builds the npm package into pkg/: release wasm (size profile), wasm-bindgen
# once per target the package needs, wasm-opt (WASM_OPT_FLAGS, lib.sh), then pkg-template/ around it.
#   web/  ES module glue: browsers, bundlers, Deno, workerd and Node ESM
#   cjs/  CommonJS glue: Node's require()
# twice: the lean build (no opt-in capability: `resilient-fetch`) in pkg/, the full build
# (`--features full`: `resilient-fetch/full`) in pkg/full/.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[[ "${RF_SKIP_TOOLCHAIN:-}" == 1 ]] || "$ROOT/scripts/toolchain.sh" build

# js/'s concern files joined into the snippet modules the shell binds (js/joined/), before
# wasm-bindgen reads them.
node "$ROOT/scripts/join-js.mjs"

# One build of the wasm (cargo features: the arguments) bound, optimised and wrapped into
# $1: web/ and cjs/ glue, errors.js and cjs/errors.js. The lean build goes to pkg/, the full
# one (every capability) to pkg/full/; the entries of pkg-template/ sit on top of each.
# The route each build took (release_wasm), by its folder.
declare -A ROUTES
bind_build() {
  local PKG="$1"
  shift
  local WASM_DIR WASM
  WASM_DIR="$(release_wasm "$ROOT/Cargo.toml" "$CARGO_TARGET_DIR" "$@")"
  WASM="$PKG.cargo.wasm"
  # The next build overwrites cargo's output: keep this one's.
  cp "$WASM_DIR/resilient_fetch.wasm" "$WASM"
  mkdir -p "$PKG"
  for target in web:web nodejs:cjs; do
    out="$PKG/${target#*:}"
    log "wasm-bindgen --target ${target%%:*} -> ${out#"$ROOT/"}"
    # --weak-refs: a ResilientClient nobody references is freed by the GC.
    wasm-bindgen --target "${target%%:*}" --weak-refs --out-dir "$out" --out-name resilient_fetch "$WASM"
    rm -f "$out/resilient_fetch_bg.wasm.d.ts" "$out/.gitignore" "$out/package.json"
    # Declaring [Symbol.dispose] needs TypeScript's esnext.disposable lib, which
    # most projects do not load; the method still exists at run time.
    sed -i '/^    \[Symbol\.dispose\](): void;$/d' "$out/resilient_fetch.d.ts"
    # The web glue's init declarations (InitInput, initSync, ...) name DOM-only types
    # (BufferSource, WebAssembly.*); no entry point exports them: drop them, so the
    # declarations compile with Node's or Workers' types alone.
    if grep -q '^export type InitInput' "$out/resilient_fetch.d.ts"; then
      sed -i '/^export type InitInput/,$d' "$out/resilient_fetch.d.ts"
    fi
    # A client used after free(): a clear TypeError before anything reaches the wasm
    # (wasm-bindgen would throw "null pointer passed to rust" from inside it).
    glue="$out/resilient_fetch.js"
    grep -q 'wasm\.resilientclient_[a-zA-Z_]*(this\.__wbg_ptr' "$glue" || die "no client methods to guard in $glue"
    sed -i -E 's/(wasm\.resilientclient_[a-zA-Z_]+)\(this\.__wbg_ptr/\1(livePtr(this)/' "$glue"
    cat >> "$glue" <<'JS'

function livePtr(client) {
    if (!(client instanceof ResilientClient)) {
        throw new TypeError("resilientFetch: a ResilientClient method was called without its client: pass api.fetch.bind(api), not api.fetch");
    }
    if (client.__wbg_ptr === 0) {
        throw new TypeError("resilientFetch: this ResilientClient was freed (free(), or a using block ended); make a new one");
    }
    return client.__wbg_ptr;
}
JS
  done
  
  # The two runs emit the same wasm; ship it once and point the CommonJS glue at it.
  if cmp -s "$PKG/web/resilient_fetch_bg.wasm" "$PKG/cjs/resilient_fetch_bg.wasm" &&
     grep -q '^const wasmPath = `${__dirname}/resilient_fetch_bg.wasm`;$' "$PKG/cjs/resilient_fetch.js"; then
    sed -i 's|^const wasmPath = `${__dirname}/resilient_fetch_bg.wasm`;$|const wasmPath = `${__dirname}/../web/resilient_fetch_bg.wasm`;|' \
      "$PKG/cjs/resilient_fetch.js"
    rm "$PKG/cjs/resilient_fetch_bg.wasm"
  fi
  for wasm in "$PKG"/*/resilient_fetch_bg.wasm; do
    log "wasm-opt ${WASM_OPT_FLAGS[*]} ${wasm#"$ROOT/"}"
    wasm-opt "${WASM_OPT_FLAGS[@]}" "$wasm" -o "$wasm"
  done
  # Short import and export names in the one wasm and in both glues that load it, then
  # the sections no runtime reads (producers, target features).
  WEB_WASM="$PKG/web/resilient_fetch_bg.wasm"
  [[ -f "$PKG/cjs/resilient_fetch_bg.wasm" ]] && die "the CommonJS glue must share the web wasm for its names to match"
  node "$ROOT/scripts/minify-names.mjs" "$WEB_WASM" "$PKG/web/resilient_fetch.js" "$PKG/cjs/resilient_fetch.js"
  wasm-opt "$WEB_WASM" --strip-producers --strip-target-features -o "$WEB_WASM"
  
  # js/errors.js, js/body.js and js/joined/*.js reach the glue as wasm-bindgen snippets.
  # Users must get the very same error classes (for instanceof), so the package re-exports
  # the errors snippet; the CommonJS copies are turned into CommonJS modules (each snippet
  # ends with one `export { ... };` line).
  snippet_dir() {
    local found=("$PKG/$1"/snippets/*/js)
    [[ ${#found[@]} -eq 1 && -f "${found[0]}/errors.js" ]] || die "expected one js/ snippet folder in ${PKG#"$ROOT/"}/$1"
    echo "${found[0]#"$PKG/$1/"}"
  }
  web_snippets="$(snippet_dir web)"
  cjs_snippets="$(snippet_dir cjs)"
  echo "export { TimeoutError, CircuitOpenError, BulkheadFullError, RateLimitError, ThrottledError, QueuedError } from \"./web/$web_snippets/errors.js\";" > "$PKG/errors.js"
  exports_line='^export \{ ([A-Za-z_, ]+) \};$'
  # A snippet may import another snippet by name: `import { a, b } from "./x.js";` (or "../x.js"
  # from js/joined/).
  import_line='^import \{ ([A-Za-z_, ]+) \} from "(\.\.?/[a-z]+\.js)";$'
  local snippet snippets
  snippets=("$PKG/cjs/$cjs_snippets"/*.js)
  # The joined modules the build binds (the lean build binds fewer).
  [[ -d "$PKG/cjs/$cjs_snippets/joined" ]] && snippets+=("$PKG/cjs/$cjs_snippets"/joined/*.js)
  for snippet in "${snippets[@]}"; do
    grep -Eq "$exports_line" "$snippet" || die "$(basename "$snippet") must end with one export { ... } line"
    sed -E -i "s/$exports_line/module.exports = { \1 };/; s#$import_line#const { \1 } = require(\"\2\");#" "$snippet"
    ! grep -Eq '^(import|export) ' "$snippet" || die "$(basename "$snippet") keeps an import or export the CommonJS copy cannot run"
  done
  echo "module.exports = require(\"./$cjs_snippets/errors.js\");" > "$PKG/cjs/errors.js"
  rm -f "$WASM"
  ROUTES[$PKG]="$(build_route "$WASM_DIR" "$CARGO_TARGET_DIR")"
}

PKG="$ROOT/pkg"
rm -rf "$PKG" "$PKG.cargo.wasm" "$PKG/full.cargo.wasm"
mkdir -p "$PKG"
bind_build "$PKG" --no-default-features
bind_build "$PKG/full" --features full

cp -R "$ROOT/pkg-template/." "$PKG/"
# resilient-fetch/full: the same entries around the full build; pkg-template/full/ holds the
# files that differ (its declarations, and the Workers entry with its Durable Objects).
for entry in browser.js node.mjs node.cjs deno.mjs worker.js errors.d.ts index.d.cts cjs/package.json; do
  [[ -f "$PKG/full/$entry" ]] || cp "$ROOT/pkg-template/$entry" "$PKG/full/$entry"
done
# Lines of the entries marked `//+full ` are the full build's only (resilientEvents, client.events).
for entry in browser.js node.mjs node.cjs deno.mjs worker.js; do
  sed -i '/^ *\/\/+full /d' "$PKG/$entry"
  [[ -f "$ROOT/pkg-template/full/$entry" ]] || sed -i -E 's#^( *)//\+full #\1#' "$PKG/full/$entry"
done
# The entries import functions of js/ (install's, readFirst) from the snippet module the glue
# loads (one instance: one install at a time, one table of call promises): its folder's name
# is wasm-bindgen's.
for build in "$PKG" "$PKG/full"; do
  for glue in web:browser.js web:deno.mjs web:worker.js cjs:node.cjs; do
    entry="${glue#*:}" glue="${glue%%:*}"
    arguments=("$build/$glue"/snippets/*/js/joined/arguments.js)
    [[ ${#arguments[@]} -eq 1 && -f "${arguments[0]}" ]] || die "expected one joined arguments.js snippet in ${build#"$ROOT/"}/$glue"
    grep -q "\"./$glue/snippets/\\[crate\\]/js/joined/arguments.js\"" "$build/$entry" || die "$entry must import ./$glue/snippets/[crate]/js/joined/arguments.js"
    sed -i "s#\"./$glue/snippets/\[crate\]/js/joined/arguments.js\"#\"./${arguments[0]#"$build/"}\"#" "$build/$entry"
  done
done
# The error classes' declarations, once for the ES modules and once for CommonJS (index.d.cts).
cp "$PKG/errors.d.ts" "$PKG/cjs/errors.d.ts"
cp "$PKG/errors.d.ts" "$PKG/full/cjs/errors.d.ts"
cp "$ROOT/LICENSE" "$PKG/LICENSE"
# The package page and the pages it links (the release notes, a page per topic, the benchmark's
# results, how to work on it), so that its links work in the installed package too.
cp "$ROOT/README.md" "$ROOT/CHANGELOG.md" "$ROOT/CONTRIBUTING.md" "$PKG/"
mkdir -p "$PKG/docs" "$PKG/bench" && cp "$ROOT"/docs/*.md "$PKG/docs/" && cp "$ROOT/bench/README.md" "$PKG/bench/"
version="$(awk -F'"' '/^version = / { print $2; exit }' "$ROOT/Cargo.toml")"
node -e '
  const fs = require("fs"), p = process.argv[1];
  const pkg = JSON.parse(fs.readFileSync(p, "utf8"));
  pkg.version = process.argv[2];
  fs.writeFileSync(p, JSON.stringify(pkg, null, 2) + "\n");
' "$PKG/package.json" "$version"

# resilient-fetch/otel (opt-in; no other entry imports it): the ES module with the package's
# version as its instrumentation scope's, a CommonJS copy (its one import line becomes a
# require, its one export line module.exports), and the declarations once for each.
otel="$PKG/otel.js"
otel_import='^import \{ ([A-Za-z, ]+) \} from "(@opentelemetry/api)";$'
grep -q '^const VERSION = "0.0.0";' "$otel" || die "otel.js must hold one 'const VERSION = \"0.0.0\";' line for the build to set"
grep -Eq "$otel_import" "$otel" && grep -Eq "$exports_line" "$otel" ||
  die "otel.js must import @opentelemetry/api on one line and end with one export { ... } line"
sed -i "s/^const VERSION = \"0.0.0\";/const VERSION = \"$version\";/" "$otel"
{ echo '"use strict";'; sed -E "s#$otel_import#const { \1 } = require(\"\2\");#; s/$exports_line/module.exports = { \1 };/" "$otel"; } > "$PKG/otel.cjs"
! grep -Eq '^(import|export) ' "$PKG/otel.cjs" || die "otel.cjs keeps an import or export the CommonJS copy cannot run"
sed -e '1s#(ES modules)#(CommonJS: what require("resilient-fetch/otel") returns)#' -e 's#from "\./index\.js";$#from "./index.cjs";#' \
  "$PKG/otel.d.ts" > "$PKG/otel.d.cts"
grep -q 'from "./index.cjs";$' "$PKG/otel.d.cts" || die "otel.d.ts must import its types from ./index.js"

for build in "$PKG" "$PKG/full"; do
  raw=$(stat -c %s "$build/web/resilient_fetch_bg.wasm")
  gz=$(gzip -9 -c < "$build/web/resilient_fetch_bg.wasm" | wc -c)
  log "built ${build#"$ROOT/"}/ (resilient-fetch $version, ${ROUTES[$build]} build): web wasm $raw bytes, $gz gzipped"
done
