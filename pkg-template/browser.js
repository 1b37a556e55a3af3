// Browsers, bundlers (Vite, webpack, esbuild) and the default condition.
// The wasm file is found next to the glue (`new URL(..., import.meta.url)`),
// which bundlers recognise and emit as an asset; no configuration needed.
import init from "./web/resilient_fetch.js";

await init();

export * from "./web/resilient_fetch.js";
export { TimeoutError, CircuitOpenError, BulkheadFullError } from "./errors.js";
/** Resolves at once: the module is ready when its import resolves. */
export default async function ready() {}
