// Node (ESM import): the very module require("resilient-fetch") loads (node.cjs), so that
// a program mixing import and require gets one instance: one set of breakers and budgets,
// and the same error classes for instanceof.
import api from "./node.cjs";

export const {
  resilientFetch, ResilientClient, install, uninstall, memoryBytes, TimeoutError, CircuitOpenError, BulkheadFullError, RateLimitError, ThrottledError, QueuedError,
} = api;
//+full export const { resilientEvents } = api;
/** Resolves at once: the module is ready when its import resolves. */
export default async function ready() {}
