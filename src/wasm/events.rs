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

/// A field's value as JS gets it: a number, a string or a boolean.
#[derive(Clone, Copy)]
enum Field<'a> {
    Number(f64),
    Text(&'a str),
    Flag(bool),
}

/// A string field's value, if there is one.
fn text(t: Option<&str>) -> Option<Field<'_>> {
    t.map(Field::Text)
}

/// Adds the fields that have a value to `map`, in order: one loop over one field type, so
/// each kind of value is serialised by one instance of the code.
fn entries<M: SerializeMap>(map: &mut M, fields: &[(&str, Option<Field>)]) -> Result<(), M::Error> {
    for &(key, value) in fields {
        match value {
            Some(Field::Number(n)) => map.serialize_entry(key, &n)?,
            Some(Field::Text(t)) => map.serialize_entry(key, t)?,
            Some(Field::Flag(b)) => map.serialize_entry(key, &b)?,
            None => {}
        }
    }
    Ok(())
}

// Written as maps, not derived structs: serde-wasm-bindgen interns struct field names in a
// hash map, code the package would ship for nothing but these two objects.
impl Serialize for JsEvent<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let number = |n: Option<u32>| n.map(|n| Field::Number(f64::from(n)));
        let ms = |n: Option<f64>| n.map(Field::Number);
        let mut map = serializer.serialize_map(None)?;
        entries(
            &mut map,
            &[
                ("type", Some(Field::Text(self.kind))),
                ("origin", Some(Field::Text(self.origin))),
                ("attempt", number(self.attempt)),
                ("idempotencyKey", text(self.idempotency_key)),
                ("attempts", number(self.attempts)),
                ("outcome", text(self.outcome)),
                ("status", number(self.status.map(u32::from))),
                ("durationMs", ms(self.duration_ms)),
                ("delayMs", ms(self.delay_ms)),
                ("reason", text(self.reason)),
                ("retryAfter", self.retry_after.map(Field::Flag)),
                ("from", text(self.from)),
                ("to", text(self.to)),
                ("timeoutMs", ms(self.timeout_ms)),
                ("probability", ms(self.probability)),
                ("id", text(self.id)),
            ],
        )?;
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
        let count = |n: u64| Some(Field::Number(n as f64));
        let mut map = serializer.serialize_map(Some(15))?;
        entries(
            &mut map,
            &[
                ("attempts", count(s.attempts)),
                ("successes", count(s.successes)),
                ("failures", count(s.failures)),
                ("retries", count(s.retries)),
                ("shortCircuits", count(s.short_circuits)),
                ("timeouts", count(s.timeouts)),
                ("inFlight", count(s.in_flight.into())),
                ("breakerState", Some(Field::Text(snapshot.breaker.as_str()))),
                ("budgetTokens", count(snapshot.budget_tokens.into())),
                ("rateLimited", count(s.rate_limited)),
                ("throttled", count(s.throttled)),
                ("waitMs", Some(Field::Number(snapshot.wait_ms))),
                ("hedges", count(s.hedges)),
                ("hedgeWins", count(s.hedge_wins)),
                (
                    "quotaRemaining",
                    snapshot
                        .quota_remaining
                        .map(|q| Field::Number(f64::from(q))),
                ),
            ],
        )?;
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
