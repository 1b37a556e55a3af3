// Node (CommonJS require): wasm-bindgen's nodejs build loads itself.
"use strict";
const { TimeoutError, CircuitOpenError, BulkheadFullError } = require("./cjs/errors.js");
module.exports = { ...require("./cjs/resilient_fetch.js"), TimeoutError, CircuitOpenError, BulkheadFullError };
