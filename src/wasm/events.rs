//! Core events to plain JS objects for `onEvent`. A listener that throws is
//! ignored: it must not break the call or the breaker's bookkeeping.

use js_sys::Function;
use wasm_bindgen::JsValue;

use super::bindings::{call_listener, make_event};
use crate::breaker::BreakerState;
use crate::events::{Event, OutcomeKind};

/// A breaker state as its index in js/objects.js's `STATES`.
pub fn state_index(state: BreakerState) -> i32 {
    match state {
        BreakerState::Closed => 0,
        BreakerState::Open => 1,
        BreakerState::HalfOpen => 2,
    }
}

fn outcome_index(outcome: OutcomeKind) -> i32 {
    match outcome {
        OutcomeKind::Response => 0,
        OutcomeKind::NetworkError => 1,
        OutcomeKind::Timeout => 2,
        OutcomeKind::Aborted => 3,
        OutcomeKind::InvalidRequest => 4,
        OutcomeKind::InvalidResponse => 5,
    }
}

/// The event as a JS object: `{ type, origin, ... }`; `key` is the call's
/// idempotency key, shown on `attemptStart`.
pub fn to_js(origin: &str, key: Option<&str>, event: &Event) -> JsValue {
    // (key, attempt, attempts, outcome, status, duration, delay, reason, retryAfter, from, to)
    let (mut k, mut attempt, mut attempts, mut outcome, mut status) = ("", -1, -1, -1, -1);
    let (mut duration, mut delay, mut reason, mut retry_after, mut from, mut to) =
        (-1.0, -1.0, "", -1, -1, -1);
    let mut timeout = -1.0;
    match *event {
        Event::AttemptStart { attempt: a, .. } => {
            attempt = a as i32;
            k = key.unwrap_or("");
        }
        Event::AttemptEnd {
            attempt: a,
            outcome: o,
            status: s,
            duration_ms,
        } => {
            attempt = a as i32;
            outcome = outcome_index(o);
            status = s.map_or(-1, i32::from);
            duration = duration_ms;
        }
        Event::Retry {
            attempt: a,
            delay_ms,
            reason: r,
            retry_after: ra,
        } => {
            attempt = a as i32;
            delay = delay_ms;
            reason = r.as_str();
            retry_after = i32::from(ra);
        }
        Event::GiveUp {
            reason: r,
            attempts: n,
        } => {
            reason = r.as_str();
            attempts = n as i32;
        }
        Event::BreakerTransition { from: f, to: t, .. } => {
            from = state_index(f);
            to = state_index(t);
        }
        Event::ShortCircuit { retry_after_ms, .. } => delay = retry_after_ms,
        Event::BulkheadRejected { .. } => {}
        Event::BodyTimeout {
            timeout_ms,
            deadline,
        } => {
            timeout = timeout_ms;
            reason = if deadline { "deadline" } else { "idle" };
        }
        Event::Success { attempts: n } => attempts = n as i32,
    }
    make_event(
        event.kind(),
        origin,
        k,
        attempt,
        attempts,
        outcome,
        status,
        duration,
        delay,
        reason,
        retry_after,
        from,
        to,
        timeout,
    )
}

/// Calls `listener` with the event; whatever it throws, or its promise rejects with, is dropped.
pub fn emit(listener: &Function, origin: &str, key: Option<&str>, event: &Event) {
    call_listener(listener, &to_js(origin, key, event));
}
