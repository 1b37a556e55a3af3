// Browsers, bundlers and the default condition. The wasm file is found next to
// the glue (`new URL(..., import.meta.url)`), which Vite and webpack recognise
// and emit as an asset; with esbuild, copy web/resilient_fetch_bg.wasm next to
// the bundle (README, "Using it").
import init from "./web/resilient_fetch.js";

await init();

export { resilientFetch, ResilientClient, install, uninstall, memoryBytes } from "./web/resilient_fetch.js";
export { TimeoutError, CircuitOpenError, BulkheadFullError, RateLimitError, ThrottledError, QueuedError } from "./errors.js";
/** Resolves at once: the module is ready when its import resolves. */
export default async function ready() {}
