// Plain JS objects built for the wasm shell in one call each (events for
// onEvent, per-origin stats), instead of one property set per field from Rust.
// Keep the single `export { ... }` line last: the build turns it into
// `module.exports` for the CommonJS copy.

const OUTCOMES = ["response", "networkError", "timeout", "aborted", "invalidRequest", "invalidResponse"];
const STATES = ["closed", "open", "half-open"];

/**
 * An event for onEvent. Numeric fields below 0 and empty strings are absent.
 * `outcome`, `from` and `to` arrive as indexes into OUTCOMES / STATES (or -1).
 */
function makeEvent(type, origin, key, attempt, attempts, outcome, status, durationMs, delayMs, reason, retryAfter, from, to,
  timeoutMs) {
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
  if (timeoutMs >= 0) e.timeoutMs = timeoutMs;
  return e;
}

/** Calls an onEvent listener: what it throws, or the promise it returns rejects with, is dropped. */
function callListener(listener, event) {
  try {
    const result = listener(event);
    if (result !== null && typeof result === "object" && typeof result.then === "function") {
      result.then(undefined, () => {});
    }
  } catch { /* a listener must not disturb the call */ }
}

/** Adds one origin's stats to `out` (a ClientStats object). */
function addOriginStats(out, origin, attempts, successes, failures, retries, shortCircuits, timeouts, inFlight, state, budgetTokens) {
  out[origin] = { attempts, successes, failures, retries, shortCircuits, timeouts, inFlight,
    breakerState: STATES[state], budgetTokens };
}

export { makeEvent, callListener, addOriginStats };
