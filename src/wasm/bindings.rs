//! JS globals bound directly, never through `window`, so one build runs in
//! browsers, web workers, Cloudflare Workers, Deno and Node: the glue then
//! calls plain `fetch(...)`, `performance.now()`, `new Request(...)`.

use js_sys::Promise;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
unsafe extern "C" {
    /// The platform `fetch` on `globalThis`.
    #[wasm_bindgen(js_name = fetch, catch)]
    pub fn global_fetch(
        input: &web_sys::Request,
        init: &web_sys::RequestInit,
    ) -> Result<Promise, JsValue>;

    /// The platform's `Request` class.
    #[wasm_bindgen(js_name = Request, thread_local_v2)]
    static REQUEST_CLASS: js_sys::Function;

    /// Monotonic milliseconds (`performance.now()`).
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    pub fn performance_now() -> f64;

    /// `ReadableStream`, to recognise bodies that cannot be sent twice.
    #[wasm_bindgen(js_name = ReadableStream)]
    pub type ReadableStream;
}

/// `new Request(input, init)`: parses the URL and normalises the call exactly
/// as `fetch` would (a bad URL throws the platform's `TypeError`).
pub fn new_request(input: &JsValue, init: &JsValue) -> Result<web_sys::Request, JsValue> {
    let args = js_sys::Array::of2(input, init);
    REQUEST_CLASS
        .with(|class| js_sys::Reflect::construct(class, &args))
        .map(JsCast::unchecked_into)
}

// The package's error classes (js/errors.js), so `instanceof` works for users.
#[wasm_bindgen(module = "/js/errors.js")]
unsafe extern "C" {
    #[wasm_bindgen(js_name = makeTimeoutError)]
    pub fn make_timeout_error(message: &str, timeout_ms: f64) -> JsValue;
    #[wasm_bindgen(js_name = makeCircuitOpenError)]
    pub fn make_circuit_open_error(message: &str, origin: &str, retry_after_ms: f64) -> JsValue;
    #[wasm_bindgen(js_name = makeBulkheadFullError)]
    pub fn make_bulkhead_full_error(message: &str, origin: &str) -> JsValue;
}
