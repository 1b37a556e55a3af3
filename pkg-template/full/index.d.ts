// ES module entry points of resilient-fetch/full, every capability (full/browser.js, node.mjs,
// deno.mjs, worker.js; workerd.js adds workerd.d.ts).
export { resilientFetch, ResilientClient, install, uninstall, memoryBytes } from "./web/resilient_fetch.js";
export type {
  AttemptContext, BreakerState, BreakerPolicy, BulkheadPolicy, ClientStats, OriginStats, Policy, ResilienceEvent,
  RetryBudgetPolicy, RetryPolicy, RateLimitPolicy, ThrottlePolicy, HedgePolicy,
  Outbox, OutboxPolicy, OutboxStore, OutboxEntry, OutboxReason, OutboxFlush, SharePolicy,
} from "./web/resilient_fetch.js";
export { TimeoutError, CircuitOpenError, BulkheadFullError, RateLimitError, ThrottledError, QueuedError } from "./errors.js";

/** Resolves once the module is ready; every entry point is ready when its import resolves. */
export default function ready(): Promise<void>;
