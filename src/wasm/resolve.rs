//! The policy a call runs under: its client's, or the call's laid over it.

use std::rc::Rc;

use js_sys::Function;
use wasm_bindgen::prelude::*;

use super::options::{Asked, decode, policy_error};
use super::state::ClientInner;
use crate::policy::Policy;

/// The policy a call runs under: its client's, or the call's laid over it.
pub struct Resolved {
    pub policy: Rc<Policy>,
    pub on_event: Option<Function>,
    /// The `fetch` to send with (undefined: the platform's).
    pub fetch: JsValue,
    /// The caller's own decisions (those of features turned off are dropped).
    pub hooks: Asked,
}

/// The client's policy, or the call's (`None`: none given) laid over it (checked, scope included).
pub fn resolve_policy(client: &ClientInner, policy: Option<&JsValue>) -> Result<Resolved, JsValue> {
    let Some(policy) = policy else {
        return Ok(Resolved {
            policy: client.validated.clone(),
            on_event: client.on_event.clone(),
            fetch: client.fetch.clone().map_or(JsValue::UNDEFINED, Into::into),
            hooks: client.asked.clone(),
        });
    };
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
    Ok(Resolved {
        fetch: fetch.map_or(JsValue::UNDEFINED, Into::into),
        hooks: Asked::of(&options.hooks.over(&client.hooks), &validated),
        policy: Rc::new(validated),
        on_event,
    })
}
