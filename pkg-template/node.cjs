// Node (CommonJS require, and ESM import through node.mjs): wasm-bindgen's nodejs build
// loads itself.
"use strict";
const { TimeoutError, CircuitOpenError, BulkheadFullError, RateLimitError, ThrottledError, QueuedError } = require("./cjs/errors.js");
const { resilientFetch, ResilientClient, install, uninstall, memoryBytes } = require("./cjs/resilient_fetch.js");
module.exports = { resilientFetch, ResilientClient, install, uninstall, memoryBytes, TimeoutError, CircuitOpenError, BulkheadFullError, RateLimitError, ThrottledError, QueuedError };
//+full module.exports.resilientEvents = require("./cjs/resilient_fetch.js").resilientEvents;
