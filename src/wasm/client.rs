//! `ResilientClient` and the module-wide default client behind `resilientFetch`.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Function, Promise};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use super::bindings::origin_key;
use super::bindings::{fetch_to_wrap, install_fetch, make_timeout_error, uninstall_fetch};
use super::call;
use super::codes::TimeoutKind;
use super::events::{emit, stats_to_js};
use super::options::{Asked, decode, policy_error};
use super::state::ClientInner;
use super::types::{FetchInit, FetchInput, PolicyArg};
use crate::events::Event;
use crate::outbox::{self, Outbox};
use crate::owner::Owner;
use crate::policy::Policy;
use crate::registry::Registry;
use crate::share::shell::{self as share, Peer};

thread_local! {
    static NEXT_ID: Cell<u32> = const { Cell::new(0) };
}

impl ClientInner {
    /// A client of `policy`, sending through `default_fetch` where the policy names no `fetch`.
    fn new(policy: &JsValue, default_fetch: Option<Function>) -> Result<Rc<Self>, JsValue> {
        let options = decode(policy)?;
        let validated = Policy::from_input(&options.input).map_err(|e| policy_error(&e))?;
        options
            .input
            .check_scope(false)
            .map_err(|e| policy_error(&e))?;
        let id = NEXT_ID.with(|n| {
            n.set(n.get().wrapping_add(1));
            n.get()
        });
        Ok(Rc::new_cyclic(|weak: &std::rc::Weak<ClientInner>| {
            let mut registry = Registry::new(validated.max_origins);
            let sharing = share::open(&validated, options.share_object, weak, &mut registry);
            let outbox = (validated.outbox.clone())
                .map(|policy| Outbox::open(policy, options.outbox, weak.clone()));
            let stale = crate::stale::Store::new(validated.stale.as_ref(), options.stale);
            let weak = weak.clone();
            let expire = Closure::new(
                move |deadline: bool, ms: f64, origin: String, on_event: JsValue| {
                    if let Some(client) = weak.upgrade() {
                        client.count_body_timeout(&origin, ms, deadline, &on_event);
                    }
                    make_timeout_error(
                        if deadline {
                            TimeoutKind::Call
                        } else {
                            TimeoutKind::Body
                        } as u8,
                        ms,
                    )
                },
            );
            ClientInner {
                id,
                fetch: options.fetch.or(default_fetch),
                asked: Asked::of(&options.hooks, &validated),
                hooks: options.hooks,
                expire,
                registry: Owner::new(registry),
                sharing,
                outbox,
                stale,
                validated: Rc::new(validated),
                policy: options.input,
                on_event: options.on_event,
            }
        }))
    }

    /// The registry's name `value` gives (breakerState, reset): with `breaker.key`, a string
    /// such a key may be (1 to 256 characters), as it is; else the origin it names.
    fn name_of(&self, value: &JsValue) -> Result<String, JsValue> {
        if self.asked.key.is_some()
            && let Some(name) = value.as_string()
        {
            crate::policy::check_key(&crate::policy::Value::String(name.clone()))
                .map_err(|e| policy_error(&e))?;
            return Ok(name);
        }
        origin_key(value)
    }

    /// A response body of `origin` was cut off after its call resolved: a timeout in
    /// `stats()` and a `bodyTimeout` event.
    fn count_body_timeout(&self, origin: &str, ms: f64, deadline: bool, on_event: &JsValue) {
        // Called from a body's timer, never while the registry is in use.
        let back = crate::owner::Returned::BodyTimedOut;
        self.registry.update(origin, None, back);
        if let Some(listener) = on_event.dyn_ref::<Function>() {
            let event = Event::BodyTimeout {
                timeout_ms: ms,
                deadline,
            };
            emit(listener, origin, None, &event);
        }
    }
}

impl Peer for ClientInner {
    fn registry(&self) -> &Owner {
        &self.registry
    }
    fn policy(&self) -> &Rc<Policy> {
        &self.validated
    }
    fn on_event(&self) -> Option<&Function> {
        self.on_event.as_ref()
    }
}

impl outbox::Host for ClientInner {
    fn replay(self: Rc<Self>, request: JsValue) -> Promise {
        call::replay(self, request)
    }
    fn outbox(&self) -> Option<&Outbox> {
        self.outbox.as_ref()
    }
    fn on_event(&self) -> Option<&Function> {
        self.on_event.as_ref()
    }
}

thread_local! {
    // Made on first use, never at module load (Workers forbid work there).
    static DEFAULT_CLIENT: RefCell<Option<Rc<ClientInner>>> = const { RefCell::new(None) };
}

/// The module-wide client (`resilientFetch`'s, and `resilientEvents`'), made on first use.
pub(crate) fn default_client() -> Result<Rc<ClientInner>, JsValue> {
    DEFAULT_CLIENT.with(|cell| {
        let mut slot = cell.borrow_mut();
        if let Some(client) = slot.as_ref() {
            return Ok(client.clone());
        }
        let client = ClientInner::new(&JsValue::UNDEFINED, None)?;
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
    // No policy crosses as none: not asked of JS.
    call::start(client, input.into(), init, policy.map(Into::into), true)
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

/// The module-wide client behind `resilientFetch`, as a `ResilientClient` (js/request.js
/// `readFirst` calls through it).
#[wasm_bindgen(js_name = moduleClient, skip_typescript)]
pub fn module_client() -> Result<ResilientClient, JsValue> {
    Ok(ResilientClient {
        inner: default_client()?,
    })
}

/// A client with its own policy, breakers, budgets and stats.
#[wasm_bindgen]
pub struct ResilientClient {
    /// What the client owns (the outbox's getter is in src/outbox/shell.rs).
    pub(crate) inner: Rc<ClientInner>,
}

#[wasm_bindgen]
impl ResilientClient {
    /// A client whose calls use `policy` (each call may override it).
    /// Throws a `RangeError`/`TypeError` naming the field for an invalid policy.
    #[wasm_bindgen(constructor)]
    pub fn new(policy: Option<PolicyArg>) -> Result<ResilientClient, JsValue> {
        let inner = ClientInner::new(&policy.map_or(JsValue::UNDEFINED, Into::into), None)?;
        Ok(ResilientClient { inner })
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
    pub fn breaker_state(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] origin: JsValue,
    ) -> Result<JsValue, JsValue> {
        let key = self.inner.name_of(&origin)?;
        let state = self
            .inner
            .registry
            .read()
            .ok_or_else(busy)?
            .breaker_state(&key, super::env::now());
        // A JS string made from the name, not a Rust `String` handed out (its copy and free).
        Ok(state.as_str().into())
    }

    /// Counters and state per origin.
    #[wasm_bindgen(unchecked_return_type = "ClientStats")]
    pub fn stats(&self) -> JsValue {
        let snapshots = match self.inner.registry.read() {
            Some(registry) => registry.stats(super::env::now()),
            None => Vec::new(),
        };
        stats_to_js(&snapshots)
    }

    /// This client's id, for js/request.js `readFirst` (it names the client in chains of
    /// calls); asked once per client, before its first call, it gives JS the taker too.
    #[wasm_bindgen(js_name = _id, skip_typescript)]
    pub fn id(&self) -> u32 {
        super::arguments::give_taker();
        self.inner.id
    }

    /// Starts call `call` (its promise made by JS, which returns it) with what js/request.js
    /// `readFirst` read of `input` and `init` before it entered: `said`, and the objects it has
    /// just handed the taker (src/wasm/arguments.rs). Settles the call's promise whatever
    /// happens, and throws nothing.
    #[wasm_bindgen(js_name = _enter, skip_typescript)]
    pub fn enter(&self, said: u32, call: u32, input: JsValue, init: JsValue) {
        call::start_read(self.inner.clone(), input, init, said, call);
    }

    /// Forgets the state of `origin`, or of every origin when none is given.
    pub fn reset(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "string")] origin: Option<JsValue>,
    ) -> Result<(), JsValue> {
        let key = match origin.filter(|o| !o.is_null()) {
            Some(origin) => Some(self.inner.name_of(&origin)?),
            None => None,
        };
        self.inner
            .registry
            .free()
            .ok_or_else(busy)?
            .reset(key.as_deref());
        Ok(())
    }
}

/// The registry is in use further up the stack (a call back from inside the client).
fn busy() -> JsValue {
    js_sys::Error::new("resilientFetch: the client is busy; call again from outside this callback")
        .into()
}

/// Puts a resilient wrapper on `globalThis.fetch` that sends through the `fetch` that
/// was there before (an earlier install is replaced); returns the client it uses.
// The very object the wrapper calls (its `fetch` is looked up at each call), not a second
// handle of the same client: what wraps the client's `fetch` (resilient-fetch/otel) wraps
// the global's too.
#[wasm_bindgen(unchecked_return_type = "ResilientClient")]
pub fn install(policy: Option<PolicyArg>) -> Result<JsValue, JsValue> {
    let original = fetch_to_wrap()?;
    let policy = policy.map_or(JsValue::UNDEFINED, Into::into);
    let inner = ClientInner::new(&policy, Some(original.clone()))?;
    let client = JsValue::from(ResilientClient { inner });
    install_fetch(client.clone(), &original)?;
    Ok(client)
}

/// Puts back the `fetch` that `install()` wrapped; false (and nothing changed) if
/// `globalThis.fetch` is no longer the wrapper.
#[wasm_bindgen]
pub fn uninstall() -> bool {
    uninstall_fetch()
}

/// Bytes of linear memory the module holds now (diagnostics: it grows with
/// live clients and calls, and must not grow with calls that have settled).
#[wasm_bindgen(js_name = memoryBytes)]
pub fn memory_bytes() -> f64 {
    (core::arch::wasm32::memory_size(0) * 65536) as f64
}
