//! JS policy objects into the core's [`PolicyInput`]. JS reads the caller's object once
//! and hands over a plain copy of its data (js/policy-arg.js: getters and proxy traps run
//! there, functions are taken out); here that copy becomes the core's [`Value`], which
//! the core validates, scope included. `onEvent` and `fetch` (functions) are taken here.

use js_sys::{Array, Function, Object, Reflect};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use super::bindings::read_policy;
use crate::policy::{PolicyError, PolicyErrorKind, PolicyInput, Value};

/// A decoded policy argument.
#[derive(Default)]
pub struct Options {
    /// Everything but the functions, not yet validated.
    pub input: PolicyInput,
    /// The `onEvent` callback, if any.
    pub on_event: Option<Function>,
    /// The `fetch` to send with, if any.
    pub fetch: Option<Function>,
    /// `retry.shouldRetry` and `breaker.isFailure`: undefined when not given, null when
    /// given as null (none, whatever the client has), else the function.
    pub hooks: Hooks,
    /// `outbox.store` and `outbox.onReplay`, as given (undefined when not; not read without
    /// `outbox`).
    pub outbox: crate::outbox::Held,
    /// `share.durableObject`, as given (never read without `share`).
    pub share_object: crate::share::shell::DurableObject,
    /// `stale.store`, as given (undefined when not; not read without `stale`).
    pub stale: crate::stale::Held,
}

/// The caller's own decisions, as given.
#[derive(Clone, Default)]
pub struct Hooks {
    /// `retry.shouldRetry`.
    pub should_retry: JsValue,
    /// `breaker.isFailure`.
    pub is_failure: JsValue,
    /// `breaker.key`.
    pub key: JsValue,
}

/// The caller's decisions that apply to a call: each hook given as a function, with the part of
/// the policy it belongs to on. Decided once per client (and once per call that brings a policy),
/// so that a call asks no JS value whether it is a function.
#[derive(Clone, Default)]
pub struct Asked {
    /// `retry.shouldRetry`, with retries on.
    pub should_retry: Option<Function>,
    /// `breaker.isFailure`, with the breaker on.
    pub is_failure: Option<Function>,
    /// `breaker.key`: it names the registry entry (budget, stats), not only the breaker, so it
    /// is kept with the breaker off too.
    pub key: Option<Function>,
}

impl Asked {
    /// What of `hooks` applies under `policy`.
    pub fn of(hooks: &Hooks, policy: &crate::policy::Policy) -> Asked {
        let function = |f: &JsValue, on: bool| f.dyn_ref::<Function>().filter(|_| on).cloned();
        Asked {
            should_retry: function(&hooks.should_retry, policy.retry.is_some()),
            is_failure: function(&hooks.is_failure, policy.breaker.is_some()),
            key: function(&hooks.key, true),
        }
    }
}

impl Hooks {
    /// These hooks laid over `base`'s, one by one (undefined keeps `base`'s).
    pub fn over(&self, base: &Hooks) -> Hooks {
        let pick = |mine: &JsValue, theirs: &JsValue| {
            if mine.is_undefined() {
                theirs.clone()
            } else {
                mine.clone()
            }
        };
        Hooks {
            should_retry: pick(&self.should_retry, &base.should_retry),
            is_failure: pick(&self.is_failure, &base.is_failure),
            key: pick(&self.key, &base.key),
        }
    }
}

/// Decodes `policy` (undefined and null mean "no overrides"). Its fields are checked by
/// `Policy::from_input` (once merged), then where they were given by
/// `PolicyInput::check_scope`.
pub fn decode(policy: &JsValue) -> Result<Options, JsValue> {
    if policy.is_undefined() || policy.is_null() {
        return Ok(Options::default());
    }
    // [plain copy without functions, retry.shouldRetry, breaker.isFailure, breaker.key,
    //  outbox.onReplay, onEvent, fetch, share.durableObject, outbox.store, stale.store]
    let read = read_policy(policy)?;
    let input = PolicyInput::new(to_value(&read.get(0)));
    let hooks = Hooks {
        should_retry: read.get(1),
        is_failure: read.get(2),
        key: read.get(3),
    };
    Ok(Options {
        input,
        on_event: read.get(5).dyn_into::<Function>().ok(),
        fetch: read.get(6).dyn_into::<Function>().ok(),
        hooks,
        outbox: crate::outbox::Held::new(|| (read.get(8), read.get(4))),
        share_object: crate::share::shell::DurableObject::read(|| read.get(7)),
        stale: crate::stale::Held::new(|| read.get(9)),
    })
}

/// The core's value of a plain copy (data only: no getters, cycles or functions); an
/// `undefined` field is absent, as JS spreads and JSON treat it.
pub(super) fn to_value(v: &JsValue) -> Value {
    if v.is_null() || v.is_undefined() {
        Value::Null
    } else if let Some(b) = v.as_bool() {
        Value::Bool(b)
    } else if let Some(n) = v.as_f64() {
        Value::Number(n)
    } else if let Some(s) = v.as_string() {
        Value::String(s)
    } else if Array::is_array(v) {
        Value::List(
            v.unchecked_ref::<Array>()
                .iter()
                .map(|item| to_value(&item))
                .collect(),
        )
    } else {
        let mut entries = Vec::new();
        for key in Object::keys(v.unchecked_ref::<Object>()).iter() {
            let value = Reflect::get(v, &key).unwrap_or(JsValue::UNDEFINED);
            if let (Some(key), false) = (key.as_string(), value.is_undefined()) {
                entries.push((key, to_value(&value)));
            }
        }
        Value::Map(entries)
    }
}

/// The JS error for an invalid policy: `RangeError` or `TypeError`, naming the field.
pub fn policy_error(error: &PolicyError) -> JsValue {
    match error.kind {
        PolicyErrorKind::Range => js_sys::RangeError::new(&error.message).into(),
        PolicyErrorKind::Type => js_sys::TypeError::new(&error.message).into(),
    }
}
