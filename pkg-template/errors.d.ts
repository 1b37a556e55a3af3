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
