//! Retries: which failures are retried and how long each retry waits (backoff,
//! `Retry-After`), what the retry budget charges and refunds, and which requests are never
//! repeated (unsafe methods, bodies that cannot be replayed).

use crate::support::pool::{Board, Pool, spawn_call};
use crate::support::*;
use resilient_fetch::engine::{AttemptLimit, Call, Env};
use resilient_fetch::events::{GiveUpReason, OutcomeKind, RetryReason};
use resilient_fetch::policy::Policy;

// ---------------------------------------------------------------- retries and their waits

#[test]
fn flaky_5xx_then_200_takes_three_attempts() {
    let clock = Clock::auto();
    let reg = registry();
    let p = Policy::default();
    let mut script = Script::new(
        &clock,
        &[Step::Status(503), Step::Status(502), Step::Status(200)],
    );
    let (result, log) = call(&reg, &p, get(A), &mut script);
    assert_eq!(result, done(3, 3));
    assert_eq!(
        log.kinds,
        [
            "attemptStart",
            "attemptEnd",
            "retry",
            "attemptStart",
            "attemptEnd",
            "retry",
            "attemptStart",
            "attemptEnd",
            "success",
        ]
    );
    let [
        (2, d1, RetryReason::Status, false),
        (3, d2, RetryReason::Status, false),
    ] = log.retries[..]
    else {
        panic!("two status retries expected: {:?}", log.retries);
    };
    assert!((0.0..100.0).contains(&d1), "first wait in [0, base): {d1}");
    assert!(
        (0.0..200.0).contains(&d2),
        "second wait in [0, 2·base): {d2}"
    );
    assert_eq!(
        clock.now_ms(),
        30.0 + d1 + d2,
        "only the waits and the attempts took time"
    );
    let s = snapshot(&reg, A, clock.now_ms());
    assert_eq!(
        (
            s.stats.attempts,
            s.stats.retries,
            s.stats.failures,
            s.stats.successes
        ),
        (3, 2, 2, 1)
    );
    // Two retries cost 5 each; the success refunds the cost of the retry that led to it.
    assert_eq!(s.budget_tokens, 495);
    assert_released(&reg, A);
}

#[test]
fn hanging_attempts_time_out_and_are_retried() {
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({"timeoutMs": 1000}));
    let mut script = Script::new(&clock, &[Step::Hang, Step::Hang, Step::Hang]);
    let (result, log) = call(&reg, &p, get(A), &mut script);
    assert_eq!(result, done(3, 3));
    assert!(script.limits.borrow().iter().all(|l| *l
        == AttemptLimit {
            timeout_ms: 1000.0,
            is_deadline: false
        }));
    assert_eq!(log.ends, vec![(OutcomeKind::Timeout, None); 3]);
    assert!(log.retries.iter().all(|r| r.2 == RetryReason::Timeout));
    assert_eq!(log.give_ups, [(GiveUpReason::MaxAttempts, 3)]);
    let s = snapshot(&reg, A, clock.now_ms());
    assert_eq!((s.stats.timeouts, s.stats.failures), (3, 3));
    // Timeout retries cost timeoutRetryCost (10), not retryCost (5).
    assert_eq!(s.budget_tokens, 480);
    assert_released(&reg, A);
}

#[test]
fn network_errors_are_retried_at_the_timeout_cost() {
    let clock = Clock::auto();
    let reg = registry();
    let (result, log) = call(
        &reg,
        &Policy::default(),
        get(A),
        &mut Script::new(&clock, &[Step::Network, Step::Status(200)]),
    );
    assert_eq!(result, done(2, 2));
    assert_eq!(log.retries[0].2, RetryReason::Network);
    assert_eq!(
        snapshot(&reg, A, 0.0).budget_tokens,
        500,
        "10 spent, then refunded by the success"
    );
}

#[test]
fn decorrelated_waits_stay_within_their_windows() {
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({
        "totalTimeoutMs": 1000000, "breaker": false,
        "retry": {"maxAttempts": 8, "jitter": "decorrelated", "baseDelayMs": 100, "maxDelayMs": 2000}
    }));
    let (_, log) = call(
        &reg,
        &p,
        get(A),
        &mut Script::new(&clock, &vec![Step::Status(503); 8]),
    );
    assert_eq!(log.retries.len(), 7);
    let mut previous = 100.0;
    for &(_, delay, _, _) in &log.retries {
        assert!(
            (100.0..=2000.0).contains(&delay) && (delay < previous * 3.0 || delay == 100.0),
            "{delay}"
        );
        previous = delay;
    }
}

// ---------------------------------------------------------------- Retry-After

#[test]
fn retry_after_exactly_max_retry_after_is_honoured_and_one_ms_more_is_not() {
    let clock = Clock::auto();
    let reg = registry();
    let at_most = |ms: u32| policy(serde_json::json!({"retry": {"maxRetryAfterMs": ms}}));
    // Seconds: "2" is 2000 ms.
    let steps = [Step::RetryAfter(503, "2".into()), Step::Status(200)];
    let (result, log) = call(
        &reg,
        &at_most(2000),
        get(A),
        &mut Script::new(&clock, &steps),
    );
    assert_eq!(result, done(2, 2));
    assert_eq!(log.retries, [(2, 2000.0, RetryReason::Status, true)]);
    let (result, log) = call(
        &reg,
        &at_most(1999),
        get(A),
        &mut Script::new(&clock, &steps),
    );
    assert_eq!(result, done(1, 1));
    assert_eq!(log.give_ups, [(GiveUpReason::RetryAfterTooLong, 1)]);
    // An HTTP date, to the millisecond: the 429 arrives at 00:00:00.010 and names
    // 00:00:03, a wait of 2990 ms.
    for (max, honoured) in [(2990, true), (2989, false)] {
        let clock = Clock::auto();
        let date = "Wed, 01 Jan 2025 00:00:03 GMT".to_owned();
        let steps = [Step::RetryAfter(429, date), Step::Status(200)];
        let (result, log) = call(
            &registry(),
            &at_most(max),
            get(A),
            &mut Script::new(&clock, &steps),
        );
        if honoured {
            assert_eq!(result, done(2, 2));
            assert_eq!(log.retries, [(2, 2990.0, RetryReason::Status, true)]);
        } else {
            assert_eq!(result, done(1, 1));
            assert_eq!(log.give_ups, [(GiveUpReason::RetryAfterTooLong, 1)]);
        }
    }
}

#[test]
fn retry_after_seconds_are_honoured() {
    let clock = Clock::auto();
    let reg = registry();
    let mut script = Script::new(
        &clock,
        &[Step::RetryAfter(503, "2".into()), Step::Status(200)],
    );
    let (result, log) = call(&reg, &Policy::default(), get(A), &mut script);
    assert_eq!(result, done(2, 2));
    assert_eq!(log.retries, [(2, 2000.0, RetryReason::Status, true)]);
    assert_eq!(clock.now_ms(), 2020.0);
}

#[test]
fn retry_after_dates_are_honoured() {
    let clock = Clock::auto();
    let reg = registry();
    // The 503 arrives at virtual time 10, i.e. 00:00:00.010; the date says 00:00:03.
    let date = "Wed, 01 Jan 2025 00:00:03 GMT".to_owned();
    let mut script = Script::new(&clock, &[Step::RetryAfter(429, date), Step::Status(200)]);
    let (result, log) = call(&reg, &Policy::default(), get(A), &mut script);
    assert_eq!(result, done(2, 2));
    assert_eq!(log.retries, [(2, 2990.0, RetryReason::Status, true)]);
}

#[test]
fn malformed_retry_after_falls_back_to_backoff() {
    let clock = Clock::auto();
    let reg = registry();
    let mut script = Script::new(
        &clock,
        &[Step::RetryAfter(503, "soon".into()), Step::Status(200)],
    );
    let (_, log) = call(&reg, &Policy::default(), get(A), &mut script);
    let (_, delay, _, from_header) = log.retries[0];
    assert!(!from_header && delay < 100.0);
}

#[test]
fn retry_after_too_long_hands_back_that_response() {
    let clock = Clock::auto();
    let reg = registry();
    let mut script = Script::new(&clock, &[Step::RetryAfter(503, "120".into())]);
    let (result, log) = call(&reg, &Policy::default(), get(A), &mut script);
    assert_eq!(result, done(1, 1));
    assert_eq!(log.give_ups, [(GiveUpReason::RetryAfterTooLong, 1)]);
    assert_eq!(clock.now_ms(), 10.0);
    // Within maxRetryAfterMs but past the deadline: also too long. (A fresh client: this
    // one holds the whole origin for the 120 s it was told.)
    let reg = registry();
    let p = policy(serde_json::json!({"totalTimeoutMs": 5000}));
    let mut script = Script::new(&clock, &[Step::RetryAfter(503, "6".into())]);
    let (result, log) = call(&reg, &p, get(A), &mut script);
    assert_eq!(result, done(1, 1));
    assert_eq!(log.give_ups, [(GiveUpReason::RetryAfterTooLong, 1)]);
}

// ---------------------------------------------------------------- the retry budget

#[test]
fn a_first_attempt_success_earns_the_no_retry_increment() {
    let clock = Clock::auto();
    let reg = registry();
    let p = Policy::default();
    let _ = call(
        &reg,
        &p,
        get(A),
        &mut Script::new(
            &clock,
            &[Step::Status(503), Step::Status(503), Step::Status(503)],
        ),
    );
    assert_eq!(snapshot(&reg, A, 0.0).budget_tokens, 490);
    let (result, log) = call(
        &reg,
        &p,
        get(A),
        &mut Script::new(&clock, &[Step::Status(404)]),
    );
    assert_eq!(result, done(1, 1));
    assert_eq!(log.kinds.last(), Some(&"success"));
    assert_eq!(snapshot(&reg, A, 0.0).budget_tokens, 491);
}

#[test]
fn stats_count_tokens_against_the_capacity_the_calls_used() {
    let clock = Clock::auto();
    let reg = registry();
    let small = policy(serde_json::json!({"retryBudget": {"capacity": 50}}));
    let _ = call(
        &reg,
        &small,
        get(A),
        &mut Script::new(&clock, &vec![Step::Status(503); 3]),
    );
    assert_eq!(
        snapshot(&reg, A, 0.0).budget_tokens,
        40,
        "two retries of 5 from a bucket of 50"
    );
    // A call with the default capacity: tokens are counted against 500 again.
    let _ = call(
        &reg,
        &Policy::default(),
        get(A),
        &mut Script::new(&clock, &[Step::Status(200)]),
    );
    assert_eq!(snapshot(&reg, A, 0.0).budget_tokens, 491);
}

#[test]
fn an_empty_budget_stops_retries() {
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({
        "retry": {"maxAttempts": 10}, "retryBudget": {"capacity": 10, "retryCost": 5}
    }));
    let mut script = Script::new(&clock, &vec![Step::Status(503); 10]);
    let (result, log) = call(&reg, &p, get(A), &mut script);
    assert_eq!(result, done(3, 3), "two retries of 5 empty a budget of 10");
    assert_eq!(log.give_ups, [(GiveUpReason::Budget, 3)]);
    assert_eq!(reg.lend().stats(0.0)[0].budget_tokens, 0);
    // The next call on the origin gets no retry at all.
    let (result, log) = call(
        &reg,
        &p,
        get(A),
        &mut Script::new(&clock, &[Step::Status(503)]),
    );
    assert_eq!(result, done(1, 1));
    assert_eq!(log.give_ups, [(GiveUpReason::Budget, 1)]);
}

#[test]
fn dropping_a_call_during_the_backoff_wait_gives_the_tokens_back() {
    let clock = Clock::manual();
    let reg = registry();
    let board = Board::default();
    let p = policy(serde_json::json!({"retry": {"jitter": "none", "baseDelayMs": 1000}}));
    let mut pool = Pool::new();
    spawn_call(&mut pool, &reg, &p, &clock, &board, "waiting");
    pool.run_until_stalled();
    board.answer("waiting", 503);
    pool.run_until_stalled();
    assert_eq!(
        snapshot(&reg, A, 0.0).budget_tokens,
        495,
        "held for the retry"
    );
    pool.drop_task(0);
    assert_eq!(snapshot(&reg, A, 0.0).budget_tokens, 500);
    assert_released(&reg, A);
}

// ---------------------------------------------------------------- what is never retried

#[test]
fn post_without_a_key_is_not_retried() {
    let clock = Clock::auto();
    let reg = registry();
    let mut script = Script::new(&clock, &[Step::Status(503), Step::Status(200)]);
    let (result, log) = call(&reg, &Policy::default(), post(A, false), &mut script);
    assert_eq!(result, done(1, 1));
    assert_eq!(log.give_ups, [(GiveUpReason::UnsafeMethod, 1)]);
    assert_eq!(script.limits.borrow().len(), 1);
}

#[test]
fn post_with_a_key_is_retried() {
    let clock = Clock::auto();
    let reg = registry();
    let mut script = Script::new(&clock, &[Step::Status(503), Step::Status(200)]);
    let (result, _) = call(&reg, &Policy::default(), post(A, true), &mut script);
    assert_eq!(result, done(2, 2));
}

#[test]
fn a_body_that_cannot_be_replayed_is_not_retried() {
    let clock = Clock::auto();
    let reg = registry();
    let once = Call {
        replayable: false,
        has_body: true,
        kept: false,
        ..post(A, true)
    };
    let (result, log) = call(
        &reg,
        &Policy::default(),
        once,
        &mut Script::new(&clock, &[Step::Network]),
    );
    assert_eq!(result, done(1, 1));
    assert_eq!(log.give_ups, [(GiveUpReason::UnsafeMethod, 1)]);
}

#[test]
fn unlisted_failures_are_not_retried() {
    let clock = Clock::auto();
    let reg = registry();
    let (result, log) = call(
        &reg,
        &Policy::default(),
        get(A),
        &mut Script::new(&clock, &[Step::Status(501)]),
    );
    assert_eq!(result, done(1, 1));
    assert_eq!(log.give_ups, [(GiveUpReason::NotRetryable, 1)]);
}
