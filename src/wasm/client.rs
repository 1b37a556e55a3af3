//! `ResilientClient` and the module-wide default client behind `resilientFetch`.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Function, Object, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::bindings::add_origin_stats;
use super::call;
use super::call::origin_of;
use super::events::state_index;
use super::options::{check_scope, decode, policy_error};
use super::types::{FetchInit, FetchInput, PolicyArg};
use crate::policy::{Policy, PolicyInput};
use crate::registry::Registry;

/// What a client owns: its policy, its per-origin state, its listener.
pub struct ClientInner {
    /// The client's policy as given; each call's policy is merged over it.
    pub policy: PolicyInput,
    /// The client's policy validated, used as is by calls that bring none
    /// (no decoding or validation per call on the common path).
    pub validated: Rc<Policy>,
    /// The client's `onEvent`, used when a call gives none.
    pub on_event: Option<Function>,
    /// Breakers, budgets, bulkheads and stats, per origin.
    pub registry: RefCell<Registry>,
}

impl ClientInner {
    fn new(policy: &JsValue) -> Result<Self, JsValue> {
        let options = decode(policy)?;
        let validated = Policy::from_input(&options.input).map_err(|e| policy_error(&e))?;
        check_scope(&options.plain, false)?;
        Ok(ClientInner {
            registry: RefCell::new(Registry::new(validated.max_origins)),
            validated: Rc::new(validated),
            policy: options.input,
            on_event: options.on_event,
        })
    }
}

thread_local! {
    // Made on first use, never at module load (Workers forbid work there).
    static DEFAULT_CLIENT: RefCell<Option<Rc<ClientInner>>> = const { RefCell::new(None) };
}

fn default_client() -> Result<Rc<ClientInner>, JsValue> {
    DEFAULT_CLIENT.with(|cell| {
        let mut slot = cell.borrow_mut();
        if let Some(client) = slot.as_ref() {
            return Ok(client.clone());
        }
        let client = Rc::new(ClientInner::new(&JsValue::UNDEFINED)?);
        *slot = Some(client.clone());
        Ok(client)
    })
}

/// Reads the caller's arguments now, as `fetch` does, then runs the call.
fn spawn(
    client: Rc<ClientInner>,
    input: FetchInput,
    init: Option<FetchInit>,
    policy: Option<PolicyArg>,
) -> Promise {
    let init = init.map_or(JsValue::UNDEFINED, Into::into);
    let policy = policy.map_or(JsValue::UNDEFINED, Into::into);
    match call::prepare(client, input.into(), init, policy) {
        Ok(prepared) => future_to_promise(call::execute(prepared)),
        Err(error) => Promise::reject(&error),
    }
}

/// `fetch`, made resilient: per-attempt timeouts, retries with full jitter,
/// a circuit breaker per origin, a retry budget and idempotency keys.
/// Calls share one module-wide client (and so its breakers).
#[wasm_bindgen(js_name = resilientFetch, unchecked_return_type = "Promise<Response>")]
pub fn resilient_fetch(
    input: FetchInput,
    init: Option<FetchInit>,
    policy: Option<PolicyArg>,
) -> Promise {
    match default_client() {
        Ok(client) => spawn(client, input, init, policy),
        Err(e) => Promise::reject(&e),
    }
}

/// A client with its own policy, breakers, budgets and stats.
#[wasm_bindgen]
pub struct ResilientClient {
    inner: Rc<ClientInner>,
}

#[wasm_bindgen]
impl ResilientClient {
    /// A client whose calls use `policy` (each call may override it).
    /// Throws a `RangeError`/`TypeError` naming the field for an invalid policy.
    #[wasm_bindgen(constructor)]
    pub fn new(policy: Option<PolicyArg>) -> Result<ResilientClient, JsValue> {
        let inner = ClientInner::new(&policy.map_or(JsValue::UNDEFINED, Into::into))?;
        Ok(ResilientClient {
            inner: Rc::new(inner),
        })
    }

    /// `fetch` through this client; `policy` overrides the client's, field by field.
    #[wasm_bindgen(unchecked_return_type = "Promise<Response>")]
    pub fn fetch(
        &self,
        input: FetchInput,
        init: Option<FetchInit>,
        policy: Option<PolicyArg>,
    ) -> Promise {
        spawn(self.inner.clone(), input, init, policy)
    }

    /// The breaker state of `origin` (a URL or an origin): "closed", "open" or "half-open".
    #[wasm_bindgen(js_name = breakerState, unchecked_return_type = "BreakerState")]
    pub fn breaker_state(&self, origin: &str) -> Result<String, JsValue> {
        let key = origin_of(origin)?;
        let state = self
            .inner
            .registry
            .borrow()
            .breaker_state(&key, super::env::now());
        Ok(state.as_str().to_string())
    }

    /// Counters and state per origin.
    #[wasm_bindgen(unchecked_return_type = "ClientStats")]
    pub fn stats(&self) -> JsValue {
        let out: JsValue = Object::new().into();
        for snapshot in self.inner.registry.borrow().stats(super::env::now()) {
            let s = &snapshot.stats;
            add_origin_stats(
                &out,
                &snapshot.origin,
                s.attempts as f64,
                s.successes as f64,
                s.failures as f64,
                s.retries as f64,
                s.short_circuits as f64,
                s.timeouts as f64,
                f64::from(s.in_flight),
                state_index(snapshot.breaker),
                f64::from(snapshot.budget_tokens),
            );
        }
        out
    }

    /// Forgets the state of `origin`, or of every origin when none is given.
    pub fn reset(&self, origin: Option<String>) -> Result<(), JsValue> {
        let key = match origin {
            Some(o) => Some(origin_of(&o)?),
            None => None,
        };
        self.inner.registry.borrow_mut().reset(key.as_deref());
        Ok(())
    }
}

/// Bytes of linear memory the module holds now (diagnostics: it grows with
/// live clients and calls, and must not grow with calls that have settled).
#[wasm_bindgen(js_name = memoryBytes)]
pub fn memory_bytes() -> f64 {
    (core::arch::wasm32::memory_size(0) * 65536) as f64
}
