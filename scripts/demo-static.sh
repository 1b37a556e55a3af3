#!/usr/bin/env bash
# Builds the package (setting up what is missing) and assembles the demo as a static
# site any static server can host, from any path (e.g. GitHub Pages): the page, the
# package files a browser loads, and a mock backend in a service worker (www-demo/sw.js)
# in place of the local Node backend of scripts/demo.sh.
#   scripts/demo-static.sh [--no-build] [OUT]    (OUT: demo-static/ at the repository root)
# --no-build assembles from the pkg/ already built (the demo tests use it).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

build=1
if [[ "${1:-}" == --no-build ]]; then build=0; shift; fi
[[ $# -le 1 && "${1:-}" != -* ]] || die "usage: scripts/demo-static.sh [--no-build] [OUT]"
OUT="${1:-$ROOT/demo-static}"

# OUT is emptied first: only when it is empty or an earlier build (never a folder of other files).
if [[ -d "$OUT" && -n "$(ls -A "$OUT")" && ! (-f "$OUT/sw.js" && -f "$OUT/backend.json") ]]; then
  die "$OUT is not empty and not an earlier static demo build: pick another folder"
fi

if [[ $build == 1 ]]; then
  "$ROOT/scripts/build.sh"
fi
PKG="$ROOT/pkg"
# The page shows every capability: it loads the full build (pkg/full/).
PKG="$PKG/full"
[[ -f "$PKG/browser.js" && -f "$PKG/errors.js" && -d "$PKG/web" ]] || die "pkg/ is not built (run scripts/build.sh)"

mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
find "$OUT" -mindepth 1 -delete
cp "$ROOT"/www-demo/{index.html,demo.css,demo.js,tab.html,tab.js,sw.js} "$OUT/"
# The page's lanes, a module each (demo.js imports them).
cp -R "$ROOT/www-demo/lanes" "$OUT/lanes"
# The page finds its origins here: the mock ones, answered by the service worker it names.
cat > "$OUT/backend.json" <<'JSON'
{"a":"https://a.demo.invalid","b":"https://b.demo.invalid","serviceWorker":"sw.js"}
JSON
# What pkg/full/browser.js loads: errors.js and web/ (the ES module glue, its snippets, the
# wasm), without the type declarations.
mkdir -p "$OUT/pkg/full"
cp "$PKG/browser.js" "$PKG/errors.js" "$OUT/pkg/full/"
cp -R "$PKG/web" "$OUT/pkg/full/web"
find "$OUT/pkg" -name '*.d.ts' -delete
# GitHub Pages: serve the files as they are (no Jekyll).
touch "$OUT/.nojekyll"

log "static demo in $OUT ($(du -sh "$OUT" | cut -f1))"
log "serve it with any static server, e.g.: python3 -m http.server -b 127.0.0.1 -d \"$OUT\" 8000"
log "then open http://127.0.0.1:8000/ (service workers need https:// or localhost)"
echo "$OUT"
