//! The shell's part of coalescing (wasm32, feature `coalesce`): which calls may join a flight,
//! what makes two calls the same request, joining one (`coalesce.js`), and the option's
//! TypeScript declarations.

use js_sys::Promise;
use wasm_bindgen::prelude::*;

use crate::policy::Policy;
use crate::vocab::Method;

// Coalescing identical reads in flight (coalesce.js, joined into js/joined/arguments.js).
#[wasm_bindgen(module = "/js/joined/arguments.js")]
unsafe extern "C" {
    /// What makes two calls the same request (method, URL, headers, request options): `request`
    /// is the general path's, undefined on the fast path.
    #[wasm_bindgen(js_name = flightKey)]
    fn flight_key(method: &str, input: &JsValue, init: &JsValue, request: &JsValue) -> String;
    /// Joins client `client`'s flight of `key`, or starts it with `start()`, which returns
    /// [the call's promise, a function that aborts it] (called when every caller has left);
    /// resolves with this caller's own response.
    #[wasm_bindgen(js_name = joinFlight)]
    fn join_flight(client: u32, key: &str, signal: &JsValue, start: &JsValue) -> Promise;
}

/// A read that may join an identical one in flight (policy `coalesce`). The call runs with
/// no signal of its own: it is aborted (`AbortState::fire`) when every caller has left.
pub(crate) struct Joinable {
    /// What makes two calls the same request.
    key: String,
    /// The caller's signal (it detaches this caller only), or undefined.
    caller: JsValue,
}

/// The flight a call joins or starts: a GET or HEAD whose policy coalesces, keyed by its
/// `method`, `input`, `init` (the caller's copy) and `request` (the general path's, none on the
/// fast path); `signal` is the caller's.
pub(crate) fn flight(
    policy: &Policy,
    method: &str,
    input: &JsValue,
    init: &JsValue,
    request: Option<&JsValue>,
    signal: Option<&JsValue>,
) -> Option<Joinable> {
    if !(policy.coalesce && Method(method).may_coalesce()) {
        return None;
    }
    let none = JsValue::UNDEFINED;
    Some(Joinable {
        key: flight_key(method, input, init, request.unwrap_or(&none)),
        caller: signal.cloned().unwrap_or(none),
    })
}

impl Joinable {
    /// Joins this flight on client `client`, or starts it: `start` runs the call and gives its
    /// promise and what aborts it (called when every caller has left). Resolves with this
    /// caller's own response.
    pub(crate) fn join<S, A>(self, client: u32, start: S) -> Promise
    where
        S: FnOnce() -> (Promise, A) + 'static,
        A: FnOnce() + 'static,
    {
        // Called by joinFlight only when this call starts a flight. A call that joins
        // another's is dropped here, with the handle (not left for the garbage collector).
        let start: Closure<dyn FnMut() -> js_sys::Array> = Closure::once(move || {
            let (promise, abort) = start();
            js_sys::Array::of2(&promise, &Closure::once_into_js(abort))
        });
        join_flight(client, &self.key, &self.caller, start.as_ref())
    }
}

/// The options of coalesced reads (feature `coalesce`): merged into `Policy` in the builds that have it.
#[wasm_bindgen(typescript_custom_section)]
const COALESCE_TYPES: &str = r#"
export interface Policy {
  /**
   * A GET or HEAD without a body, identical to one in flight on the same client (URL, headers and
   * request options), is not sent again: it waits for that one and resolves with its own clone of
   * the response (the first call's policy applies). A caller that aborts leaves alone; the request
   * is aborted when every caller has. Nothing is kept after it settles. @default false
   */
  coalesce?: boolean;
}
"#;
