# Shared settings for the project's scripts. Source it; do not run it.
# Caches live outside the repository so that a fresh clone (CI) reuses them.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE_DIR="${RF_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/resilient-fetch}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$CACHE_DIR/target}"
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$ROOT/tools/node_modules/.bin:$PATH"
export DENO_NO_UPDATE_CHECK=1
# Set by scripts/toolchain.sh when the rustup wasm target cannot be had and
# Debian's toolchain is used instead (see ensure_wasm_target there).
TOOLCHAIN_ENV="$CACHE_DIR/wasm-toolchain.env"

log() { printf '[%s] %s\n' "$(basename "$0" .sh)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# Runs cargo for the wasm32 target, with the fallback toolchain's settings
# when that route is in use. Native cargo commands never see them.
# The target goes right after the subcommand, before any `--` for the tool.
wasm_cargo() {
  local sub="$1"; shift
  if [[ -f "$TOOLCHAIN_ENV" ]]; then
    (set -a; . "$TOOLCHAIN_ENV"; set +a; cargo "$sub" --target wasm32-unknown-unknown "$@")
  else
    cargo "$sub" --target wasm32-unknown-unknown "$@"
  fi
}

# The wasm-bindgen crate version pinned in Cargo.lock: the CLI must match it.
wasm_bindgen_version() {
  awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' "$ROOT/Cargo.lock"
}
