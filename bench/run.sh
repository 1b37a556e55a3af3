#!/usr/bin/env bash
# Benchmarks against the peers, in one run (bench/README.md): size, per-call overhead (Node
# and headless Chromium), crossings per call, startup, outage amplification, where the wasm bytes go, and the
# retry-storm simulation.
#   bench/run.sh            everything; the tables go to stdout (and bench/.out/results.md)
# Env: BENCH_CALLS, BENCH_ROUNDS, BENCH_WARMUP (overhead.mjs), BENCH_BROWSER_CALLS,
# BENCH_BROWSER_ROUNDS, BENCH_BROWSER_WARMUP (browser.mjs), BENCH_STARTUP_RUNS,
# BENCH_STARTUP_BROWSER_RUNS (startup.mjs), BENCH_EDGE_STARTUP_RUNS (edge-startup.mjs), BENCH_CLIENTS, BENCH_CALLS_PER_CLIENT (outage.mjs),
# BENCH_HEDGE_CALLS, BENCH_HEDGE_RATE, BENCH_HEDGE_TAIL (hedge.mjs), BENCH_FALLBACK_OUTAGE_MS,
# BENCH_FALLBACK_LOOPS, BENCH_FALLBACK_GAP_MS, BENCH_FALLBACK_URLS (fallback.mjs),
# BENCH_RESUME_MB, BENCH_RESUME_CUTS, BENCH_RESUME_ROUNDS (resume.mjs),
# BENCH_EVENTS_COUNT, BENCH_EVENTS_CHUNK, BENCH_EVENTS_ROUNDS (events.mjs),
# BENCH_CHROMIUM (default /usr/bin/chromium), RF_BENCH_NO_TWIGGY=1 (skip the twiggy breakdown).
# Not part of scripts/test.sh: benchmarks are not tests.
set -euo pipefail
BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
. "$BENCH/../scripts/lib.sh"
OUT="$BENCH/.out"
mkdir -p "$OUT"
started=$SECONDS
step() { printf '[bench %3ss] %s\n' "$((SECONDS - started))" "$*" >&2; }

step "building the package (scripts/build.sh)"
"$ROOT/scripts/build.sh"
# Headless Chromium for the browser tables (browser.mjs, startup.mjs): scripts/toolchain.sh
# installs it (with the rest of the test tools) where it is missing.
if [[ ! -x "${BENCH_CHROMIUM:-/usr/bin/chromium}" ]]; then
  step "installing Chromium (scripts/toolchain.sh all)"
  "$ROOT/scripts/toolchain.sh" all >&2
fi
# Which cargo output the shipped wasm came from (build.sh may build in more than one place, and
# its full build overwrites the lean one's release/resilient_fetch.wasm, while each build's own
# stays in cargo's build directory, release/build/resilient-fetch/<hash>/out/): the one whose wasm-bindgen + wasm-opt -Oz +
# short names + strip result (as build.sh makes it) is byte-identical to it, newest first. Kept as .out/source.wasm for the twiggy breakdown.
rm -rf "$OUT/names" "$OUT/source.wasm"
mkdir -p "$OUT/names"
ours_route="unknown"
while IFS= read -r candidate; do
  cp "$candidate" "$OUT/names/candidate.wasm"
  wasm-bindgen --target web --weak-refs --out-dir "$OUT/names" --out-name resilient_fetch "$OUT/names/candidate.wasm"
  wasm-opt "${WASM_OPT_FLAGS[@]}" "$OUT/names/resilient_fetch_bg.wasm" -o "$OUT/names/stripped.wasm"
  node "$ROOT/scripts/minify-names.mjs" "$OUT/names/stripped.wasm" "$OUT/names/resilient_fetch.js" 2>/dev/null
  wasm-opt "$OUT/names/stripped.wasm" --strip-producers --strip-target-features -o "$OUT/names/stripped.wasm"
  if cmp -s "$OUT/names/stripped.wasm" "$ROOT/pkg/web/resilient_fetch_bg.wasm"; then
    mv "$OUT/names/candidate.wasm" "$OUT/source.wasm"
    ours_route="$(build_route "$(dirname "$candidate")" "$CARGO_TARGET_DIR")"
    break
  fi
done < <(find "$CARGO_TARGET_DIR" \( -path '*/wasm32-unknown-unknown/release/resilient_fetch.wasm' \
  -o -path '*/wasm32-unknown-unknown/release/build/resilient-fetch/*/out/resilient_fetch.wasm' \) \
  -printf '%T@ %p\n' 2>/dev/null | sort -rn | cut -d' ' -f2-)

# The stack's minimum (bench/stack-minimum: the named crates with none of our logic), built as
# scripts/build.sh builds the package: release_wasm, wasm-bindgen, wasm-opt, short names
# (scripts/minify-names.mjs), stripped; talc is its allocator. Options are read with
# js_sys::Reflect as the package reads them; once more with serde-wasm-bindgen's Deserializer
# instead (--features serde), to show what that choice costs. Its own cargo target dir, next
# to this checkout's.
build_minimum() {
  local out="$OUT/$1" target="$CARGO_TARGET_DIR/bench-$1" dir
  shift
  dir="$(release_wasm "$BENCH/stack-minimum/Cargo.toml" "$target" "$@")"
  rm -rf "$out"
  # minify-names.mjs knows a glue by the package's out-name: built under it, renamed after.
  wasm-bindgen --target web --weak-refs --out-dir "$out" --out-name resilient_fetch "$dir/stack_minimum.wasm"
  wasm-opt "${WASM_OPT_FLAGS[@]}" "$out/resilient_fetch_bg.wasm" -o "$out/resilient_fetch_bg.wasm"
  node "$ROOT/scripts/minify-names.mjs" "$out/resilient_fetch_bg.wasm" "$out/resilient_fetch.js" 2>/dev/null
  wasm-opt "$out/resilient_fetch_bg.wasm" --strip-producers --strip-target-features -o "$out/stack_minimum_bg.wasm"
  grep -q "'resilient_fetch_bg.wasm'" "$out/resilient_fetch.js" || die "the minimum's glue does not load resilient_fetch_bg.wasm by name"
  sed -e "s/'resilient_fetch_bg\.wasm'/'stack_minimum_bg.wasm'/" -e 's#"\./resilient_fetch\.d\.ts"#"./stack_minimum.d.ts"#' \
    "$out/resilient_fetch.js" > "$out/stack_minimum.js"
  mv "$out/resilient_fetch.d.ts" "$out/stack_minimum.d.ts"
  rm -f "$out"/resilient_fetch*
  build_route "$dir" "$target" > "$out/route"
}
step "building the stack's minimum (bench/stack-minimum), options by Reflect and by serde-wasm-bindgen"
build_minimum stack-minimum
build_minimum stack-minimum-serde --features serde
export BENCH_STACK_MINIMUM="$OUT/stack-minimum" BENCH_STACK_MINIMUM_SERDE="$OUT/stack-minimum-serde"

step "packing pkg/ and installing it and the peers into bench/"
rm -f "$OUT"/resilient-fetch-*.tgz
tarball="$(cd "$ROOT" && npm pack ./pkg --pack-destination "$OUT" --silent | tail -n 1)"
cd "$BENCH"
# The lock file pins the peers; a plain install is the fallback if `npm ci` refuses.
npm ci --no-audit --no-fund --loglevel=error >&2 ||
  npm install --no-save --no-audit --no-fund --loglevel=error >&2
# The package under test comes from its tarball, never recorded in package.json or the lock.
npm install --no-save --no-audit --no-fund --loglevel=error "$OUT/$tarball" >&2

results="$OUT/results.md"
: > "$results"
emit() { tee -a "$results"; echo | tee -a "$results"; }

{
  echo "# resilient-fetch benchmarks"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%MZ); Node $(node --version); $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'));"
  echo "peers: $(node -e '
    const l = require("./package-lock.json").packages;
    console.log(["ky", "ofetch", "cockatiel", "opossum"].map((n) => `${n} ${l["node_modules/" + n].version}`).join(", "));')"
  echo "wasm builds (scripts/lib.sh release_wasm routes): ours $ours_route, stack minimum $(cat "$OUT/stack-minimum/route"), with serde $(cat "$OUT/stack-minimum-serde/route")."
  echo "Ratios are the result; absolute times depend on the machine."
} | emit

step "size"
node size.mjs | emit

if [[ "${RF_BENCH_NO_TWIGGY:-}" != 1 ]]; then
  if ! command -v twiggy >/dev/null; then
    step "installing twiggy (cargo install, once)"
    cargo install twiggy --version 0.8.0 --locked --quiet >&2 || true
  fi
  if [[ ! -f "$OUT/source.wasm" ]]; then
    echo "(no breakdown of the wasm: no cargo output rebuilds the shipped wasm exactly)" | emit
  elif command -v twiggy >/dev/null; then
    step "where the wasm bytes go (twiggy)"
    # The cargo output behind the shipped wasm (found right after the build, above), through
    # the same steps as scripts/build.sh but with the function names kept for twiggy.
    shipped="$BENCH/node_modules/resilient-fetch/web/resilient_fetch_bg.wasm"
    wasm-bindgen --target web --weak-refs --out-dir "$OUT/names" --out-name resilient_fetch "$OUT/source.wasm"
    wasm-opt "${WASM_OPT_FLAGS[@]}" -g "$OUT/names/resilient_fetch_bg.wasm" -o "$OUT/names/named.wasm"
    twiggy top -n 100000 --format csv "$OUT/names/named.wasm" > "$OUT/twiggy-top.csv"
    node wasm_bytes.mjs "$OUT/twiggy-top.csv" "$shipped" | emit
  else
    step "twiggy is not installed: no breakdown of the wasm"
  fi
fi

step "per-call overhead (Node, stub fetch)"
rm -f "$OUT/overhead-node.json"
BENCH_JSON="$OUT/overhead-node.json" node --expose-gc --no-flush-bytecode --no-warnings overhead.mjs | emit

step "crossings between JS and the wasm per call (Node, stub fetch), beside the stack's minimum"
node --no-warnings crossings.mjs | emit

step "per-call overhead (headless Chromium, stub fetch)"
BENCH_NODE_JSON="$OUT/overhead-node.json" node --no-warnings browser.mjs | emit

step "startup: import to callable (Node, headless Chromium)"
node --no-warnings startup.mjs | emit

step "startup: a fresh workerd isolate's first request, with the package and without it"
node --no-warnings edge-startup.mjs | emit

step "outage amplification (503 server on 127.0.0.1)"
node --no-warnings outage.mjs | emit

step "shared origin health: a fleet's requests through an outage against one client's (server on 127.0.0.1)"
node --no-warnings share.mjs | emit

step "rate limits: pacing against a quota, adaptive throttling (servers on 127.0.0.1)"
node --no-warnings ratelimit.mjs | emit

step "the read path's tail: hedged reads (server on 127.0.0.1)"
node --no-warnings hedge.mjs | emit

step "fallback through an outage: failover and stale answers (servers on 127.0.0.1)"
node --no-warnings fallback.mjs | emit

step "a download through broken connections: resumed downloads (server on 127.0.0.1)"
node --no-warnings resume.mjs | emit
step "server-sent events parsed per second, beside @microsoft/fetch-event-source (server on 127.0.0.1)"
node --no-warnings events.mjs | emit

step "retry storm (native Rust, cargo run --release --example retry_storm)"
(cd "$ROOT" && cargo build --release --example retry_storm --quiet)
(cd "$ROOT" && cargo run --release --example retry_storm --quiet) | emit

step "a fleet and a dead origin: growing cooldowns (native Rust, cargo run --release --example dead_origin)"
(cd "$ROOT" && cargo run --release --example dead_origin --quiet) | emit

step "done in $((SECONDS - started)) s; tables also in bench/.out/results.md"
