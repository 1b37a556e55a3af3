// The errors resilient-fetch rejects with. Real Error subclasses with stable
// names, exported from the package so that `instanceof` works. The wasm shell
// creates them through the make* functions below.
// Keep the single `export { ... }` line last: the build turns it into
// `module.exports` for the CommonJS copy.

/** An attempt, or the whole call, ran out of time. `name === "TimeoutError"`. */
class TimeoutError extends Error {
  constructor(message, timeoutMs) {
    super(message);
    this.name = "TimeoutError";
    /** The limit that ran out, in milliseconds. */
    this.timeoutMs = timeoutMs;
  }
}

/** The origin's circuit breaker is open: nothing was sent. `name === "CircuitOpenError"`. */
class CircuitOpenError extends Error {
  constructor(message, origin, retryAfterMs) {
    super(message);
    this.name = "CircuitOpenError";
    /** The origin whose breaker is open, e.g. "https://api.example.com". */
    this.origin = origin;
    /** Milliseconds until the breaker lets a probe through. */
    this.retryAfterMs = retryAfterMs;
  }
}

/** The origin's bulkhead is full (in flight and queue): nothing was sent. `name === "BulkheadFullError"`. */
class BulkheadFullError extends Error {
  constructor(message, origin) {
    super(message);
    this.name = "BulkheadFullError";
    /** The origin whose bulkhead is full. */
    this.origin = origin;
  }
}

/**
 * The origin asked to wait (its rate-limit headers say its quota is spent, or a Retry-After on
 * a 429 or 503 holds it) longer than the call may: nothing was sent. `name === "RateLimitError"`.
 */
class RateLimitError extends Error {
  constructor(message, origin, retryAfterMs, reason) {
    super(message);
    this.name = "RateLimitError";
    /** The origin that asked to wait. */
    this.origin = origin;
    /** Milliseconds until the origin may be sent to. */
    this.retryAfterMs = retryAfterMs;
    /** "quota" (rate-limit headers) or "retryAfter" (a 429 or 503's Retry-After). */
    this.reason = reason;
  }
}

/** Adaptive throttling refused the call locally (the origin rejects most of what it gets): nothing was sent. `name === "ThrottledError"`. */
class ThrottledError extends Error {
  constructor(message, origin) {
    super(message);
    this.name = "ThrottledError";
    /** The origin the call was for. */
    this.origin = origin;
  }
}

/**
 * The call got no definite answer, and its request is kept in the client's outbox (policy
 * `outbox`), to be delivered later with the same idempotency key. `name === "QueuedError"`.
 */
class QueuedError extends Error {
  constructor(message, id, idempotencyKey, reason, cause, response) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "QueuedError";
    /** The outbox entry's id (for `client.outbox.retry(id)` and `discard(id)`). */
    this.id = id;
    /** The key it is delivered with. */
    this.idempotencyKey = idempotencyKey;
    /** Why it was kept: "network", "timeout", "status", "breakerOpen", "bulkheadFull", "rateLimited", "throttled" or "deadline". */
    this.reason = reason;
    /** The last answer, when it was a transient status (reason "status"); its body is unread. */
    this.response = response;
  }
}

// The shell's constructors: the messages are written here, once. The errors
// are made without stack frames: the only frames there would be are the
// wasm's own (a rejected call's stack never reaches the caller's code anyway),
// and capturing wasm frames is what made an open breaker's rejection slow.
// Where Error.stackTraceLimit cannot be written (frozen intrinsics) or does
// not exist, the error is made as it is: making it must never throw.
function bare(make) {
  const had = Object.prototype.hasOwnProperty.call(Error, "stackTraceLimit");
  const limit = Error.stackTraceLimit;
  let changed = false;
  try {
    Error.stackTraceLimit = 0;
    changed = true;
  } catch { /* frozen: keep the stack */ }
  try {
    return make();
  } finally {
    if (changed) {
      try {
        if (had) Error.stackTraceLimit = limit; else delete Error.stackTraceLimit;
      } catch { /* nothing more to do */ }
    }
  }
}
// kind: 0 an attempt's timeoutMs, 1 the call's totalTimeoutMs, 2 bodyTimeoutMs between chunks
function makeTimeoutError(kind, timeoutMs) {
  return bare(() => new TimeoutError(kind === 1
    ? `resilientFetch: the call's deadline (totalTimeoutMs: ${timeoutMs} ms) ran out`
    : kind === 2
      ? `resilientFetch: the response body stalled (bodyTimeoutMs: ${timeoutMs} ms without a chunk)`
      : `resilientFetch: the attempt timed out (timeoutMs: ${timeoutMs} ms)`, timeoutMs));
}
function makeCircuitOpenError(origin, retryAfterMs, halfOpen) {
  return bare(() => new CircuitOpenError(halfOpen
    ? `resilientFetch: the circuit breaker for ${origin} is half-open and its probes are in flight; nothing was sent`
    : `resilientFetch: the circuit breaker for ${origin} is open; nothing was sent `
      + `(next probe in ${Math.ceil(retryAfterMs)} ms)`, origin, retryAfterMs));
}
function makeBulkheadFullError(origin) {
  return bare(() => new BulkheadFullError(`resilientFetch: the bulkhead for ${origin} is full; nothing was sent`, origin));
}

function makeRateLimitError(origin, retryAfterMs, reason) {
  return bare(() => new RateLimitError(`resilientFetch: ${origin} asked to wait ${Math.ceil(retryAfterMs)} ms (${
    reason === "quota" ? "its rate limit is spent" : "Retry-After"}), longer than this call may; nothing was sent`,
  origin, retryAfterMs, reason));
}
function makeThrottledError(origin) {
  return bare(() => new ThrottledError(`resilientFetch: ${origin} rejects most requests; throttled locally, nothing was sent`, origin));
}

function makeQueuedError(id, key, reason, cause, response, origin) {
  return bare(() => new QueuedError(`resilientFetch: ${origin} gave no definite answer (${reason}); the request is kept in the outbox `
    + `as ${id} and will be delivered later with its idempotency key`, id, key, reason, cause, response));
}

export { TimeoutError, CircuitOpenError, BulkheadFullError, RateLimitError, ThrottledError, QueuedError, makeQueuedError, makeTimeoutError, makeCircuitOpenError, makeBulkheadFullError, makeRateLimitError, makeThrottledError };
