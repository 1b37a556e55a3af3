//! JS policy objects into the core's [`PolicyInput`]: serde-wasm-bindgen does
//! the decoding, the core validates; `onEvent` (a function) is taken here.

use js_sys::{Function, Reflect};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::policy::{PolicyError, PolicyErrorKind, PolicyInput};

/// A decoded policy argument.
#[derive(Default)]
pub struct Options {
    /// Everything but `onEvent`, not yet validated.
    pub input: PolicyInput,
    /// The `onEvent` callback, if any.
    pub on_event: Option<Function>,
}

/// Rejects what belongs to a client, not to one call: `maxOrigins` sizes the
/// client's registry, and a fixed `idempotencyKey` string names one operation.
pub fn check_scope(policy: &JsValue, per_call: bool) -> Result<(), JsValue> {
    let field =
        |name: &str| Reflect::get(policy, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED);
    if !policy.is_object() {
        return Ok(());
    }
    if per_call && !field("maxOrigins").is_undefined() {
        return Err(js_sys::TypeError::new(
            "maxOrigins sizes a client's registry: give it to new ResilientClient(...), not to one call",
        )
        .into());
    }
    if !per_call && field("idempotencyKey").is_string() {
        return Err(js_sys::TypeError::new(
            "idempotencyKey: a key string names one operation; give it per call, not to a ResilientClient \
             (whose every POST would then share it)",
        )
        .into());
    }
    Ok(())
}

/// Decodes `policy` (undefined and null mean "no overrides").
pub fn decode(policy: &JsValue) -> Result<Options, JsValue> {
    if policy.is_undefined() || policy.is_null() {
        return Ok(Options::default());
    }
    if !policy.is_object() || policy.is_function() || js_sys::Array::is_array(policy) {
        return Err(js_sys::TypeError::new("policy must be an object").into());
    }
    let on_event = match Reflect::get(policy, &JsValue::from_str("onEvent")) {
        Ok(f) if f.is_undefined() || f.is_null() => None,
        Ok(f) if f.is_function() => Some(f.unchecked_into::<Function>()),
        _ => return Err(js_sys::TypeError::new("policy.onEvent must be a function").into()),
    };
    // serde-wasm-bindgen refuses only values no policy field takes (functions
    // other than onEvent, symbols, bigints); the fields themselves are checked,
    // with their names, by the core.
    let input = serde_wasm_bindgen::from_value(policy.clone()).map_err(|_| {
        JsValue::from(js_sys::TypeError::new(
            "invalid policy: only numbers, strings, booleans, arrays and plain objects are accepted \
             (and a function for onEvent)",
        ))
    })?;
    Ok(Options { input, on_event })
}

/// The JS error for an invalid policy: `RangeError` or `TypeError`, naming the field.
pub fn policy_error(error: &PolicyError) -> JsValue {
    match error.kind {
        PolicyErrorKind::Range => js_sys::RangeError::new(&error.message).into(),
        PolicyErrorKind::Type => js_sys::TypeError::new(&error.message).into(),
    }
}
