//! JS globals bound directly, never through `window`, so one build runs in
//! browsers, web workers, Cloudflare Workers, Deno and Node: the glue calls
//! plain `performance.now()`, and the snippets in `js/` call plain `fetch(...)`
//! and `new Request(...)`. What is done to JS objects (requests, headers, URLs) is
//! done in the snippets, one call each; the wasm keeps the decisions.

use js_sys::Promise;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
unsafe extern "C" {
    /// Monotonic milliseconds (`performance.now()`).
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    pub fn performance_now() -> f64;
}

// The package's error classes (js/errors.js), so `instanceof` works for users.
#[wasm_bindgen(module = "/js/errors.js")]
unsafe extern "C" {
    /// A `TimeoutError` of the limit `kind` (a [`TimeoutKind`](super::codes::TimeoutKind)):
    /// of one attempt, of the whole call or of a body that stalled, for the limit `timeout_ms`.
    #[wasm_bindgen(js_name = makeTimeoutError)]
    pub fn make_timeout_error(kind: u8, timeout_ms: f64) -> JsValue;
    /// A `CircuitOpenError` for `origin` (the JS string the call's arguments gave: not copied
    /// out of the wasm again); `half_open`: its probes are in flight.
    #[wasm_bindgen(js_name = makeCircuitOpenError)]
    pub fn make_circuit_open_error(
        origin: &JsValue,
        retry_after_ms: f64,
        half_open: bool,
    ) -> JsValue;
    /// A `BulkheadFullError` for `origin`.
    #[wasm_bindgen(js_name = makeBulkheadFullError)]
    pub fn make_bulkhead_full_error(origin: &str) -> JsValue;
    /// A `RateLimitError` for `origin`: it may be sent to in `retry_after_ms`; `reason` is
    /// "quota" or "retryAfter".
    #[wasm_bindgen(js_name = makeRateLimitError)]
    pub fn make_rate_limit_error(origin: &str, retry_after_ms: f64, reason: &str) -> JsValue;
}

// The caller's arguments, each read once (input and init, the signal, the policy),
// each attempt's send, install() (js/joined/arguments.js).
#[wasm_bindgen(module = "/js/joined/arguments.js")]
unsafe extern "C" {
    /// The caller's arguments read for a call of client `client`: the numbers packed as
    /// [`Read`](super::codes::Read) says, the objects handed to the taker
    /// (src/wasm/arguments.rs), with `call`'s promise (as [`call_promise`] makes it) once all
    /// is read. Throws what reading the init or building the request throws (fetch's
    /// `TypeError`), a `TypeError` for a scheme fetch does not send, and one for a call that
    /// sends through itself.
    #[wasm_bindgen(js_name = readArguments, catch)]
    pub fn read_arguments(
        input: &JsValue,
        init: &JsValue,
        client: u32,
        call: Option<u32>,
    ) -> Result<u32, JsValue>;
    /// Gives JS the callback `readArguments` hands what it read to (src/wasm/arguments.rs).
    #[wasm_bindgen(js_name = setTaker)]
    pub fn set_taker(taker: &js_sys::Function);
    /// The value of `request`'s header `name`, if it has one.
    #[wasm_bindgen(js_name = headerOf)]
    pub fn header_of(request: &JsValue, name: &str) -> Option<String>;
    /// The registry key an origin (or a URL of one) names; a `TypeError` saying what an
    /// origin is for anything else.
    #[wasm_bindgen(js_name = originKey, catch)]
    pub fn origin_key(value: &JsValue) -> Result<String, JsValue>;
    /// Sets the call's key header: on `request` (false when its mode keeps it from being
    /// set), or with `request` undefined as the fast path's init's only header.
    #[wasm_bindgen(js_name = setKey, catch)]
    pub fn set_key(
        request: &JsValue,
        init: &js_sys::Object,
        header: &str,
        key: &str,
    ) -> Result<bool, JsValue>;
    /// The error `new Request(input, init)` throws, or undefined.
    #[wasm_bindgen(js_name = requestError)]
    pub fn request_error(input: &JsValue, init: &JsValue) -> JsValue;
    /// One attempt: `fetch(input, init)` (the fast path's URL and init), or
    /// `fetch(request, { signal })` when `init` is undefined (a built request, its referrer
    /// kept, cloned first when `how` has [`SendFlag::Replay`](super::codes::SendFlag) and it has
    /// a body; with `SendFlag::Hedge`, the HTTP cache bypassed unless the caller chose a mode),
    /// with the signal of a new `AbortController` (returned: the attempt's, ours from then on),
    /// through `fetch_fn` (undefined: the platform's),
    /// limited to `ms` (then the controller is aborted and the attempt settles with a
    /// `TimeoutError`, see [`is_timeout`]); it settles through the settler under (`slot`,
    /// `generation`), an answer with what `statusOf` says of it (with `SendFlag::Rates`, its
    /// `rates`); throws what fetch throws synchronously.
    #[wasm_bindgen(js_name = sendAttempt, catch)]
    pub fn send(
        fetch_fn: &JsValue,
        input: &JsValue,
        init: &JsValue,
        how: u32,
        chain: &JsValue,
        ms: u32,
        deadline: bool,
        limit_ms: f64,
        slot: u32,
        generation: u32,
    ) -> Result<web_sys::AbortController, JsValue>;
    /// A call's promise, under `id` until [`end_call`] settles it (src/wasm/settle.rs `promise_with`).
    #[wasm_bindgen(js_name = callPromise)]
    pub fn call_promise(id: u32) -> Promise;
    /// Settles the call promise `id`: fulfils it with `value` when `ok`, else rejects it.
    #[wasm_bindgen(js_name = endCall)]
    pub fn end_call(id: u32, ok: bool, value: &JsValue);
    /// Fulfils the call promise `id` with `response` guarded as [`guard_response`] guards it
    /// (the arguments after `id` are its): one crossing for both.
    #[wasm_bindgen(js_name = endGuarded)]
    pub fn end_guarded(
        id: u32,
        response: &JsValue,
        controller: &web_sys::AbortController,
        signal: &JsValue,
        deadline: f64,
        total_ms: f64,
        idle_ms: f64,
        expire: &js_sys::Function,
        origin: &JsValue,
        on_event: &JsValue,
    );
    /// Gives JS the callback through which attempts settle (src/wasm/settle.rs).
    #[wasm_bindgen(js_name = setSettler)]
    pub fn set_settler(settler: &js_sys::Function);
    /// Whether an attempt rejected because its limit ran out (the `TimeoutError` it made).
    #[wasm_bindgen(js_name = isTimeout)]
    pub fn is_timeout(error: &JsValue) -> bool;
    /// Whether the runtime says it has no network now (`navigator.onLine` is false).
    #[wasm_bindgen(js_name = isOffline)]
    pub fn is_offline() -> bool;
    /// Reports the next `online` event to the settler under (`slot`, `generation`) (never
    /// where there is none).
    #[wasm_bindgen(js_name = onlineWait)]
    pub fn online_wait(slot: u32, generation: u32);
    /// `fetch(input, init)` as the caller gave them, for URLs that are no server's.
    #[wasm_bindgen(js_name = sendLocal, catch)]
    pub fn send_local(
        fetch_fn: &JsValue,
        input: &JsValue,
        init: &JsValue,
    ) -> Result<Promise, JsValue>;
    /// The status of what `fetch` resolved with; a `TypeError` if it is not a
    /// `Response` (a mock or polyfill may resolve with anything).
    /// (Plus [`StatusFlag::Limits`](super::codes::StatusFlag) when it carries a `Retry-After` on an error status or, with `rates`,
    /// rate-limit headers: then [`limits_of`] reads them.)
    #[wasm_bindgen(js_name = statusOf, catch)]
    pub fn status_of(response: &JsValue, rates: bool) -> Result<u32, JsValue>;
    /// What a response says of its origin's limits: undefined, or `[Retry-After (only when
    /// `error`), RateLimit, RateLimit-Policy, remaining, reset, limit]` (strings or undefined;
    /// the rate-limit ones only when `rates`).
    #[wasm_bindgen(js_name = limitsOf)]
    pub fn limits_of(response: &JsValue, error: bool, rates: bool) -> JsValue;
    /// Calls `listener(event)`; what it throws, or the promise it returns rejects with, is dropped.
    #[wasm_bindgen(js_name = callListener)]
    pub fn call_listener(listener: &js_sys::Function, event: &JsValue);
    /// The event `{ type, origin }` with `a`..`d` under the space-separated `names`, in order
    /// (an undefined one left out).
    #[wasm_bindgen(js_name = makeEvent)]
    pub fn make_event(
        kind: &str,
        origin: &str,
        names: &str,
        a: &JsValue,
        b: &JsValue,
        c: &JsValue,
        d: &JsValue,
    ) -> JsValue;
    /// Adds `origin`'s entry to `stats`: `{ breakerState, openedBy }` (an empty `opened_by` left
    /// out), then `values` (an array of numbers) under the space-separated `names`, in order (a
    /// NaN left out).
    #[wasm_bindgen(js_name = statsEntry)]
    pub fn stats_entry(
        stats: &js_sys::Object,
        origin: &str,
        breaker_state: &str,
        opened_by: &str,
        names: &str,
        values: &JsValue,
    );
    /// What `retry.shouldRetry` and `breaker.isFailure` see of an ended attempt.
    #[wasm_bindgen(js_name = hookContext)]
    pub fn hook_context(
        attempt: u32,
        method: &str,
        input: &JsValue,
        output: &JsValue,
        is_response: bool,
        elapsed_ms: f64,
        remaining_ms: f64,
        key: Option<String>,
    ) -> JsValue;
    /// `breaker.isFailure(ctx)` as a [`HookSaid`](super::codes::HookSaid): failure, not, or
    /// the built-in rule (also if it throws).
    #[wasm_bindgen(js_name = askIsFailure)]
    pub fn ask_is_failure(hook: &js_sys::Function, ctx: &JsValue) -> i32;
    /// `retry.shouldRetry(ctx)`, awaited, settling (`slot`, `generation`) with a
    /// [`HookSaid`](super::codes::HookSaid) (retry, stop, the built-in answer), or failing with
    /// what the hook threw.
    #[wasm_bindgen(js_name = askShouldRetry)]
    pub fn ask_should_retry(hook: &js_sys::Function, ctx: &JsValue, slot: u32, generation: u32);
    /// Cancels a response's body nobody will read (unless it is locked); a failure to
    /// cancel is harmless and dropped.
    #[wasm_bindgen(js_name = discardBody)]
    pub fn discard_body(response: &JsValue);
    /// Whether a send failed for a reason of the caller's setup (a call sending through itself).
    #[wasm_bindgen(js_name = isLocalError)]
    pub fn is_local_error(error: &JsValue) -> bool;
    /// Whether a request to `origin` is cross-origin under CORS (false outside browsers).
    #[wasm_bindgen(js_name = crossOrigin)]
    pub fn cross_origin(origin: &str) -> bool;
    /// The `fetch` that `install()` wraps (the original behind an earlier install); a
    /// `TypeError` when there is none.
    #[wasm_bindgen(js_name = fetchToWrap, catch)]
    pub fn fetch_to_wrap() -> Result<js_sys::Function, JsValue>;
    /// Puts a wrapper sending through `client` (which sends through `original`) on
    /// `globalThis.fetch`; a `TypeError` when the global cannot be replaced.
    #[wasm_bindgen(js_name = installFetch, catch)]
    pub fn install_fetch(client: JsValue, original: &js_sys::Function) -> Result<(), JsValue>;
    /// Puts the original `fetch` back; false if the wrapper is no longer there.
    #[wasm_bindgen(js_name = uninstallFetch)]
    pub fn uninstall_fetch() -> bool;
    /// The policy argument, read once: `[plain copy without functions, the function
    /// fields, the held objects]` (see `options::decode`); throws a `TypeError` naming the
    /// field for what no policy holds, and whatever a getter throws.
    #[wasm_bindgen(js_name = readPolicy, catch)]
    pub fn read_policy(policy: &JsValue) -> Result<js_sys::Array, JsValue>;
}

// The caller's signal, and the response handed back (js/body.js).
#[wasm_bindgen(module = "/js/body.js")]
unsafe extern "C" {
    /// The caller's abort reason: `signal.reason`, or an `AbortError` where a
    /// polyfilled signal has none.
    #[wasm_bindgen(js_name = abortReason)]
    pub fn abort_reason(signal: &JsValue) -> JsValue;
    /// Whether `signal` has aborted (a getter that throws: not aborted).
    #[wasm_bindgen(js_name = isAborted)]
    pub fn is_aborted(signal: &JsValue) -> bool;
    /// Calls `f` once when `signal` aborts; one listener per signal for all its watchers.
    #[wasm_bindgen(js_name = watchSignal)]
    pub fn watch_signal(signal: &JsValue, f: &js_sys::Function);
    /// Stops calling `f` for `signal`.
    #[wasm_bindgen(js_name = unwatchSignal)]
    pub fn unwatch_signal(signal: &JsValue, f: &js_sys::Function);
    /// The response handed back, its body bounded by `deadline` (performance.now() ms or
    /// Infinity) and `idle_ms` (0: none) and stopped by `signal` (or undefined);
    /// `expire(isDeadline, ms, origin, onEvent)` counts a cut and returns its error.
    #[wasm_bindgen(js_name = guardResponse)]
    pub fn guard_response(
        response: &JsValue,
        controller: &web_sys::AbortController,
        signal: &JsValue,
        deadline: f64,
        total_ms: f64,
        idle_ms: f64,
        expire: &js_sys::Function,
        origin: &JsValue,
        on_event: &JsValue,
    ) -> JsValue;
}
