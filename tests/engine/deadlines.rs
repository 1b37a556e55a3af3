//! The attempt's timeout, the call's total deadline (what it cuts, and which timeouts count
//! against the breaker), and the caller's abort before, during and between attempts.

use crate::support::*;
use futures_executor::block_on;
use resilient_fetch::breaker::BreakerState;
use resilient_fetch::engine::{self, AttemptLimit, CallResult, Env};
use resilient_fetch::events::{Event, GiveUpReason};
use resilient_fetch::policy::Policy;

// ---------------------------------------------------------------- timeouts and the deadline

#[test]
fn the_deadline_cuts_retries_and_limits_the_last_attempt() {
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({
        "timeoutMs": 1000, "totalTimeoutMs": 2500,
        "retry": {"maxAttempts": 10, "jitter": "none", "baseDelayMs": 100}
    }));
    let mut script = Script::new(&clock, &[Step::Hang, Step::Hang, Step::Hang, Step::Hang]);
    let (result, log) = call(&reg, &p, get(A), &mut script);
    // 0–1000 attempt 1, wait 100, 1100–2100 attempt 2, wait 200, attempt 3 gets the 200 left.
    assert_eq!(result, done(3, 3));
    assert_eq!(
        script.limits.borrow()[2],
        AttemptLimit {
            timeout_ms: 200.0,
            is_deadline: true
        }
    );
    assert_eq!(log.give_ups, [(GiveUpReason::Deadline, 3)]);
    assert_eq!(clock.now_ms(), 2500.0);
}

#[test]
fn a_wait_past_the_deadline_gives_up_at_once() {
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({
        "totalTimeoutMs": 1000, "retry": {"jitter": "none", "baseDelayMs": 995}
    }));
    let (result, log) = call(
        &reg,
        &p,
        get(A),
        &mut Script::new(&clock, &[Step::Status(503)]),
    );
    assert_eq!(result, done(1, 1));
    assert_eq!(log.give_ups, [(GiveUpReason::Deadline, 1)]);
    assert_eq!(
        clock.now_ms(),
        10.0,
        "no sleeping when the wait cannot end in time"
    );
    assert_eq!(
        snapshot(&reg, A, 0.0).budget_tokens,
        500,
        "no tokens spent on a retry not made"
    );
}

#[test]
fn a_wait_leaving_less_than_the_minimum_gives_up_at_once() {
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({
        "totalTimeoutMs": 1000, "retry": {"jitter": "none", "baseDelayMs": 989}
    }));
    let mut script = Script::new(&clock, &[Step::Status(503)]);
    script.took_ms = 10.5;
    let (result, log) = call(&reg, &p, get(A), &mut script);
    // The wait would end at 999.5, leaving 0.5 ms: less than an attempt needs.
    assert_eq!(result, done(1, 1));
    assert_eq!(log.give_ups, [(GiveUpReason::Deadline, 1)]);
    assert_eq!(clock.now_ms(), 10.5, "no sleeping");
    assert_eq!(snapshot(&reg, A, 0.0).budget_tokens, 500);
}

#[test]
fn a_late_timer_leaving_less_than_the_minimum_sends_nothing_and_refunds() {
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({
        "totalTimeoutMs": 1000, "retry": {"jitter": "none", "baseDelayMs": 500}
    }));
    let mut log = Log::default();
    let mut on_event = |e: &Event<'_>| {
        log.record(e);
        if let Event::Retry { .. } = e {
            // The timer fires late (a busy event loop): the wait ends at 999.5, not 510.
            clock.advance(489.5);
        }
    };
    let mut script = Script::new(&clock, &[Step::Status(503), Step::Status(200)]);
    let result = block_on(engine::run(
        &reg,
        &p,
        get(A),
        &mut script,
        &clock,
        &mut on_event,
    ));
    assert_eq!(result, done(1, 1));
    assert_eq!(clock.now_ms(), 999.5);
    assert_eq!(
        script.limits.borrow().len(),
        1,
        "no attempt with 0.5 ms to live"
    );
    assert_eq!(log.give_ups, [(GiveUpReason::Deadline, 1)]);
    let s = snapshot(&reg, A, clock.now_ms());
    assert_eq!(s.stats.attempts, 1);
    assert_eq!(s.budget_tokens, 500, "the unsent retry's tokens came back");
    assert_released(&reg, A);
}

#[test]
fn a_timeout_cut_by_the_deadline_does_not_count_against_the_breaker() {
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({
        "totalTimeoutMs": 1000, "retry": {"jitter": "none", "baseDelayMs": 985},
        "breaker": {"failureThreshold": 2}
    }));
    let mut script = Script::new(&clock, &[Step::Status(503), Step::Hang]);
    let (result, log) = call(&reg, &p, get(A), &mut script);
    // 503 at 10, wait 985, attempt 2 gets the 5 ms left and times out at 1000.
    assert_eq!(result, done(2, 2));
    assert_eq!(
        script.limits.borrow()[1],
        AttemptLimit {
            timeout_ms: 5.0,
            is_deadline: true
        }
    );
    assert_eq!(log.give_ups, [(GiveUpReason::Deadline, 2)]);
    assert!(log.transitions.is_empty(), "{:?}", log.transitions);
    let s = snapshot(&reg, A, clock.now_ms());
    assert_eq!(
        (s.stats.attempts, s.stats.failures, s.stats.timeouts),
        (2, 1, 1),
        "counted as a timeout, not as a failure"
    );
    assert_eq!(s.breaker, BreakerState::Closed);
}

#[test]
fn a_black_holed_origin_trips_the_breaker_when_the_deadline_is_the_smaller_limit() {
    // totalTimeoutMs < timeoutMs: every attempt's limit is the deadline, and an origin
    // that never answers must still count as failing.
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({
        "timeoutMs": 10000, "totalTimeoutMs": 150, "retry": false,
        "breaker": {"failureThreshold": 2}
    }));
    for _ in 0..2 {
        let mut script = Script::new(&clock, &[Step::Hang]);
        let (result, _) = call(&reg, &p, get(A), &mut script);
        assert_eq!(result, done(1, 1));
        assert!(script.limits.borrow()[0].is_deadline);
    }
    let s = snapshot(&reg, A, clock.now_ms());
    assert_eq!((s.stats.failures, s.stats.timeouts), (2, 2));
    assert_eq!(s.breaker, BreakerState::Open);
    let mut script = Script::new(&clock, &[Step::Hang]);
    let (result, _) = call(&reg, &p, get(A), &mut script);
    assert!(
        matches!(result, CallResult::ShortCircuited { .. }),
        "{result:?}"
    );
    assert!(script.limits.borrow().is_empty(), "nothing sent while open");
}

#[test]
fn a_deadline_limit_counts_from_half_the_smaller_limit() {
    let p = policy(serde_json::json!({"timeoutMs": 1000, "totalTimeoutMs": 3000}));
    let limit = |ms: f64| AttemptLimit {
        timeout_ms: ms,
        is_deadline: true,
    };
    assert!(limit(500.0).timeout_counts(&p), "half of timeoutMs counts");
    assert!(
        !limit(499.0).timeout_counts(&p),
        "less says nothing about the origin"
    );
    let attempt = AttemptLimit {
        timeout_ms: 1.0,
        is_deadline: false,
    };
    assert!(attempt.timeout_counts(&p), "timeoutMs itself always counts");
    let short = policy(serde_json::json!({"timeoutMs": 1000, "totalTimeoutMs": 200}));
    assert!(limit(200.0).timeout_counts(&short));
    assert!(limit(100.0).timeout_counts(&short));
    assert!(!limit(99.0).timeout_counts(&short));
}

#[test]
fn a_timeout_of_the_attempt_limit_still_counts_near_the_deadline() {
    // The deadline is near but the attempt's own timeoutMs is shorter: a real timeout.
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({
        "timeoutMs": 5, "totalTimeoutMs": 1000, "retry": false,
        "breaker": {"failureThreshold": 1}
    }));
    let mut script = Script::new(&clock, &[Step::Hang]);
    let (result, _) = call(&reg, &p, get(A), &mut script);
    assert_eq!(result, done(1, 1));
    assert!(!script.limits.borrow()[0].is_deadline);
    let s = snapshot(&reg, A, clock.now_ms());
    assert_eq!((s.stats.failures, s.stats.timeouts), (1, 1));
    assert_eq!(s.breaker, BreakerState::Open);
}

// ---------------------------------------------------------------- the caller's abort

#[test]
fn a_caller_abort_during_the_backoff_wait_ends_the_call() {
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({"retry": {"jitter": "none", "baseDelayMs": 1000}}));
    clock.abort_at.set(Some(50.0));
    let mut script = Script::new(&clock, &[Step::Status(503), Step::Status(200)]);
    let (result, log) = call(&reg, &p, get(A), &mut script);
    assert_eq!(result, CallResult::Aborted);
    assert_eq!(script.limits.borrow().len(), 1, "the retry was never sent");
    assert_eq!(clock.now_ms(), 50.0);
    assert_eq!(log.kinds.last(), Some(&"retry"));
    assert_eq!(
        snapshot(&reg, A, 0.0).budget_tokens,
        500,
        "the unsent retry's tokens came back"
    );
    assert_released(&reg, A);
}

#[test]
fn a_caller_abort_during_an_attempt_is_not_a_failure_and_not_retried() {
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({"breaker": {"failureThreshold": 1}}));
    let (result, log) = call(
        &reg,
        &p,
        get(A),
        &mut Script::new(&clock, &[Step::Abort, Step::Status(200)]),
    );
    assert_eq!(result, done(1, 1), "the abort's output is handed back");
    assert_eq!(log.kinds, ["attemptStart", "attemptEnd"]);
    let s = snapshot(&reg, A, clock.now_ms());
    assert_eq!(
        (s.stats.failures, s.stats.successes, s.breaker),
        (0, 0, BreakerState::Closed)
    );
    assert_released(&reg, A);
}

#[test]
fn a_caller_abort_as_a_failure_arrives_is_not_counted_and_not_retried() {
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({"breaker": {"failureThreshold": 1}}));
    let mut script = Script::new(&clock, &[Step::AbortWith(503), Step::Status(200)]);
    let (result, log) = call(&reg, &p, get(A), &mut script);
    assert_eq!(result, done(1, 1));
    assert_eq!(log.kinds, ["attemptStart", "attemptEnd"]);
    let s = snapshot(&reg, A, clock.now_ms());
    assert_eq!((s.stats.failures, s.breaker), (0, BreakerState::Closed));
}

#[test]
fn an_abort_before_the_first_attempt_sends_nothing() {
    let clock = Clock::auto();
    clock.abort();
    let reg = registry();
    let mut script = Script::new(&clock, &[]);
    let (result, log) = call(&reg, &Policy::default(), get(A), &mut script);
    assert_eq!(result, CallResult::Aborted);
    assert!(script.limits.borrow().is_empty() && log.kinds.is_empty());
}
