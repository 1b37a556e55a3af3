//! Offline is not an outage: an attempt that fails to reach its origin while the runtime says
//! it is offline counts against no breaker and no budget, and its retry waits for the network
//! (or the call's deadline) instead of a backoff.

use crate::support::*;
use resilient_fetch::breaker::BreakerState;
use resilient_fetch::engine::{CallResult, Env};
use resilient_fetch::events::GiveUpReason;

/// A clock whose runtime is offline until `online_at` (None: it never comes back).
fn offline_until(online_at: Option<f64>) -> Clock {
    let clock = Clock::auto();
    clock.offline.set(true);
    clock.online_at.set(online_at);
    clock
}

#[test]
fn a_failure_while_offline_waits_for_the_network_and_counts_for_nothing() {
    let clock = offline_until(Some(5_000.0));
    let reg = registry();
    // A breaker that one failure would open, and a budget a retry would charge.
    let p = policy(serde_json::json!({"breaker": {"failureThreshold": 1}}));
    let mut script = Script::new(&clock, &[Step::Network, Step::Status(200)]);
    let (result, log) = call(&reg, &p, get(A), &mut script);
    assert_eq!(result, done(2, 2));
    assert_eq!(
        log.kinds,
        [
            "attemptStart",
            "attemptEnd",
            "offline",
            "attemptStart",
            "attemptEnd",
            "success"
        ]
    );
    assert!(log.retries.is_empty(), "no backoff wait: {:?}", log.retries);
    assert!(log.transitions.is_empty(), "the breaker heard nothing");
    // The retry went when the network came back, not after a backoff.
    assert!(
        clock.now_ms() >= 5_000.0 && clock.now_ms() < 5_100.0,
        "{}",
        clock.now_ms()
    );
    let s = snapshot(&reg, A, clock.now_ms());
    assert_eq!(s.breaker, BreakerState::Closed);
    assert_eq!(
        (
            s.stats.attempts,
            s.stats.failures,
            s.stats.successes,
            s.stats.offline
        ),
        (2, 0, 1, 1)
    );
    assert_eq!(
        s.budget_tokens, 500,
        "no retry was charged (and none refunded)"
    );
    assert_released(&reg, A);
}

#[test]
fn a_timeout_while_offline_counts_for_nothing_either() {
    let clock = offline_until(Some(20_000.0));
    let reg = registry();
    let p = policy(serde_json::json!({"timeoutMs": 1000, "breaker": {"failureThreshold": 1}}));
    let mut script = Script::new(&clock, &[Step::Hang, Step::Status(200)]);
    let (result, _) = call(&reg, &p, get(A), &mut script);
    assert_eq!(result, done(2, 2));
    let s = snapshot(&reg, A, clock.now_ms());
    assert_eq!(
        (s.stats.timeouts, s.stats.failures, s.stats.offline),
        (0, 0, 1)
    );
    assert_eq!(s.breaker, BreakerState::Closed);
}

#[test]
fn offline_until_the_deadline_gives_up_with_the_last_error() {
    let clock = offline_until(None);
    let reg = registry();
    let p = policy(serde_json::json!({"totalTimeoutMs": 3000, "breaker": {"failureThreshold": 1}}));
    let mut script = Script::new(&clock, &[Step::Network]);
    let (result, log) = call(&reg, &p, get(A), &mut script);
    assert_eq!(
        result,
        done(1, 1),
        "the network error, once the deadline is reached"
    );
    assert_eq!(log.give_ups, [(GiveUpReason::Deadline, 1)]);
    assert!(
        clock.now_ms() >= 2_999.0 && clock.now_ms() <= 3_000.0,
        "{}",
        clock.now_ms()
    );
    assert_eq!(
        snapshot(&reg, A, clock.now_ms()).breaker,
        BreakerState::Closed
    );
    assert_released(&reg, A);
}

#[test]
fn a_request_that_may_not_be_repeated_fails_at_once_and_still_counts_for_nothing() {
    let clock = offline_until(Some(1_000.0));
    let reg = registry();
    let p = policy(serde_json::json!({"breaker": {"failureThreshold": 1}}));
    let mut script = Script::new(&clock, &[Step::Network]);
    let (result, log) = call(&reg, &p, post(A, false), &mut script);
    assert_eq!(result, done(1, 1));
    assert!(!log.kinds.contains(&"offline"), "{:?}", log.kinds);
    assert!(clock.now_ms() < 1_000.0, "it did not wait for the network");
    let s = snapshot(&reg, A, clock.now_ms());
    assert_eq!(
        (s.breaker, s.stats.failures, s.stats.offline),
        (BreakerState::Closed, 0, 1)
    );
}

#[test]
fn online_a_network_error_counts_as_before() {
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({"retry": false, "breaker": {"failureThreshold": 1}}));
    let mut script = Script::new(&clock, &[Step::Network]);
    let (result, _) = call(&reg, &p, get(A), &mut script);
    assert!(matches!(result, CallResult::Done { .. }));
    let s = snapshot(&reg, A, clock.now_ms());
    assert_eq!(
        (s.breaker, s.stats.failures, s.stats.offline),
        (BreakerState::Open, 1, 0)
    );
}

#[test]
fn a_call_an_outbox_keeps_is_not_held_for_the_network_and_still_counts_for_nothing() {
    let clock = offline_until(Some(60_000.0));
    let reg = registry();
    let p = policy(
        serde_json::json!({"retry": {"maxAttempts": 2}, "breaker": {"failureThreshold": 1}}),
    );
    let kept = resilient_fetch::engine::Call {
        kept: true,
        ..post(A, true)
    };
    let mut script = Script::new(&clock, &[Step::Network, Step::Network]);
    let (result, log) = call(&reg, &p, kept, &mut script);
    assert_eq!(
        result,
        done(2, 2),
        "retried and given up as any failure (the outbox keeps it)"
    );
    assert!(!log.kinds.contains(&"offline"), "{:?}", log.kinds);
    assert_eq!(log.give_ups, [(GiveUpReason::MaxAttempts, 2)]);
    assert!(
        clock.now_ms() < 60_000.0,
        "not held until the network came back"
    );
    let s = snapshot(&reg, A, clock.now_ms());
    assert_eq!(
        (s.breaker, s.stats.failures, s.stats.offline),
        (BreakerState::Closed, 0, 2)
    );
}
