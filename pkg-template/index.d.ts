// ES module entry points of the lean build, "resilient-fetch" (browser.js, node.mjs, deno.mjs,
// worker.js, workerd.js). resilient-fetch/full (full/index.d.ts) adds the options of pacing,
// throttling, hedging, coalescing, shared health and the outbox, and client.outbox.
export { resilientFetch, ResilientClient, install, uninstall, memoryBytes } from "./web/resilient_fetch.js";
export type {
  AttemptContext, BreakerState, BreakerPolicy, BulkheadPolicy, ClientStats, OriginStats, Policy, ResilienceEvent,
  RetryBudgetPolicy, RetryPolicy,
} from "./web/resilient_fetch.js";
export { TimeoutError, CircuitOpenError, BulkheadFullError, RateLimitError, ThrottledError, QueuedError } from "./errors.js";

/** Resolves once the module is ready; every entry point is ready when its import resolves. */
export default function ready(): Promise<void>;
