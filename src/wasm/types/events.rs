//! The TypeScript declarations of the events given to `onEvent`, and of `stats()`.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const EVENT_TYPES: &str = r#"
/**
 * One event of a call, as given to `onEvent`: a union discriminated by `type`, so
 * `if (e.type === "retry") e.delayMs` is a number. Fields an event type does not have read
 * as `undefined` (`e.attempt ?? ""` works on any event).
 */
export type ResilienceEvent =
  | AttemptStartEvent | AttemptEndEvent | RetryEvent | GiveUpEvent | BreakerTransitionEvent
  | ShortCircuitEvent | BulkheadRejectedEvent | RateLimitWaitEvent | RateLimitRejectedEvent
  | ThrottledEvent | BodyTimeoutEvent | HedgeEvent | SuccessEvent | OfflineEvent
  | QueuedEvent | ReplayedEvent | DeliveredEvent | DeadLetteredEvent | StaleEvent;

/** The fields of every event type; each type sets its own. */
interface EventFields {
  /** The origin of the call, e.g. "http://127.0.0.1:8080". */
  origin: string;
  attempt?: undefined;
  idempotencyKey?: undefined;
  attempts?: undefined;
  outcome?: undefined;
  status?: undefined;
  durationMs?: undefined;
  delayMs?: undefined;
  reason?: undefined;
  timeoutMs?: undefined;
  retryAfter?: undefined;
  from?: undefined;
  to?: undefined;
  probability?: undefined;
  id?: undefined;
  ageMs?: undefined;
}
type EventOf<T> = Omit<EventFields, keyof T> & T;

/** An attempt is about to be sent. */
export type AttemptStartEvent = EventOf<{
  type: "attemptStart";
  /** The attempt, from 1. */
  attempt: number;
  /** The Idempotency-Key it carries (the same on every attempt of a call). */
  idempotencyKey?: string;
}>;

/** An attempt ended. */
export type AttemptEndEvent = EventOf<{
  type: "attemptEnd";
  /** The attempt, from 1. */
  attempt: number;
  /**
   * "response", "networkError", "timeout", "aborted", "invalidRequest" (fetch refused the
   * arguments or threw) or "invalidResponse" (fetch resolved with something that is not a Response).
   */
  outcome: "response" | "networkError" | "timeout" | "aborted" | "invalidRequest" | "invalidResponse";
  /** The response status, when there was a response. */
  status?: number;
  /** How long the attempt took, in ms. */
  durationMs: number;
}>;

/** A retry is scheduled. */
export type RetryEvent = EventOf<{
  type: "retry";
  /** The attempt about to start. */
  attempt: number;
  /** The wait before it, in ms. */
  delayMs: number;
  /** What made the last attempt worth retrying ("shouldRetry": the caller's hook said so). */
  reason: "status" | "network" | "timeout" | "shouldRetry";
  /** Whether the wait came from the response's Retry-After. */
  retryAfter: boolean;
}>;

/** The call ends with a failure it will not retry. */
export type GiveUpEvent = EventOf<{
  type: "giveUp";
  /** Why ("shouldRetry": the caller's hook said not to, or threw). */
  reason: "maxAttempts" | "budget" | "deadline" | "notRetryable" | "unsafeMethod" | "retryAfterTooLong"
    | "breakerOpen" | "shouldRetry" | "rateLimit" | "throttled";
  /** Attempts made. */
  attempts: number;
}>;

/** The origin's breaker changed state. */
export type BreakerTransitionEvent = EventOf<{
  type: "breakerTransition";
  /** The state left. */
  from: BreakerState;
  /** The state entered. */
  to: BreakerState;
  /**
   * Why it opened (to "open" only): "failures" (failureThreshold in a row), "failureRate", "slowCallRate",
   * "probe" (a half-open probe failed, or was slow), "peer" (a shared breaker's peer opened).
   */
  reason?: OpenReason;
}>;

/** Why a breaker opened. */
export type OpenReason = "failures" | "failureRate" | "slowCallRate" | "probe" | "peer";

/**
 * An attempt failed while the runtime was offline (`navigator.onLine` false): it counts against no
 * breaker and no budget, and the call waits for the `online` event (at most until its deadline),
 * then sends `attempt`.
 */
export type OfflineEvent = EventOf<{
  type: "offline";
  /** The attempt that goes once the network is back. */
  attempt: number;
}>;

/** The breaker refused a call: nothing was sent. */
export type ShortCircuitEvent = EventOf<{
  type: "shortCircuit";
  /** Ms until the breaker lets a probe through. */
  delayMs: number;
}>;

/** The bulkhead and its queue were full: nothing was sent. */
export type BulkheadRejectedEvent = EventOf<{ type: "bulkheadRejected" }>;

/** A call waits for its origin before sending: its quota is spent, or a Retry-After holds it. */
export type RateLimitWaitEvent = EventOf<{
  type: "rateLimitWait";
  /** The wait, in ms. */
  delayMs: number;
  /** "quota" (rate-limit headers said none left until the reset) or "retryAfter" (a 429 or 503 said when). */
  reason: "quota" | "retryAfter";
}>;

/** A call is rejected without sending: its origin's wait is longer than rateLimit.maxWaitMs or its deadline. */
export type RateLimitRejectedEvent = EventOf<{
  type: "rateLimitRejected";
  /** Ms until the origin may be sent to. */
  delayMs: number;
  /** Why the origin waits. */
  reason: "quota" | "retryAfter";
}>;

/** Adaptive throttling refused an attempt locally: nothing was sent. */
export type ThrottledEvent = EventOf<{
  type: "throttled";
  /** The refusal probability it was drawn against, in (0, 1). */
  probability: number;
}>;

/** The body of the response a call resolved with was cut off. */
export type BodyTimeoutEvent = EventOf<{
  type: "bodyTimeout";
  /** The limit that ran out, in ms. */
  timeoutMs: number;
  /** "idle" (bodyTimeoutMs between chunks) or "deadline" (totalTimeoutMs). */
  reason: "idle" | "deadline";
}>;

/** A hedge is sent beside the attempts still in flight (policy hedge). */
export type HedgeEvent = EventOf<{
  type: "hedge";
  /** The hedge's attempt number. */
  attempt: number;
  /** The hedge delay that passed without an answer, in ms. */
  delayMs: number;
}>;

/** The call ends with an answer not worth retrying that is not a failure (e.g. 200, 404). */
export type SuccessEvent = EventOf<{
  type: "success";
  /** Attempts made. */
  attempts: number;
}>;

/** The call got no definite answer: its request is kept in the outbox. */
export type QueuedEvent = EventOf<{
  type: "queued";
  /** The entry's id. */
  id: string;
  idempotencyKey: string;
  /** Why it was kept. */
  reason: OutboxReason;
}>;

/** A kept request is sent again. */
export type ReplayedEvent = EventOf<{
  type: "replayed";
  id: string;
  /** Attempts so far, this one and the original call's included. */
  attempt: number;
}>;

/** A kept request got its answer (2xx or 3xx) and left the outbox. */
export type DeliveredEvent = EventOf<{
  type: "delivered";
  id: string;
  status: number;
}>;

/** A kept request will not be sent again: refused (a 4xx but 408, 409, 429), too old, or unsendable. */
export type DeadLetteredEvent = EventOf<{
  type: "deadLettered";
  id: string;
  reason: "status" | "expired" | "invalid";
  /** The refusal's status (reason "status"). */
  status?: number;
}>;

/** A kept answer is served instead of the call's failure (policy stale). */
export type StaleEvent = EventOf<{
  type: "stale";
  /** The answer's age when served, in ms (its `Age` header is this in whole seconds). */
  ageMs: number;
  /** The failure it stands in for (also the value of its `resilient-fetch-stale` header). */
  reason: StaleReason;
}>;

/** The failure a kept answer stands in for (policy stale). */
export type StaleReason =
  | "networkError" | "timeout" | "breakerOpen" | "throttled" | "rateLimit" | "deadline" | "status";

/** Counters and state of one origin. */
export interface OriginStats {
  attempts: number;
  successes: number;
  failures: number;
  retries: number;
  shortCircuits: number;
  timeouts: number;
  inFlight: number;
  breakerState: BreakerState;
  /** Why the breaker opened, while it is open or half-open (the rule that tripped it, or "peer"). */
  openedBy?: OpenReason;
  budgetTokens: number;
  /** Attempts not sent because the origin's rate-limit wait was too long for their call (first attempts reject with RateLimitError). */
  rateLimited: number;
  /** Attempts adaptive throttling refused locally. */
  throttled: number;
  /** Ms a call must wait before sending to this origin now (0: none). */
  waitMs: number;
  /** Requests left in the origin's rate-limit window, when its headers said (else absent). */
  quotaRemaining?: number;
  /** Hedges sent (attempts beside one still in flight). */
  hedges: number;
  /** Calls a hedge answered first. */
  hedgeWins: number;
  /** Attempts that failed while the runtime was offline (neither failures nor held against the breaker). */
  offline: number;
  /** Calls served a kept answer instead of their failure (policy stale). */
  stale: number;
}

/** Stats per origin ("scheme://host[:port]"). */
export type ClientStats = Record<string, OriginStats>;
"#;
