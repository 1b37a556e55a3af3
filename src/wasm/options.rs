//! JS policy objects into the core's [`PolicyInput`]: serde-wasm-bindgen does
//! the decoding, the core validates; `onEvent` and `fetch` (functions) are taken here.

use js_sys::{Function, Reflect};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use super::bindings::read_policy;
use crate::policy::{PolicyError, PolicyErrorKind, PolicyInput};

/// A decoded policy argument.
#[derive(Default)]
pub struct Options {
    /// Everything but `onEvent`, not yet validated.
    pub input: PolicyInput,
    /// The `onEvent` callback, if any.
    pub on_event: Option<Function>,
    /// The `fetch` to send with, if any.
    pub fetch: Option<Function>,
    /// The plain copy of the policy that was decoded (undefined when there was none).
    pub plain: JsValue,
}

/// Rejects what belongs to a client, not to one call: `maxOrigins` sizes the
/// client's registry, and a fixed `idempotencyKey` string names one operation.
/// `plain` is [`Options::plain`]: data only, no getters.
pub fn check_scope(plain: &JsValue, per_call: bool) -> Result<(), JsValue> {
    if !plain.is_object() {
        return Ok(());
    }
    let field =
        |name: &str| Reflect::get(plain, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED);
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

/// Decodes `policy` (undefined and null mean "no overrides"). The policy is read
/// once, in JS (js/arguments.js): whatever its getters or proxy traps throw rejects
/// the call there, and what reaches serde-wasm-bindgen is a plain copy of data.
pub fn decode(policy: &JsValue) -> Result<Options, JsValue> {
    if policy.is_undefined() || policy.is_null() {
        return Ok(Options::default());
    }
    // [plain copy without functions, onEvent or undefined, fetch or undefined]
    let read = read_policy(policy)?;
    let plain = read.get(0);
    let on_event = read.get(1).dyn_into::<Function>().ok();
    let fetch = read.get(2).dyn_into::<Function>().ok();
    // The copy holds only what serde-wasm-bindgen decodes; the fields themselves are
    // checked, with their names, by the core.
    let input = serde_wasm_bindgen::from_value(plain.clone())
        .map_err(|_| JsValue::from(js_sys::TypeError::new("invalid policy")))?;
    Ok(Options {
        input,
        on_event,
        fetch,
        plain,
    })
}

/// The JS error for an invalid policy: `RangeError` or `TypeError`, naming the field.
pub fn policy_error(error: &PolicyError) -> JsValue {
    match error.kind {
        PolicyErrorKind::Range => js_sys::RangeError::new(&error.message).into(),
        PolicyErrorKind::Type => js_sys::TypeError::new(&error.message).into(),
    }
}
