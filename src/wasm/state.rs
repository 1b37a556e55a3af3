//! What a client owns (its policy, per-origin state, listener, channel and outbox): made
//! by `client.rs`, used by its calls (`call.rs`).

use std::rc::Rc;

use js_sys::Function;
use wasm_bindgen::prelude::*;

use super::options::{Asked, Hooks};
use crate::outbox::Outbox;
use crate::owner::Owner;
use crate::policy::{Policy, PolicyInput};
use crate::share::shell::Sharing;

/// Counts a body cut off after its call resolved (`bodyTimeout`): `(isDeadline, ms,
/// origin, onEvent) -> TimeoutError`, called from js/body.js.
type Expire = Closure<dyn Fn(bool, f64, String, JsValue) -> JsValue>;

/// What a client owns: its policy, its per-origin state, its listener.
pub struct ClientInner {
    /// Tells this client's calls apart from others' in a chain of calls (js/chain.js).
    pub id: u32,
    /// The client's `fetch` option: what it sends with (None: the platform's `fetch`).
    pub fetch: Option<Function>,
    /// The client's `retry.shouldRetry`, `breaker.isFailure` and `breaker.key`, as given.
    pub hooks: Hooks,
    /// Which of them apply to a call that brings no policy (decided once).
    pub asked: Asked,
    /// Counts a body cut off after its call (see [`Expire`]).
    pub expire: Expire,
    /// The client's policy as given; each call's policy is merged over it.
    pub policy: PolicyInput,
    /// The client's policy validated, used as is by calls that bring none
    /// (no decoding or validation per call on the common path).
    pub validated: Rc<Policy>,
    /// The client's `onEvent`, used when a call gives none.
    pub on_event: Option<Function>,
    /// Breakers, budgets, bulkheads and stats, per origin.
    pub registry: Owner,
    /// Its channel to its peers, when it shares (`share`).
    pub(super) sharing: Option<Sharing>,
    /// Its outbox, when it keeps writes (`outbox`; never without the feature).
    pub outbox: Option<Outbox>,
    /// Its store of kept answers (`stale`; opened on first use, nothing without the feature).
    pub stale: crate::stale::Store,
}
