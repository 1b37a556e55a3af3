// Node (ESM) and Deno: the wasm is read from disk synchronously at import.
import { readFileSync } from "node:fs";
import { initSync } from "./web/resilient_fetch.js";

initSync({ module: readFileSync(new URL("./web/resilient_fetch_bg.wasm", import.meta.url)) });

export * from "./web/resilient_fetch.js";
export { TimeoutError, CircuitOpenError, BulkheadFullError } from "./errors.js";
/** Resolves at once: the module is ready when its import resolves. */
export default async function ready() {}
