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
#[derive(Default)]
struct JsEvent<'a> {
    kind: &'static str,
    origin: &'a str,
    attempt: Option<u32>,
    idempotency_key: Option<&'a str>,
    attempts: Option<u32>,
    outcome: Option<&'static str>,
    status: Option<u16>,
    duration_ms: Option<f64>,
    delay_ms: Option<f64>,
    reason: Option<&'static str>,
    retry_after: Option<bool>,
    from: Option<&'static str>,
    to: Option<&'static str>,
    timeout_ms: Option<f64>,
    probability: Option<f64>,
    id: Option<&'a str>,
}

/// Adds `key: value` to `map` when there is a value.
fn entry<M: SerializeMap, T: Serialize>(
    map: &mut M,
    key: &str,
    value: Option<T>,
) -> Result<(), M::Error> {
    match value {
        Some(value) => map.serialize_entry(key, &value),
        None => Ok(()),
    }
}

// Written as maps, not derived structs: serde-wasm-bindgen interns struct field names in a
// hash map, code the package would ship for nothing but these two objects.
impl Serialize for JsEvent<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("type", self.kind)?;
        map.serialize_entry("origin", self.origin)?;
        entry(&mut map, "attempt", self.attempt)?;
        entry(&mut map, "idempotencyKey", self.idempotency_key)?;
        entry(&mut map, "attempts", self.attempts)?;
        entry(&mut map, "outcome", self.outcome)?;
        entry(&mut map, "status", self.status)?;
        entry(&mut map, "durationMs", self.duration_ms)?;
        entry(&mut map, "delayMs", self.delay_ms)?;
        entry(&mut map, "reason", self.reason)?;
        entry(&mut map, "retryAfter", self.retry_after)?;
        entry(&mut map, "from", self.from)?;
        entry(&mut map, "to", self.to)?;
        entry(&mut map, "timeoutMs", self.timeout_ms)?;
        entry(&mut map, "probability", self.probability)?;
        entry(&mut map, "id", self.id)?;
        map.end()
    }
}

/// The event as a JS object: `{ type, origin, ... }`; `key` is the call's idempotency
/// key, shown on `attemptStart`.
pub fn to_js(origin: &str, key: Option<&str>, event: &Event) -> JsValue {
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
        Event::RateLimitWait {
            wait_ms: ms,
            reason,
            ..
        }
        | Event::RateLimitRejected {
            retry_after_ms: ms,
            reason,
            ..
        } => {
            e.delay_ms = Some(ms);
            e.reason = Some(reason.as_str());
        }
        Event::Throttled { probability, .. } => e.probability = Some(probability),
        Event::BodyTimeout {
            timeout_ms,
            deadline,
        } => {
            e.timeout_ms = Some(timeout_ms);
            e.reason = Some(if deadline { "deadline" } else { "idle" });
        }
        Event::Hedge { attempt, delay_ms } => {
            e.attempt = Some(attempt);
            e.delay_ms = Some(delay_ms);
        }
        Event::Success { attempts } => e.attempts = Some(attempts),
        Event::Queued { id, reason } => {
            e.id = Some(id);
            e.idempotency_key = key;
            e.reason = Some(reason.as_str());
        }
        Event::Replayed { id, attempt } => {
            e.id = Some(id);
            e.attempt = Some(attempt);
        }
        Event::Delivered { id, status } => {
            e.id = Some(id);
            e.status = Some(status);
        }
        Event::DeadLettered { id, reason, status } => {
            e.id = Some(id);
            e.status = status;
            e.reason = Some(reason.as_str());
        }
    }
    e.serialize(&Serializer::new().serialize_maps_as_objects(true))
        .unwrap_or(JsValue::UNDEFINED)
}

/// Calls `listener` with the event; whatever it throws, or its promise rejects with, is dropped.
pub fn emit(listener: &Function, origin: &str, key: Option<&str>, event: &Event) {
    call_listener(listener, &to_js(origin, key, event));
}

/// One origin's counters and state (see `OriginStats` in the declarations).
struct JsOriginStats<'a>(&'a OriginSnapshot);

impl Serialize for JsOriginStats<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (snapshot, s) = (self.0, &self.0.stats);
        let mut map = serializer.serialize_map(Some(15))?;
        map.serialize_entry("attempts", &(s.attempts as f64))?;
        map.serialize_entry("successes", &(s.successes as f64))?;
        map.serialize_entry("failures", &(s.failures as f64))?;
        map.serialize_entry("retries", &(s.retries as f64))?;
        map.serialize_entry("shortCircuits", &(s.short_circuits as f64))?;
        map.serialize_entry("timeouts", &(s.timeouts as f64))?;
        map.serialize_entry("inFlight", &f64::from(s.in_flight))?;
        map.serialize_entry("breakerState", snapshot.breaker.as_str())?;
        map.serialize_entry("budgetTokens", &f64::from(snapshot.budget_tokens))?;
        map.serialize_entry("rateLimited", &(s.rate_limited as f64))?;
        map.serialize_entry("throttled", &(s.throttled as f64))?;
        map.serialize_entry("waitMs", &snapshot.wait_ms)?;
        map.serialize_entry("hedges", &(s.hedges as f64))?;
        map.serialize_entry("hedgeWins", &(s.hedge_wins as f64))?;
        entry(&mut map, "quotaRemaining", snapshot.quota_remaining)?;
        map.end()
    }
}

/// `stats()`: a plain object from origin to its stats.
pub fn stats_to_js(snapshots: &[OriginSnapshot]) -> JsValue {
    let serializer = Serializer::new().serialize_maps_as_objects(true);
    let to_js = || -> Result<JsValue, serde_wasm_bindgen::Error> {
        let mut map = serializer.serialize_map(Some(snapshots.len()))?;
        for snapshot in snapshots {
            map.serialize_entry(&snapshot.origin, &JsOriginStats(snapshot))?;
        }
        map.end()
    };
    to_js().unwrap_or(JsValue::UNDEFINED)
}
