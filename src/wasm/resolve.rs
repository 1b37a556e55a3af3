//! The policy a call runs under: its client's, or the call's laid over it.

use std::rc::Rc;

use js_sys::Function;
use wasm_bindgen::prelude::*;

use super::options::{Hooks, decode, policy_error};
use super::state::ClientInner;
use crate::policy::Policy;

/// The policy a call runs under: its client's, or the call's laid over it.
pub struct Resolved {
    pub policy: Rc<Policy>,
    pub on_event: Option<Function>,
    /// The `fetch` to send with (undefined: the platform's).
    pub fetch: JsValue,
    /// The caller's own decisions (those of features turned off are dropped).
    pub hooks: Hooks,
}

/// The client's policy, or the call's laid over it (checked, scope included).
pub fn resolve_policy(client: &ClientInner, policy: &JsValue) -> Result<Resolved, JsValue> {
    let (policy, on_event, fetch, hooks) = if policy.is_undefined() || policy.is_null() {
        (
            client.validated.clone(),
            client.on_event.clone(),
            client.fetch.clone(),
            client.hooks.clone(),
        )
    } else {
        let options = decode(policy)?;
        let merged = client.policy.merge(&options.input);
        let validated = Policy::from_input(&merged).map_err(|e| policy_error(&e))?;
        options
            .input
            .check_scope(true)
            .map_err(|e| policy_error(&e))?;
        if options.stale.given() {
            return Err(js_sys::TypeError::new(crate::stale::CLIENT_ONLY).into());
        }
        let on_event = options.on_event.or_else(|| client.on_event.clone());
        let fetch = options.fetch.or_else(|| client.fetch.clone());
        let hooks = options.hooks.over(&client.hooks);
        (Rc::new(validated), on_event, fetch, hooks)
    };
    let function = |f: &JsValue, on: bool| f.dyn_ref::<Function>().filter(|_| on).cloned();
    Ok(Resolved {
        fetch: fetch.map_or(JsValue::UNDEFINED, Into::into),
        hooks: Hooks {
            should_retry: function(&hooks.should_retry, policy.retry.is_some())
                .map_or(JsValue::UNDEFINED, Into::into),
            is_failure: function(&hooks.is_failure, policy.breaker.is_some())
                .map_or(JsValue::UNDEFINED, Into::into),
            // It names the registry entry (budget, stats), not only the breaker: kept with
            // the breaker off too.
            key: function(&hooks.key, true).map_or(JsValue::UNDEFINED, Into::into),
        },
        policy,
        on_event,
    })
}
