// Plain JS objects built for the wasm shell in one call each (events for
// onEvent, per-origin stats, the caller's init copied), instead of one
// property access per field from Rust.
// Keep the single `export { ... }` line last: the build turns it into
// `module.exports` for the CommonJS copy.

const OUTCOMES = ["response", "networkError", "timeout", "aborted"];
const STATES = ["closed", "open", "half-open"];

/**
 * An event for onEvent. Numeric fields below 0 and empty strings are absent.
 * `outcome`, `from` and `to` arrive as indexes into OUTCOMES / STATES (or -1).
 */
function makeEvent(type, origin, key, attempt, attempts, outcome, status, durationMs, delayMs, reason, retryAfter, from, to) {
  const e = { type, origin };
  if (attempt >= 0) e.attempt = attempt;
  if (key) e.idempotencyKey = key;
  if (attempts >= 0) e.attempts = attempts;
  if (outcome >= 0) e.outcome = OUTCOMES[outcome];
  if (status >= 0) e.status = status;
  if (durationMs >= 0) e.durationMs = durationMs;
  if (delayMs >= 0) e.delayMs = delayMs;
  if (reason) e.reason = reason;
  if (retryAfter >= 0) e.retryAfter = retryAfter === 1;
  if (from >= 0) e.from = STATES[from];
  if (to >= 0) e.to = STATES[to];
  return e;
}

/** Adds one origin's stats to `out` (a ClientStats object). */
function addOriginStats(out, origin, attempts, successes, failures, retries, shortCircuits, timeouts, inFlight, state, budgetTokens) {
  out[origin] = { attempts, successes, failures, retries, shortCircuits, timeouts, inFlight,
    breakerState: STATES[state], budgetTokens };
}

// The RequestInit members fetch reads, own or inherited, plain or getters.
const INIT_MEMBERS = ["body", "cache", "credentials", "duplex", "headers", "integrity", "keepalive", "method",
  "mode", "priority", "redirect", "referrer", "referrerPolicy", "window"];

/**
 * The caller's init as fetch would read it, now (not later), without its
 * signal: own enumerable properties (runtime extensions such as Workers' `cf`
 * or undici's `dispatcher` included) and every standard member, inherited or a
 * getter. Whatever a getter throws rejects the call, as with fetch.
 */
function copyInit(init) {
  if (init === undefined || init === null) return { signal: null };
  if (typeof init !== "object" && typeof init !== "function") throw new TypeError("init must be an object");
  const copy = Object.assign({}, init);
  for (const member of INIT_MEMBERS) {
    if (!(member in copy)) {
      const value = init[member];
      if (value !== undefined) copy[member] = value;
    }
  }
  copy.signal = null;
  return copy;
}

export { makeEvent, addOriginStats, copyInit };
