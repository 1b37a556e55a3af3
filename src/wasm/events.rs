//! Core events and stats to plain JS objects. An event is made in JS (js/hooks.js
//! `makeEvent`) from its type, its origin and up to four values named in order: one call
//! across the boundary per event, where a serialiser crosses it for each key and each value
//! (and ships its map code for one object). Stats are made the same way, one call per origin,
//! its numbers crossing as one array serialised by serde-wasm-bindgen (NaN: absent, left out). A listener that throws or
//! rejects is ignored: it must not break the call or the breaker's bookkeeping.

use js_sys::Function;
use wasm_bindgen::JsValue;

use super::bindings::{call_listener, make_event, stats_entry};
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

/// The numbers of an origin's `stats()` entry, in the order of the values `stats_to_js` gives
/// (see `OriginStats` in the declarations); its breaker's state and why it opened go as words.
const STATS_NAMES: &str = "attempts successes failures retries shortCircuits timeouts inFlight \
budgetTokens rateLimited throttled waitMs hedges hedgeWins offline stale quotaRemaining";

/// `stats()`: a plain object from origin to its stats, each entry made in JS (js/hooks.js
/// `statsEntry`) from its words and its numbers (NaN: absent), one call per origin. Serialising
/// the whole object as a map cost 0.9 KB gz more (the map code, with the snapshot inlined into it).
pub fn stats_to_js(snapshots: &[OriginSnapshot]) -> JsValue {
    let stats = js_sys::Object::new();
    for snapshot in snapshots {
        let s = &snapshot.stats;
        // Counters cross as f64: exact up to 2^53.
        let values = [
            s.attempts as f64,
            s.successes as f64,
            s.failures as f64,
            s.retries as f64,
            s.short_circuits as f64,
            s.timeouts as f64,
            f64::from(s.in_flight),
            f64::from(snapshot.budget_tokens),
            s.rate_limited as f64,
            s.throttled as f64,
            snapshot.wait_ms,
            s.hedges as f64,
            s.hedge_wins as f64,
            s.offline as f64,
            s.stale as f64,
            snapshot.quota_remaining.map_or(f64::NAN, f64::from),
        ];
        stats_entry(
            &stats,
            &snapshot.origin,
            snapshot.breaker.as_str(),
            snapshot.opened_by.map_or("", |r| r.as_str()),
            STATS_NAMES,
            &serde_wasm_bindgen::to_value(&values).unwrap_or(JsValue::UNDEFINED),
        );
    }
    stats.into()
}
