#!/usr/bin/env bash
# Builds the package (setting up what is missing) and serves the demo page
# with its chaos backend on 127.0.0.1; prints the URL. Ctrl-C stops it.
#   scripts/demo.sh [--port 8080] [--backend-ports 8081,8082]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
"$ROOT/scripts/build.sh"
exec node "$ROOT/www-demo/serve.mjs" "$@"
