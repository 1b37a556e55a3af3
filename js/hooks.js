// The caller's functions (onEvent, shouldRetry, isFailure), called so that nothing they do reaches the wasm.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files).
import { SETTLER } from "./send.js";
import { HOOK_SAID_NO, HOOK_SAID_YES, HOOK_SAID_DEFAULT } from "./errors.js";

// ---- the caller's functions, called so that nothing they do reaches the wasm.

/** Calls an onEvent listener: what it throws, or the promise it returns rejects with, is dropped. */
function callListener(listener, event) {
  try {
    const result = listener(event);
    if (result !== null && typeof result === "object" && typeof result.then === "function") {
      result.then(undefined, () => {});
    }
  } catch { /* a listener must not disturb the call */ }
}

/**
 * `object` with each of `values` that is given (not undefined, not NaN) under its name in
 * `names` (space-separated, in order; src/wasm/events.rs). A duration (a name ending in Ms) is
 * whole milliseconds, rounded up: the core's clock has fractions.
 */
function fill(object, names, values) {
  names.split(" ").forEach((name, i) => {
    const value = values[i];
    if (value !== undefined && value === value) object[name] = name.endsWith("Ms") ? Math.ceil(value) : value;
  });
  return object;
}

/** An event as onEvent gets it: { type, origin }, then `values` under `names` (fill). */
function makeEvent(type, origin, names, ...values) {
  return fill({ type, origin }, names, values);
}

/**
 * Adds `origin`'s entry to `stats` (what stats() returns): its breaker's state, why it opened
 * (while open or half-open; "" otherwise), then `values` (numbers) under `names` (fill).
 */
function statsEntry(stats, origin, breakerState, openedBy, names, values) {
  const entry = (stats[origin] = { breakerState });
  if (openedBy) entry.openedBy = openedBy;
  fill(entry, names, values);
}

/**
 * What retry.shouldRetry and breaker.isFailure see of an attempt that ended. The response
 * is a clone made when first read, so the body the caller gets stays whole.
 */
function hookContext(attempt, method, input, output, isResponse, elapsedMs, remainingMs, key) {
  // Whole milliseconds: the time spent rounded up, the time left rounded down (never overstated).
  const ctx = { attempt, method, url: typeof input === "string" ? input : input.url,
    elapsedMs: Math.ceil(elapsedMs), remainingMs: Math.floor(remainingMs) };
  if (key !== undefined) ctx.idempotencyKey = key;
  if (isResponse) {
    let copy;
    Object.defineProperty(ctx, "response", { enumerable: true, get: () => (copy ??= output.clone()) });
    // Once the hook has answered, a clone it left unread is cancelled, so its branch of the
    // body does not buffer the whole body (a stream, a download) for nobody.
    ctx[RELEASE] = () => { if (copy !== undefined) discardBody(copy); };
  } else {
    ctx.error = output;
  }
  return ctx;
}
const RELEASE = Symbol("resilient-fetch release");

/** breaker.isFailure(ctx): true, false, or undefined (the built-in rule; also when it throws). */
function askIsFailure(hook, ctx) {
  try {
    const answer = hook(ctx);
    return said(answer);
  } catch {
    return HOOK_SAID_DEFAULT;
  } finally {
    ctx[RELEASE]?.();
  }
}

/**
 * retry.shouldRetry(ctx), awaited; settles (slot, generation) with HOOK_SAID_YES (retry),
 * HOOK_SAID_NO (stop) or HOOK_SAID_DEFAULT (the built-in answer), or fails with what the hook threw or its promise rejected with.
 */
function askShouldRetry(hook, ctx, slot, generation) {
  const settler = SETTLER;
  new Promise((resolve) => resolve(hook(ctx))).then(
    (answer) => settler(slot, generation, true, said(answer), 0, 0),
    (error) => settler(slot, generation, false, error, 0, 0)).finally(() => ctx[RELEASE]?.());
}

/** A hook's answer as a HOOK_SAID_ code. */
function said(answer) {
  return answer === true ? HOOK_SAID_YES : answer === false ? HOOK_SAID_NO : HOOK_SAID_DEFAULT;
}

/** Cancels a response's body nobody will read; a failure to cancel is harmless. */
function discardBody(response) {
  try {
    const body = response?.body;
    if (body && !body.locked) body.cancel().catch(() => {});
  } catch { /* not a Response (a mock's), or already gone */ }
}

export { callListener, makeEvent, statsEntry, hookContext, askIsFailure, askShouldRetry, discardBody };
