// The error classes every entry point exports (the same classes for import and require).

/** An attempt (`timeoutMs`) or the whole call (`totalTimeoutMs`) ran out of time. */
export class TimeoutError extends Error {
  constructor(message: string, timeoutMs: number);
  readonly name: "TimeoutError";
  /** The limit that ran out, in milliseconds. */
  readonly timeoutMs: number;
  /** With an outbox (policy `outbox`): why this call's request was not kept, when it was not. */
  readonly notQueued?: string;
}

/** The origin's circuit breaker is open: the call failed fast and nothing was sent. */
export class CircuitOpenError extends Error {
  constructor(message: string, origin: string, retryAfterMs: number);
  readonly name: "CircuitOpenError";
  /** The origin whose breaker is open, e.g. "https://api.example.com". */
  readonly origin: string;
  /** Milliseconds until the breaker lets a probe through. */
  readonly retryAfterMs: number;
  /** With an outbox (policy `outbox`): why this call's request was not kept, when it was not. */
  readonly notQueued?: string;
}

/** The origin's bulkhead (in flight and queue) is full: nothing was sent. */
export class BulkheadFullError extends Error {
  constructor(message: string, origin: string);
  readonly name: "BulkheadFullError";
  /** The origin whose bulkhead is full. */
  readonly origin: string;
  /** With an outbox (policy `outbox`): why this call's request was not kept, when it was not. */
  readonly notQueued?: string;
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
  /** With an outbox (policy `outbox`): why this call's request was not kept, when it was not. */
  readonly notQueued?: string;
}

/** Adaptive throttling (policy `throttle`) refused the call locally: nothing was sent. */
export class ThrottledError extends Error {
  constructor(message: string, origin: string);
  readonly name: "ThrottledError";
  /** The origin the call was for. */
  readonly origin: string;
  /** With an outbox (policy `outbox`): why this call's request was not kept, when it was not. */
  readonly notQueued?: string;
}

/** The call got no definite answer and its request is kept in the client's outbox (policy `outbox`), to be delivered later with the same key. */
export class QueuedError extends Error {
  constructor(message: string, id: string, idempotencyKey: string, reason: OutboxReason, cause?: unknown, response?: Response);
  readonly name: "QueuedError";
  /** The outbox entry's id (for `client.outbox.retry(id)` and `discard(id)`). */
  readonly id: string;
  /** The idempotency key it is delivered with. */
  readonly idempotencyKey: string;
  /** Why it was kept. */
  readonly reason: OutboxReason;
  /** The error the call would have rejected with, when there was one. */
  readonly cause?: unknown;
  /** The last answer, when it was a transient status (reason "status"); its body is unread. */
  readonly response?: Response;
}

/** Why a call was kept in the outbox. */
type OutboxReason =
  | "network" | "timeout" | "status" | "breakerOpen" | "bulkheadFull" | "rateLimited" | "throttled" | "deadline";
