// CommonJS entry point (node.cjs): what require("resilient-fetch") returns.
export * from "./cjs/resilient_fetch.js";
export { TimeoutError, CircuitOpenError, BulkheadFullError, RateLimitError, ThrottledError, QueuedError } from "./cjs/errors.js";
