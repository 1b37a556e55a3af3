//! Core events and stats to plain JS objects. An event is made in JS (js/hooks.js
//! `makeEvent`) from its type, its origin and up to four values named in order: one call
//! across the boundary per event, where a serialiser crosses it for each key and each value
//! (and ships its map code for one object). Stats cross as one value serialised by
//! serde-wasm-bindgen's `Serializer` (absent fields are left out). A listener that throws or
//! rejects is ignored: it must not break the call or the breaker's bookkeeping.

use js_sys::Function;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer as _};
use serde_wasm_bindgen::Serializer;
use wasm_bindgen::JsValue;

use super::bindings::{call_listener, make_event};
use crate::events::Event;
use crate::registry::OriginSnapshot;

/// A field's value as JS gets it: a number, a string or a boolean.
#[derive(Clone, Copy)]
enum Field<'a> {
    Number(f64),
    Text(&'a str),
    Flag(bool),
}

impl From<Field<'_>> for JsValue {
    fn from(field: Field<'_>) -> JsValue {
        match field {
            Field::Number(n) => n.into(),
            Field::Text(t) => t.into(),
            Field::Flag(b) => b.into(),
        }
    }
}

/// A number field (a throttle's probability is one, and a stand-in without `throttle`).
fn number<'a>(value: impl Into<f64>) -> Option<Field<'a>> {
    Some(Field::Number(value.into()))
}

/// The event as a JS object: `{ type, origin, ... }` (see `ResilienceEvent` in the
/// declarations), its fields in one order for every kind; `key` is the call's idempotency
/// key, shown on `attemptStart` and `queued`.
pub fn to_js(origin: &str, key: Option<&str>, event: &Event) -> JsValue {
    use Field::{Flag, Number as N, Text as T};
    let n = |v: u32| Some(N(f64::from(v)));
    let status = |v: Option<u16>| v.map(|v| N(f64::from(v)));
    let key = key.map(T);
    // The names of the values that follow, space-separated: JS sets those that are given.
    let (names, values): (&str, [Option<Field>; 4]) = match *event {
        Event::AttemptStart { attempt, .. } => {
            ("attempt idempotencyKey", [n(attempt), key, None, None])
        }
        Event::AttemptEnd {
            attempt,
            outcome,
            status: s,
            duration_ms,
            ..
        } => (
            "attempt outcome status durationMs",
            [
                n(attempt),
                Some(T(outcome.as_str())),
                status(s),
                Some(N(duration_ms)),
            ],
        ),
        Event::Retry {
            attempt,
            delay_ms,
            reason,
            retry_after,
            ..
        } => (
            "attempt delayMs reason retryAfter",
            [
                n(attempt),
                Some(N(delay_ms)),
                Some(T(reason.as_str())),
                Some(Flag(retry_after)),
            ],
        ),
        Event::GiveUp { reason, attempts } => (
            "attempts reason",
            [n(attempts), Some(T(reason.as_str())), None, None],
        ),
        Event::BreakerTransition {
            from, to, reason, ..
        } => (
            "from to reason",
            [
                Some(T(from.as_str())),
                Some(T(to.as_str())),
                reason.map(|r| T(r.as_str())),
                None,
            ],
        ),
        Event::ShortCircuit { retry_after_ms, .. } => {
            ("delayMs", [Some(N(retry_after_ms)), None, None, None])
        }
        Event::BulkheadRejected { .. } => ("", [None; 4]),
        Event::RateLimitWait {
            wait_ms: ms,
            reason,
            ..
        }
        | Event::RateLimitRejected {
            retry_after_ms: ms,
            reason,
            ..
        } => (
            "delayMs reason",
            [Some(N(ms)), Some(T(reason.as_str())), None, None],
        ),
        Event::Throttled { probability, .. } => {
            ("probability", [number(probability), None, None, None])
        }
        Event::BodyTimeout {
            timeout_ms,
            deadline,
        } => (
            "reason timeoutMs",
            [
                Some(T(if deadline { "deadline" } else { "idle" })),
                Some(N(timeout_ms)),
                None,
                None,
            ],
        ),
        Event::Hedge(sent) => {
            let (attempt, delay_ms) = sent.parts();
            (
                "attempt delayMs",
                [n(attempt), Some(N(delay_ms)), None, None],
            )
        }
        Event::Stale(told) => {
            let (age_ms, reason) = told.parts();
            (
                "ageMs reason",
                [Some(N(age_ms)), Some(T(reason)), None, None],
            )
        }
        Event::Success { attempts } => ("attempts", [n(attempts), None, None, None]),
        Event::Offline { attempt } => ("attempt", [n(attempt), None, None, None]),
        Event::Queued { id, reason } => (
            "idempotencyKey reason id",
            [key, Some(T(reason.as_str())), Some(T(id.get())), None],
        ),
        Event::Replayed { id, attempt } => {
            ("attempt id", [n(attempt), Some(T(id.get())), None, None])
        }
        Event::Delivered { id, status: s } => {
            ("status id", [n(s.into()), Some(T(id.get())), None, None])
        }
        Event::DeadLettered {
            id,
            reason,
            status: s,
        } => (
            "status reason id",
            [status(s), Some(T(reason.as_str())), Some(T(id.get())), None],
        ),
    };
    let [a, b, c, d] = values.map(|v| v.map_or(JsValue::UNDEFINED, JsValue::from));
    // An attempt's event names the origin it went to (with failover, maybe an alternate;
    // without it, always the call's).
    let origin = match event.origin() {
        Some(own) if crate::failover::BUILT => own,
        _ => origin,
    };
    make_event(event.kind(), origin, names, &a, &b, &c, &d)
}

/// Calls `listener` with the event; whatever it throws, or its promise rejects with, is dropped.
pub fn emit(listener: &Function, origin: &str, key: Option<&str>, event: &Event) {
    call_listener(listener, &to_js(origin, key, event));
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

/// One origin's counters and state (see `OriginStats` in the declarations).
struct JsOriginStats<'a>(&'a OriginSnapshot);

// Written as a map, not a derived struct: serde-wasm-bindgen interns struct field names in a
// hash map, code the package would ship for nothing but this object.
impl Serialize for JsOriginStats<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (snapshot, s) = (self.0, &self.0.stats);
        let count = |n: u64| Some(Field::Number(n as f64));
        let mut map = serializer.serialize_map(Some(18))?;
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
                (
                    "openedBy",
                    snapshot.opened_by.map(|r| Field::Text(r.as_str())),
                ),
                ("budgetTokens", count(snapshot.budget_tokens.into())),
                ("rateLimited", count(s.rate_limited)),
                ("throttled", count(s.throttled)),
                // Whole milliseconds, rounded up, as every duration leaving the package.
                ("waitMs", Some(Field::Number(snapshot.wait_ms.ceil()))),
                ("hedges", count(s.hedges)),
                ("hedgeWins", count(s.hedge_wins)),
                ("offline", count(s.offline)),
                ("stale", count(s.stale)),
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
