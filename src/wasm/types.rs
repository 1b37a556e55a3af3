//! The TypeScript face of the package: argument types and the named
//! interfaces of the options, each field with its default; the events and stats
//! (`types/events.rs`), and a capability's own in its folder (the outbox's in
//! `src/outbox/types.rs`), each a section of the same declarations.
//! Defaults here must match `src/policy.rs` (tests/core_ts_defaults.rs compares them).

use wasm_bindgen::prelude::*;

mod events;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = r#"
/** Breaker state of one origin. */
export type BreakerState = "closed" | "open" | "half-open";

/** How a call may fail well. Every field is optional; a call's policy overrides its client's, field by field. */
export interface Policy {
  /** Time limit of one attempt, in ms (1..=2147483647). Aborts that attempt's request. @default 10000 */
  timeoutMs?: number;
  /**
   * Time limit of the whole call in ms (1..=2147483647): attempts, waits, and reading the body
   * of the response it resolves with (a read still waiting for data then rejects with a TimeoutError). @default 30000
   */
  totalTimeoutMs?: number;
  /**
   * Longest wait for the next chunk of the response body, in ms (1..=2147483647); `false`: the body
   * is bounded neither by this nor by totalTimeoutMs (server-sent events, long downloads). @default 10000
   */
  bodyTimeoutMs?: number | false;
  /** Retries of transient failures; `false` turns them off, `true` means the defaults. @default {} (all defaults) */
  retry?: boolean | RetryPolicy;
  /** The per-origin circuit breaker; `false` turns it off. @default {} (failure-rate mode, all defaults) */
  breaker?: boolean | BreakerPolicy;
  /** The per-origin retry budget (token bucket); `false` turns it off. @default {} (all defaults) */
  retryBudget?: boolean | RetryBudgetPolicy;
  /** The per-origin concurrency limit. @default false (off) */
  bulkhead?: boolean | BulkheadPolicy;
  /**
   * Unset: an automatic UUID v4 key for POST and PATCH (same key on every retry), in browsers only
   * to the page's own origin (a cross-origin server may refuse the header's preflight);
   * `true`: the same, cross-origin too; a string (1..=255 visible ASCII characters): this key,
   * for any method; `false`: none. A header of that name set by the caller is kept (a blank one
   * is no key: such a request is never repeated). @default automatic (same-origin in browsers)
   */
  idempotencyKey?: boolean | string;
  /** Name of the idempotency key header (an HTTP token, 1..=64 chars). @default "Idempotency-Key" */
  idempotencyHeader?: string;
  /** Most origins a client keeps state for; the least recently used is evicted (1..=1000000). @default 1000 */
  maxOrigins?: number;
  /** Called with every event of the call. A listener that throws or rejects does not break the call. */
  onEvent?: (event: ResilienceEvent) => void | Promise<void>;
  /** The fetch to send with. @default globalThis.fetch, looked up at each attempt (what install() wrapped, if installed) */
  fetch?: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
}

export interface RetryPolicy {
  /** Attempts in all, counting the first (1..=20). @default 3 */
  maxAttempts?: number;
  /** Backoff base in ms: retry n waits within min(maxDelayMs, baseDelayMs * 2^n) (0..=2147483647). @default 100 */
  baseDelayMs?: number;
  /** Backoff cap in ms (>= baseDelayMs, ..=2147483647). @default 10000 */
  maxDelayMs?: number;
  /** "full": uniform in [0, window); "equal": window/2 + uniform [0, window/2); "decorrelated"; "none". @default "full" */
  jitter?: "full" | "equal" | "decorrelated" | "none";
  /** Statuses that are retried (400..=599). @default [408, 429, 500, 502, 503, 504] */
  retryOn?: number[];
  /** Longest Retry-After honoured, in ms (0..=2147483647); a longer one ends the call with that response. It also caps an origin-wide hold and how far ahead a rate-limit reset is believed. @default 30000 */
  maxRetryAfterMs?: number;
  /**
   * Called after every attempt (but one the caller aborted): `true` retries, `false` stops (this
   * outcome is the call's), `undefined` keeps the built-in answer; may return a promise of one,
   * which the call's deadline and signal bound. It never overrides the safety rules: an unsafe
   * request without a key is not repeated, and maxAttempts, the deadline, the budget, the breaker
   * and Retry-After still apply. If it throws, the call rejects with what it threw.
   */
  shouldRetry?: (ctx: AttemptContext) => boolean | undefined | void | Promise<boolean | undefined | void>;
}

/** What retry.shouldRetry and breaker.isFailure are told of an attempt that ended. */
export interface AttemptContext {
  /** The attempt, from 1. */
  attempt: number;
  /** The request's method. */
  method: string;
  /** The request's URL. */
  url: string;
  /** The response, when one arrived: a clone (made when first read), so the caller's body stays whole. */
  response?: Response;
  /** The error, when none arrived (network error, TimeoutError). */
  error?: unknown;
  /** Since the call started, in ms. */
  elapsedMs: number;
  /** Until the call's deadline, in ms. */
  remainingMs: number;
  /** The call's idempotency key, if it has one. */
  idempotencyKey?: string;
}

export interface BreakerPolicy {
  /**
   * "consecutive": open after failureThreshold failures in a row; "failure-rate": open on a rate over a
   * sliding window. Unset: "consecutive" if failureThreshold is given, else "failure-rate". A field of
   * the other mode is an error. @default "failure-rate"
   */
  mode?: "consecutive" | "failure-rate";
  /** consecutive mode: failures in a row that open the breaker (1..=1000). @default 5 */
  failureThreshold?: number;
  /** Time the breaker stays open before it lets probes through, in ms (1..=2147483647). @default 5000 */
  cooldownMs?: number;
  /**
   * The longest a cooldown grows to, in ms (>= cooldownMs, ..=2147483647): each reopening after a failed
   * probe doubles the cooldown, then draws it from the upper half of that (jitter, so a fleet's probes
   * spread), never below cooldownMs; a close starts again from cooldownMs. @default cooldownMs
   */
  maxCooldownMs?: number;
  /** Concurrent probes while half-open (1..=1000). @default 1 */
  halfOpenMaxCalls?: number;
  /** failure-rate mode: the rate that opens it, in (0, 1]. @default 0.5 */
  failureRateThreshold?: number;
  /** failure-rate mode: calls the window must hold before it can open (1..=windowSize for a count window, 1..=1000 for a time window). @default 10 */
  minimumCalls?: number;
  /** failure-rate mode: "count" (the last windowSize calls) or "time" (the last windowMs). @default "time" */
  windowType?: "count" | "time";
  /** failure-rate mode, count window: calls (1..=1000). @default 20 */
  windowSize?: number;
  /** failure-rate mode, time window: ms (1..=2147483647). @default 30000 */
  windowMs?: number;
  /**
   * failure-rate mode: an attempt whose headers took longer than this many ms (1..=2147483647) is slow,
   * whether it failed or not, and a slow half-open probe reopens the breaker. Unset: no slow-call rule.
   */
  slowCallMs?: number;
  /** failure-rate mode, with slowCallMs: the slow share of the window that opens it, in (0, 1]. @default 1 */
  slowCallRateThreshold?: number;
  /**
   * Whether this outcome counts against the origin's breaker: `true`, `false`, or `undefined` for the
   * built-in rule (network errors, timeouts, 5xx, 429, 408). Synchronous; if it throws, the built-in rule.
   */
  isFailure?: (ctx: AttemptContext) => boolean | undefined | void;
  /**
   * Names a call's breaker, retry budget and stats entry (default: its origin), e.g. by path:
   * `(url, method) => new URL(url).origin + new URL(url).pathname.split("/").slice(0, 2).join("/")`.
   * A string of 1 to 256 characters (else the call rejects with a TypeError or RangeError naming
   * breaker.key); maxOrigins bounds how many are kept. Events, errors (`origin`), stats(),
   * breakerState() and reset() name the key. Synchronous; if it throws, the call rejects with that.
   */
  key?: (url: string, method: string) => string;
}

export interface RetryBudgetPolicy {
  /** Tokens per origin; the bucket starts full (1..=1000000). @default 500 */
  capacity?: number;
  /** Tokens a retry after an error status costs (0..=capacity). @default 5 */
  retryCost?: number;
  /** Tokens a retry after a timeout or network error costs (0..=capacity). @default 10 */
  timeoutRetryCost?: number;
  /** Tokens a success with no retry gives back (0..=capacity). @default 1 */
  noRetryIncrement?: number;
}

export interface BulkheadPolicy {
  /** Calls in flight per origin (1..=100000). @default 10 */
  maxConcurrent?: number;
  /** Calls waiting for a slot per origin; beyond that a call is rejected (0..=100000). @default 0 */
  maxQueue?: number;
}
"#;

#[wasm_bindgen]
unsafe extern "C" {
    /// What `fetch` takes as its first argument (spelled without the DOM-only `RequestInfo`,
    /// so Node's and Workers' type packages declare it too).
    #[wasm_bindgen(typescript_type = "string | URL | Request")]
    pub type FetchInput;
    /// What `fetch` takes as its second argument.
    #[wasm_bindgen(typescript_type = "RequestInit")]
    pub type FetchInit;
    /// A policy object.
    #[wasm_bindgen(typescript_type = "Policy")]
    pub type PolicyArg;
}
