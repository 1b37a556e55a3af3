// install(): a resilient wrapper on globalThis.fetch.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files).

// ---- install(): a resilient wrapper on globalThis.fetch, sending through the
// fetch that was there before. Clients without a `fetch` option look the global
// up at each attempt; finding the wrapper, they use what it wraps instead.
let INSTALLED = null; // { wrapper, original, client }
// What each install() wrapper wraps, by the wrapper itself (not a property a spy or a proxy
// of it would carry too), in one map every copy of this package in the realm shares (two
// versions in one app). resilient-fetch/otel reads it too (js/otel/call.js, with a copy of
// platformFetch), to send each attempt with what the client would have used.
const WRAPPED = shared("resilient-fetch wrappers", () => new WeakMap());
// On the init an attempt sends, for any copy's wrapper: this call is an attempt (CHAIN is
// this copy's own: its client ids mean nothing to another copy).
const ATTEMPT = Symbol.for("resilient-fetch attempt");

/** The realm-wide value under the registered symbol `name`, made by `make()` the first time. */
function shared(name, make) {
  const key = Symbol.for(name);
  if (!Object.prototype.hasOwnProperty.call(globalThis, key)) {
    Object.defineProperty(globalThis, key, { value: make() });
  }
  return globalThis[key];
}

// ---- platform fetch: js/otel/call.js has a copy (scripts/codes.mjs).
/** The platform's fetch now: the global, or what an install() (of any copy) wrapped. */
function platformFetch() {
  const f = globalThis.fetch;
  return WRAPPED.get(f) ?? f;
}
// ---- end of platform fetch

/** What install() wraps: the platform's fetch now (the original behind an earlier install). */
function fetchToWrap() {
  const original = platformFetch();
  if (typeof original !== "function") throw new TypeError("install(): there is no globalThis.fetch to wrap");
  return original;
}

/**
 * Puts a wrapper sending through `client` on globalThis.fetch (replacing an earlier install);
 * `client` sends through `original` (fetchToWrap()), so what wraps the wrapper later (an
 * instrumentation library) is never called by it, and the other clients' attempts that reach
 * the wrapper through it go straight to `original`. The wrapper keeps working after uninstall.
 */
function installFetch(client, original) {
  // An attempt of another client of this library that reached the global anyway (something
  // wrapped the wrapper after install(), instrumentation, and passed the attempt's init on)
  // has its own timeouts, retries and breaker: it goes on through what was wrapped, not
  // through this client's as well.
  const wrapper = function fetch(input, init) {
    let attempt = false;
    try {
      attempt = init?.[ATTEMPT] === true;
    } catch { /* client.fetch reports a bad init */ }
    // As fetch, never a synchronous throw (a freed client's TypeError rejects).
    try {
      return attempt ? original(input, init) : client.fetch(input, init);
    } catch (e) {
      return Promise.reject(e);
    }
  };
  WRAPPED.set(wrapper, original);
  try {
    globalThis.fetch = wrapper;
  } catch { /* said below */ }
  if (globalThis.fetch !== wrapper) {
    throw new TypeError("install(): globalThis.fetch cannot be replaced here (read-only); give clients a `fetch` option instead");
  }
  INSTALLED = { wrapper, original, client };
}

/** Puts the original fetch back if the wrapper is still there; returns whether it did. */
function uninstallFetch() {
  if (INSTALLED === null || globalThis.fetch !== INSTALLED.wrapper) return false;
  globalThis.fetch = INSTALLED.original;
  INSTALLED = null;
  return true;
}

export { ATTEMPT, platformFetch, fetchToWrap, installFetch, uninstallFetch };
