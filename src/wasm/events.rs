//! Core events to plain JS objects for `onEvent`. A listener that throws is
//! ignored: it must not break the call or the breaker's bookkeeping.

use js_sys::{Function, Object, Reflect};
use wasm_bindgen::JsValue;

use crate::events::Event;

fn set(o: &Object, key: &str, value: JsValue) {
    let _ = Reflect::set(o, &JsValue::from_str(key), &value);
}

/// The event as a JS object: `{ type, origin, ... }`; `key` is the call's
/// idempotency key, shown on `attemptStart`.
pub fn to_js(origin: &str, key: Option<&str>, event: &Event) -> JsValue {
    let o = Object::new();
    set(&o, "type", event.kind().into());
    set(&o, "origin", origin.into());
    match *event {
        Event::AttemptStart { attempt, .. } => {
            set(&o, "attempt", attempt.into());
            if let Some(key) = key {
                set(&o, "idempotencyKey", key.into());
            }
        }
        Event::AttemptEnd {
            attempt,
            outcome,
            status,
            duration_ms,
        } => {
            set(&o, "attempt", attempt.into());
            set(&o, "outcome", outcome.as_str().into());
            if let Some(status) = status {
                set(&o, "status", status.into());
            }
            set(&o, "durationMs", duration_ms.into());
        }
        Event::Retry {
            attempt,
            delay_ms,
            reason,
            retry_after,
        } => {
            set(&o, "attempt", attempt.into());
            set(&o, "delayMs", delay_ms.into());
            set(&o, "reason", reason.as_str().into());
            set(&o, "retryAfter", retry_after.into());
        }
        Event::GiveUp { reason, attempts } => {
            set(&o, "reason", reason.as_str().into());
            set(&o, "attempts", attempts.into());
        }
        Event::BreakerTransition { from, to, .. } => {
            set(&o, "from", from.as_str().into());
            set(&o, "to", to.as_str().into());
        }
        Event::ShortCircuit { retry_after_ms, .. } => set(&o, "delayMs", retry_after_ms.into()),
        Event::BulkheadRejected { .. } => {}
        Event::Success { attempts } => set(&o, "attempts", attempts.into()),
    }
    o.into()
}

/// Calls `listener` with the event; whatever it throws is dropped.
pub fn emit(listener: &Function, origin: &str, key: Option<&str>, event: &Event) {
    let _ = listener.call1(&JsValue::UNDEFINED, &to_js(origin, key, event));
}
