// ES module entry points of resilient-fetch/full, every capability (full/browser.js, node.mjs,
// deno.mjs, worker.js; workerd.js adds workerd.d.ts).
export { resilientFetch, resilientEvents, ResilientClient, install, uninstall, memoryBytes } from "./web/resilient_fetch.js";
export type {
  AttemptContext, BreakerState, BreakerPolicy, BulkheadPolicy, ClientStats, OpenReason, OriginStats, Policy, ResilienceEvent,
  RetryBudgetPolicy, RetryPolicy, RateLimitPolicy, ThrottlePolicy, HedgePolicy,
  Outbox, OutboxPolicy, OutboxStore, OutboxEntry, OutboxReason, OutboxFlush, SharePolicy,
  EventsPolicy, EventStream, ServerSentEvent, ServerSentMessageEvent,
} from "./web/resilient_fetch.js";
export { TimeoutError, CircuitOpenError, BulkheadFullError, RateLimitError, ThrottledError, QueuedError } from "./errors.js";

/**
 * Resolves once the wasm is ready: at once in Node, Deno and Workers (their import instantiates it);
 * in the browser entry, whose import does not wait, when its fetch and compile are done (calls made
 * before wait for it by themselves). Rejects if the wasm cannot be loaded.
 */
export default function ready(): Promise<void>;
