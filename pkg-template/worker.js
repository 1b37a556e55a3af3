// Workers-like runtimes other than Cloudflare's (the "worker" condition): the wasm is
// imported as a compiled module. Instantiation only: no timers or randomness here.
import wasm from "./web/resilient_fetch_bg.wasm";
import * as glue from "./web/resilient_fetch.js";
import { readFirst } from "./web/snippets/[crate]/js/joined/arguments.js";

glue.initSync({ module: wasm });

// A call with no policy of its own reads its arguments before it enters the wasm (js/request.js
// readFirst): the client's `fetch` and the module-wide one.
export const resilientFetch = readFirst(glue.ResilientClient, glue.moduleClient);
export { ResilientClient, install, uninstall, memoryBytes } from "./web/resilient_fetch.js";
//+full export { resilientEvents } from "./web/resilient_fetch.js";
export { TimeoutError, CircuitOpenError, BulkheadFullError, RateLimitError, ThrottledError, QueuedError } from "./errors.js";
/** Resolves at once: the module is ready when its import resolves. */
export default async function ready() {}
