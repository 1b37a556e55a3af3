// The error classes every entry point exports (the same classes for import and require).

/** An attempt (`timeoutMs`) or the whole call (`totalTimeoutMs`) ran out of time. */
export class TimeoutError extends Error {
  constructor(message: string, timeoutMs: number);
  readonly name: "TimeoutError";
  /** The limit that ran out, in milliseconds. */
  readonly timeoutMs: number;
}

/** The origin's circuit breaker is open: the call failed fast and nothing was sent. */
export class CircuitOpenError extends Error {
  constructor(message: string, origin: string, retryAfterMs: number);
  readonly name: "CircuitOpenError";
  /** The origin whose breaker is open, e.g. "https://api.example.com". */
  readonly origin: string;
  /** Milliseconds until the breaker lets a probe through. */
  readonly retryAfterMs: number;
}

/** The origin's bulkhead (in flight and queue) is full: nothing was sent. */
export class BulkheadFullError extends Error {
  constructor(message: string, origin: string);
  readonly name: "BulkheadFullError";
  /** The origin whose bulkhead is full. */
  readonly origin: string;
}

/** The origin asked to wait (rate-limit quota spent, or Retry-After on a 429/503) longer than the call may: nothing was sent. */
export class RateLimitError extends Error {
  constructor(message: string, origin: string, retryAfterMs: number, reason: "quota" | "retryAfter");
  readonly name: "RateLimitError";
  /** The origin that asked to wait. */
  readonly origin: string;
  /** Milliseconds until the origin may be sent to. */
  readonly retryAfterMs: number;
  /** "quota" (its rate-limit headers) or "retryAfter" (a 429 or 503's Retry-After). */
  readonly reason: "quota" | "retryAfter";
}

/** Adaptive throttling (policy `throttle`) refused the call locally: nothing was sent. */
export class ThrottledError extends Error {
  constructor(message: string, origin: string);
  readonly name: "ThrottledError";
  /** The origin the call was for. */
  readonly origin: string;
}
