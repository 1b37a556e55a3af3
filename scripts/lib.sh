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

# wasm-opt's optimisation of every wasm the project ships or measures. --low-memory-unused
# lets it fold constant offsets into loads and stores (-290 B gz): it assumes nothing lives
# in the first 1 KiB of memory, which holds with Rust's wasm32 layout (the stack first, from
# 1 MiB down: its lowest KiB is reached only by an overflow, which traps before it anyway).
# After the first -Oz, --flatten --rereloop and two more -Oz rounds find a little more
# (lean build -297 B gz, 2026-12-01; --converge alone -154 B, --gufa and -O3 first nothing).
# -ocimfs 50 (--one-caller-inline-max-function-size): a function with one caller is inlined
# into it only up to 50 bytes, not at any size. V8 compiles a wasm function whole when it
# first runs it, so cold code folded into a hot function is compiled on the first call all
# the same: kept apart, a first 200 GET compiles 34 KB of wasm, not 40 (the attempt loop's
# function 8.8 KB, not 15.3), and Node's first call is ~0.5 ms shorter; both builds are
# smaller too (size guard: lean -204 B gz, full -770 B). 0, 20, 30, 40, 60, 80, 100, 150, 200
# and 300 each saved less in the lean build, and 30, 40, 60 and 80 in the full one (2026-12-05).
WASM_OPT_FLAGS=(-Oz --low-memory-unused -ocimfs 50 --flatten --rereloop -Oz -Oz)

# The wasm-bindgen crate version pinned in Cargo.lock: the CLI must match it.
wasm_bindgen_version() {
  awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' "$ROOT/Cargo.lock"
}

# The size-optimised release build: nightly, std rebuilt with -Cpanic=immediate-abort
# (no panic messages, locations or formatting machinery), Debug formatting compiled out
# (-Zfmt-debug=none: no shipped message uses it) and std's optimize_for_size variants.
SIZE_RUSTFLAGS="-Zunstable-options -Cpanic=immediate-abort -Zlocation-detail=none"
SIZE_RUSTFLAGS_EXTRA="-Zfmt-debug=none"
SIZE_STD_FEATURES="-Zbuild-std-features=optimize_for_size"

# Builds the wasm32 cdylib of the crate whose manifest is $1 in release mode, under the
# cargo target dir $2 (further arguments go to cargo), and prints the directory holding
# the .wasm. Routes, each tried when the one before fails (a nightly may drop a flag):
#   size        nightly, std rebuilt, every size flag above   ($2/size/...)
#   size-basic  nightly, std rebuilt, immediate-abort only    ($2/size-basic/...)
#   stable      the stable build: complete, only larger        ($2/...)
# The route taken is the directory's name under $2 (see build_route).
release_wasm() {
  local manifest="$1" target="$2" name="${1#"$ROOT/"}"
  shift 2
  if [[ "${RF_STABLE_ONLY:-}" != 1 && ! -f "$TOOLCHAIN_ENV" ]] &&
    rustup component list --toolchain nightly --installed 2>/dev/null | grep -q '^rust-src'; then
    local route flags features
    for route in size size-basic; do
      flags="$SIZE_RUSTFLAGS" features=()
      if [[ "$route" == size ]]; then
        flags+=" $SIZE_RUSTFLAGS_EXTRA"
        features=("$SIZE_STD_FEATURES")
      fi
      log "cargo +nightly build --release ($name: wasm32, std rebuilt, route $route)"
      if CARGO_TARGET_DIR="$target/$route" RUSTFLAGS="$flags" cargo +nightly build \
        --manifest-path "$manifest" --lib --release --quiet --target wasm32-unknown-unknown \
        -Zbuild-std=std,panic_abort "${features[@]}" "$@"; then
        echo "$target/$route/wasm32-unknown-unknown/release"
        return
      fi
      log "route $route failed"
    done
  fi
  log "cargo build --release ($name: wasm32, stable)"
  # `|| return`: errexit does not reach into the $(...) callers run this in.
  CARGO_TARGET_DIR="$target" wasm_cargo build --manifest-path "$manifest" --lib --release --quiet "$@" || return
  echo "$target/wasm32-unknown-unknown/release"
}

# The route (size, size-basic or stable) of a directory release_wasm printed for target $2.
build_route() {
  local rel="${1#"$2"/}"
  case "$rel" in
    size/*) echo size ;;
    size-basic/*) echo size-basic ;;
    *) echo stable ;;
  esac
}
