//! Core events and stats to plain JS objects, by name: each crosses the boundary as one
//! typed value serialised by serde-wasm-bindgen's `Serializer` (absent fields are left
//! out), so an event added later is one more variant here and in the core. A listener
//! that throws or rejects is ignored: it must not break the call or the breaker's
//! bookkeeping.

use js_sys::Function;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer as _};
use serde_wasm_bindgen::Serializer;
use wasm_bindgen::JsValue;

use super::bindings::call_listener;
use crate::events::Event;
use crate::registry::OriginSnapshot;

/// An event as `onEvent` receives it (see `ResilienceEvent` in the declarations).
#[derive(Serialize, Default)]
#[serde(rename_all = "camelCase")]
struct JsEvent<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    origin: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    attempt: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    idempotency_key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    attempts: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    outcome: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    duration_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delay_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    retry_after: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    from: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    to: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timeout_ms: Option<f64>,
}

/// The event as a JS object: `{ type, origin, ... }`; `key` is the call's idempotency
/// key, shown on `attemptStart`.
fn to_js(origin: &str, key: Option<&str>, event: &Event) -> JsValue {
    let mut e = JsEvent {
        kind: event.kind(),
        origin,
        ..JsEvent::default()
    };
    match *event {
        Event::AttemptStart { attempt, .. } => {
            e.attempt = Some(attempt);
            e.idempotency_key = key;
        }
        Event::AttemptEnd {
            attempt,
            outcome,
            status,
            duration_ms,
        } => {
            e.attempt = Some(attempt);
            e.outcome = Some(outcome.as_str());
            e.status = status;
            e.duration_ms = Some(duration_ms);
        }
        Event::Retry {
            attempt,
            delay_ms,
            reason,
            retry_after,
        } => {
            e.attempt = Some(attempt);
            e.delay_ms = Some(delay_ms);
            e.reason = Some(reason.as_str());
            e.retry_after = Some(retry_after);
        }
        Event::GiveUp { reason, attempts } => {
            e.reason = Some(reason.as_str());
            e.attempts = Some(attempts);
        }
        Event::BreakerTransition { from, to, .. } => {
            e.from = Some(from.as_str());
            e.to = Some(to.as_str());
        }
        Event::ShortCircuit { retry_after_ms, .. } => e.delay_ms = Some(retry_after_ms),
        Event::BulkheadRejected { .. } => {}
        Event::BodyTimeout {
            timeout_ms,
            deadline,
        } => {
            e.timeout_ms = Some(timeout_ms);
            e.reason = Some(if deadline { "deadline" } else { "idle" });
        }
        Event::Success { attempts } => e.attempts = Some(attempts),
    }
    e.serialize(&Serializer::new())
        .unwrap_or(JsValue::UNDEFINED)
}

/// Calls `listener` with the event; whatever it throws, or its promise rejects with, is dropped.
pub fn emit(listener: &Function, origin: &str, key: Option<&str>, event: &Event) {
    call_listener(listener, &to_js(origin, key, event));
}

/// One origin's counters and state (see `OriginStats` in the declarations).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsOriginStats {
    attempts: f64,
    successes: f64,
    failures: f64,
    retries: f64,
    short_circuits: f64,
    timeouts: f64,
    in_flight: f64,
    breaker_state: &'static str,
    budget_tokens: f64,
}

impl From<&OriginSnapshot> for JsOriginStats {
    fn from(snapshot: &OriginSnapshot) -> Self {
        let s = &snapshot.stats;
        JsOriginStats {
            attempts: s.attempts as f64,
            successes: s.successes as f64,
            failures: s.failures as f64,
            retries: s.retries as f64,
            short_circuits: s.short_circuits as f64,
            timeouts: s.timeouts as f64,
            in_flight: f64::from(s.in_flight),
            breaker_state: snapshot.breaker.as_str(),
            budget_tokens: f64::from(snapshot.budget_tokens),
        }
    }
}

/// `stats()`: a plain object from origin to its stats.
pub fn stats_to_js(snapshots: &[OriginSnapshot]) -> JsValue {
    let serializer = Serializer::new().serialize_maps_as_objects(true);
    let to_js = || -> Result<JsValue, serde_wasm_bindgen::Error> {
        let mut map = serializer.serialize_map(Some(snapshots.len()))?;
        for snapshot in snapshots {
            map.serialize_entry(&snapshot.origin, &JsOriginStats::from(snapshot))?;
        }
        map.end()
    };
    to_js().unwrap_or(JsValue::UNDEFINED)
}
