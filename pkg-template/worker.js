// Workers-like runtimes other than Cloudflare's (the "worker" condition): the wasm is
// imported as a compiled module. Instantiation only: no timers or randomness here.
import wasm from "./web/resilient_fetch_bg.wasm";
import { initSync } from "./web/resilient_fetch.js";

initSync({ module: wasm });

export { resilientFetch, ResilientClient, install, uninstall, memoryBytes } from "./web/resilient_fetch.js";
//+full export { resilientEvents } from "./web/resilient_fetch.js";
export { TimeoutError, CircuitOpenError, BulkheadFullError, RateLimitError, ThrottledError, QueuedError } from "./errors.js";
/** Resolves at once: the module is ready when its import resolves. */
export default async function ready() {}
