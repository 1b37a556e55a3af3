//! JS globals bound directly, never through `window`, so one build runs in
//! browsers, web workers, Cloudflare Workers, Deno and Node: the glue calls
//! plain `performance.now()`, `new Request(...)`, and the snippets in `js/`
//! call plain `fetch(...)`.

use js_sys::Promise;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
unsafe extern "C" {
    /// The platform's `Request` class.
    #[wasm_bindgen(js_name = Request, thread_local_v2)]
    static REQUEST_CLASS: js_sys::Function;

    /// Monotonic milliseconds (`performance.now()`).
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    pub fn performance_now() -> f64;
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
    /// A `TimeoutError`: of the whole call (`deadline`) or of one attempt.
    #[wasm_bindgen(js_name = makeTimeoutError)]
    pub fn make_timeout_error(deadline: bool, timeout_ms: f64) -> JsValue;
    /// A `CircuitOpenError` for `origin`.
    #[wasm_bindgen(js_name = makeCircuitOpenError)]
    pub fn make_circuit_open_error(origin: &str, retry_after_ms: f64) -> JsValue;
    /// A `BulkheadFullError` for `origin`.
    #[wasm_bindgen(js_name = makeBulkheadFullError)]
    pub fn make_bulkhead_full_error(origin: &str) -> JsValue;
}

// The caller's arguments, each read once (input and init, the signal, the policy),
// and each attempt's send (js/arguments.js).
#[wasm_bindgen(module = "/js/arguments.js")]
unsafe extern "C" {
    /// `[init copy without signal, caller's signal, fast origin | null, fast method | null,
    /// body is a stream]`. Throws what reading the init throws.
    #[wasm_bindgen(js_name = readArguments, catch)]
    pub fn read_arguments(input: &JsValue, init: &JsValue) -> Result<js_sys::Array, JsValue>;
    /// `fetch(input, init)` with `init.signal = signal`.
    #[wasm_bindgen(js_name = sendDirect, catch)]
    pub fn send_direct(
        input: &JsValue,
        init: &JsValue,
        signal: &JsValue,
    ) -> Result<Promise, JsValue>;
    /// Gives the fast path's init (which has no headers of the caller's) the one
    /// header `name: value`.
    #[wasm_bindgen(js_name = setOnlyHeader)]
    pub fn set_only_header(init: &js_sys::Object, name: &str, value: &str);
    /// The status of what `fetch` resolved with; a `TypeError` if it is not a
    /// `Response` (a mock or polyfill may resolve with anything).
    #[wasm_bindgen(js_name = statusOf, catch)]
    pub fn status_of(response: &JsValue) -> Result<u16, JsValue>;
    /// `fetch(request, { signal })`, the request's referrer and policy kept.
    #[wasm_bindgen(js_name = sendRequest, catch)]
    pub fn send_request(request: &web_sys::Request, signal: &JsValue) -> Result<Promise, JsValue>;
    /// The caller's abort reason: `signal.reason`, or an `AbortError` where a
    /// polyfilled signal has none.
    #[wasm_bindgen(js_name = abortReason)]
    pub fn abort_reason(signal: &web_sys::AbortSignal) -> JsValue;
    /// Aborting `signal` aborts `controller` while `response` (its attempt's) lives.
    #[wasm_bindgen(js_name = keepAbortable)]
    pub fn keep_abortable(
        signal: &web_sys::AbortSignal,
        controller: &web_sys::AbortController,
        response: &JsValue,
    );
    /// The policy argument, read once: `[plain copy without onEvent, onEvent or
    /// undefined]`; throws a `TypeError` naming the field for what no policy holds,
    /// and whatever a getter throws.
    #[wasm_bindgen(js_name = readPolicy, catch)]
    pub fn read_policy(policy: &JsValue) -> Result<js_sys::Array, JsValue>;
}

// Event and stats objects, built in one call each (js/objects.js).
#[wasm_bindgen(module = "/js/objects.js")]
unsafe extern "C" {
    /// An `onEvent` event; negative numbers and empty strings mean "absent".
    #[wasm_bindgen(js_name = makeEvent)]
    pub fn make_event(
        kind: &str,
        origin: &str,
        key: &str,
        attempt: i32,
        attempts: i32,
        outcome: i32,
        status: i32,
        duration_ms: f64,
        delay_ms: f64,
        reason: &str,
        retry_after: i32,
        from: i32,
        to: i32,
    ) -> JsValue;
    /// Adds one origin's stats to `out`.
    #[wasm_bindgen(js_name = addOriginStats)]
    pub fn add_origin_stats(
        out: &JsValue,
        origin: &str,
        attempts: f64,
        successes: f64,
        failures: f64,
        retries: f64,
        short_circuits: f64,
        timeouts: f64,
        in_flight: f64,
        state: i32,
        budget_tokens: f64,
    );
}
