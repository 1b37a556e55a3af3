#!/usr/bin/env bash
# Sets up everything the build and the tests need, on a fresh machine or an
# old one: the wasm32 target, wasm-bindgen-cli at the crate's exact version,
# Chromium + chromedriver, and the Node tools in tools/. Idempotent: each step
# checks first and says what it does.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }
APT_UPDATED=""
apt_update_once() {
  if [[ -z "$APT_UPDATED" ]]; then as_root apt-get update -qq; APT_UPDATED=1; fi
}
apt_install() {
  apt_update_once
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null
}

ensure_wasm_target() {
  if rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
    rm -f "$TOOLCHAIN_ENV"
    log "wasm32-unknown-unknown: installed"
    return
  fi
  log "wasm32-unknown-unknown: rustup target add"
  if [[ -z "${RF_FORCE_DEBIAN_TOOLCHAIN:-}" ]] && rustup target add wasm32-unknown-unknown; then
    rm -f "$TOOLCHAIN_ENV"
    return
  fi
  # Fallback: Debian's toolchain, std rebuilt from source for wasm32.
  log "rustup target unavailable: falling back to Debian's rustc-web (std built from source)"
  apt_install rustc-web cargo-web rust-web-src lld-22
  rustup toolchain list | grep -q '^deb-web' || rustup toolchain link deb-web /usr
  mkdir -p "$(dirname "$TOOLCHAIN_ENV")"
  cat > "$TOOLCHAIN_ENV" <<ENV
RUSTUP_TOOLCHAIN=deb-web
RUSTC_BOOTSTRAP=1
CARGO_UNSTABLE_BUILD_STD=std,panic_abort
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER=wasm-ld-22
ENV
}

ensure_wasm_bindgen() {
  [[ -f "$ROOT/Cargo.lock" ]] || cargo generate-lockfile --manifest-path "$ROOT/Cargo.toml"
  local want have
  want="$(wasm_bindgen_version)"
  [[ -n "$want" ]] || die "no wasm-bindgen in Cargo.lock"
  have="$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)"
  if [[ "$have" == "$want" ]]; then
    log "wasm-bindgen-cli $want: installed"
    return
  fi
  log "wasm-bindgen-cli $want: cargo install (about 8 minutes cold)"
  # No --locked: the CLI's lockfile pins a crate version the registry lacks.
  cargo install wasm-bindgen-cli --version "$want" --force
}

# Optional: a nightly toolchain with rust-src lets the release build rebuild
# std with panics that abort at once (no panic messages or formatting in the
# wasm). Without it, scripts/build.sh builds with stable; nothing else needs it.
ensure_nightly_src() {
  [[ -f "$TOOLCHAIN_ENV" || "${RF_STABLE_ONLY:-}" == 1 ]] && return
  if rustup component list --toolchain nightly --installed 2>/dev/null | grep -q '^rust-src'; then
    log "nightly + rust-src (size build): installed"
    return
  fi
  log "nightly + rust-src (size build): rustup install (optional)"
  if ! rustup toolchain install nightly --profile minimal --component rust-src --target wasm32-unknown-unknown \
      >/dev/null 2>&1 && ! rustup component add rust-src --toolchain nightly >/dev/null 2>&1; then
    log "nightly unavailable: release builds will use stable (larger wasm)"
  fi
}

ensure_chromium() {
  if [[ -x /usr/bin/chromium && -x /usr/bin/chromedriver ]]; then
    log "chromium + chromedriver: installed"
    return
  fi
  log "chromium + chromedriver: apt-get install"
  apt_install chromium chromium-driver
}

# Node 18, the oldest Node the package supports, for the runtime tests: Debian's
# own build, downloaded and unpacked into the cache (not installed: the
# machine's Node stays as it is). Skipped where apt has no Node 18.
ensure_node18() {
  local dir="$CACHE_DIR/node18"
  if [[ -x "$dir/node" ]]; then
    log "node 18 (runtime tests): ready"
    return
  fi
  if ! command -v apt-get >/dev/null; then
    log "node 18 (runtime tests): no apt here, those tests will be skipped"
    return
  fi
  apt_update_once
  local version
  version="$(apt-cache madison nodejs | awk '$3 ~ /^18\./ { print $3; exit }')"
  if [[ -z "$version" ]]; then
    log "node 18 (runtime tests): not in the package lists, those tests will be skipped"
    return
  fi
  log "node 18 (runtime tests): apt-get download nodejs=$version and its libraries, unpacked in the cache"
  # Debian's Node 18 loads acorn, cjs-module-lexer and undici from /usr/share/nodejs:
  # those three library packages are installed (they do not touch the machine's node).
  apt_install node-acorn node-cjs-module-lexer node-undici
  rm -rf "$dir" && mkdir -p "$dir"
  (cd "$dir" && apt-get download -qq "nodejs=$version" "libnode108=$version" libuv1 libc-ares2 2>/dev/null &&
    for deb in *.deb; do dpkg -x "$deb" root; done) || { log "node 18: download failed, tests skipped"; return; }
  printf '#!/bin/sh\nLD_LIBRARY_PATH="%s" exec "%s" "$@"\n' \
    "$dir/root/usr/lib/x86_64-linux-gnu" "$dir/root/usr/bin/node" > "$dir/node"
  chmod +x "$dir/node"
  "$dir/node" -e 'fetch' >/dev/null || { rm -f "$dir/node"; log "node 18: does not run here, tests skipped"; }
}

ensure_node_tools() {
  command -v node >/dev/null || die "Node.js >= 18 is required"
  local major
  major="$(node -p 'process.versions.node.split(".")[0]')"
  (( major >= 18 )) || die "Node.js >= 18 is required (found $(node --version))"
  local stamp="$ROOT/tools/node_modules/.installed"
  if [[ -f "$stamp" && "$stamp" -nt "$ROOT/tools/package-lock.json" ]]; then
    log "node tools: installed"
    return
  fi
  log "node tools: npm install in tools/ (as locked)"
  # Not `npm ci`: it rejects the lock for an optional Windows-only dependency
  # of vite that the registry here does not carry. --no-save keeps the lock as is.
  (cd "$ROOT/tools" && npm install --no-save --no-audit --no-fund --loglevel=error)
  touch "$stamp"
}

what="${1:-all}"
case "$what" in
  build) ensure_wasm_target; ensure_wasm_bindgen; ensure_nightly_src; ensure_node_tools ;;
  all) ensure_wasm_target; ensure_wasm_bindgen; ensure_nightly_src; ensure_chromium; ensure_node_tools; ensure_node18 ;;
  *) die "usage: toolchain.sh [build|all]" ;;
esac
