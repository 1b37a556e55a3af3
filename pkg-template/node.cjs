// Node (CommonJS require, and ESM import through node.mjs): wasm-bindgen's nodejs build
// loads itself.
"use strict";
const { TimeoutError, CircuitOpenError, BulkheadFullError, RateLimitError, ThrottledError, QueuedError } = require("./cjs/errors.js");
const glue = require("./cjs/resilient_fetch.js");
// A call with no policy of its own reads its arguments before it enters the wasm (js/request.js
// readFirst): the client's `fetch` and the module-wide one.
const resilientFetch = require("./cjs/snippets/[crate]/js/joined/arguments.js").readFirst(glue.ResilientClient, glue.moduleClient);
const { ResilientClient, install, uninstall, memoryBytes } = glue;
module.exports = { resilientFetch, ResilientClient, install, uninstall, memoryBytes, TimeoutError, CircuitOpenError, BulkheadFullError, RateLimitError, ThrottledError, QueuedError };
//+full module.exports.resilientEvents = require("./cjs/resilient_fetch.js").resilientEvents;
