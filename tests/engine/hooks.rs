//! The caller's decisions: `retry.shouldRetry` widening and narrowing what is retried (within
//! the safety rules, the attempts and the deadline), throwing, hanging or aborted;
//! `breaker.isFailure`; and `shouldRetry` asked in a hedged race.

use crate::support::*;
use resilient_fetch::breaker::BreakerState;
use resilient_fetch::engine::{AttemptOutcome, CallResult, Env};
use resilient_fetch::events::{GiveUpReason, RetryReason};
use resilient_fetch::policy::Policy;

// ---------------------------------------------------------------- the caller's decisions

#[test]
fn should_retry_widens_a_409_into_a_retry_priced_as_a_status() {
    let clock = Clock::auto();
    let reg = registry();
    let mut script = Script::new(&clock, &[Step::Status(409), Step::Status(200)])
        .answering(&[Answer::Retry, Answer::Default]);
    let (result, log) = call(&reg, &Policy::default(), get(A), &mut script);
    assert_eq!(result, done(2, 2));
    assert_eq!(log.retries.len(), 1);
    assert_eq!(log.retries[0].2, RetryReason::ShouldRetry);
    assert_eq!(script.asked.borrow().len(), 2, "asked after every attempt");
    let (attempt, elapsed, remaining) = script.asked.borrow()[0];
    assert_eq!((attempt, elapsed, remaining), (1, 10.0, 29_990.0));
    // A 409 is no failure for the breaker; the retry cost 5 tokens and the success gave them back.
    let s = snapshot(&reg, A, clock.now_ms());
    assert_eq!((s.stats.successes, s.stats.failures), (2, 0));
    assert_eq!(s.budget_tokens, 500);
}

#[test]
fn should_retry_narrows_a_503_into_the_final_answer() {
    let clock = Clock::auto();
    let reg = registry();
    let mut script =
        Script::new(&clock, &[Step::Status(503), Step::Status(200)]).answering(&[Answer::Stop]);
    let (result, log) = call(&reg, &Policy::default(), get(A), &mut script);
    assert_eq!(result, done(1, 1));
    assert!(log.retries.is_empty());
    assert_eq!(log.give_ups, [(GiveUpReason::ShouldRetry, 1)]);
}

#[test]
fn should_retry_cannot_repeat_an_unsafe_request_or_pass_max_attempts() {
    let clock = Clock::auto();
    let reg = registry();
    let mut script =
        Script::new(&clock, &[Step::Status(409), Step::Status(200)]).answering(&[Answer::Retry]);
    let (result, log) = call(&reg, &Policy::default(), post(A, false), &mut script);
    assert_eq!(result, done(1, 1), "a POST without a key is never repeated");
    assert_eq!(log.give_ups, [(GiveUpReason::UnsafeMethod, 1)]);
    let p = policy(serde_json::json!({"retry": {"maxAttempts": 2, "baseDelayMs": 1}}));
    let mut script = Script::new(
        &clock,
        &[Step::Status(200), Step::Status(200), Step::Status(200)],
    )
    .answering(&[Answer::Retry, Answer::Retry, Answer::Retry]);
    let (result, log) = call(&reg, &p, get(A), &mut script);
    assert_eq!(result, done(2, 2));
    assert_eq!(log.give_ups, [(GiveUpReason::MaxAttempts, 2)]);
    let mut script = Script::new(&clock, &[Step::Status(409)]).answering(&[Answer::Retry]);
    let (result, log) = call(
        &reg,
        &policy(serde_json::json!({"retry": false})),
        get(A),
        &mut script,
    );
    assert_eq!(result, done(1, 1), "retries off stay off");
    assert_eq!(log.give_ups, [(GiveUpReason::NotRetryable, 1)]);
}

#[test]
fn a_throwing_should_retry_ends_the_call_with_what_it_threw() {
    let clock = Clock::auto();
    let reg = registry();
    let mut script =
        Script::new(&clock, &[Step::Status(503), Step::Status(200)]).answering(&[Answer::Fail(99)]);
    let (result, log) = call(&reg, &Policy::default(), get(A), &mut script);
    assert_eq!(result, done(99, 1));
    assert_eq!(log.give_ups, [(GiveUpReason::ShouldRetry, 1)]);
    assert_released(&reg, A);
}

#[test]
fn a_slow_should_retry_is_cut_off_by_the_deadline() {
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({"totalTimeoutMs": 1000}));
    let mut script =
        Script::new(&clock, &[Step::Status(503), Step::Status(200)]).answering(&[Answer::Never]);
    let (result, log) = call(&reg, &p, get(A), &mut script);
    assert_eq!(result, done(1, 1));
    assert_eq!(
        clock.now_ms(),
        1000.0,
        "it waited for the hook until the deadline"
    );
    assert_eq!(
        log.give_ups,
        [(GiveUpReason::Deadline, 1)],
        "the built-in retry, refused by the deadline"
    );
    assert_released(&reg, A);
    // A success whose hook does not answer in time stays a success.
    let mut script = Script::new(&clock, &[Step::Status(200)]).answering(&[Answer::Never]);
    let (result, log) = call(&reg, &p, get(A), &mut script);
    assert_eq!(result, done(1, 1));
    assert_eq!(log.kinds.last(), Some(&"success"));
}

#[test]
fn an_abort_while_should_retry_runs_ends_the_call() {
    let clock = Clock::auto();
    clock.abort_at.set(Some(50.0));
    let reg = registry();
    let mut script = Script::new(&clock, &[Step::Status(503)]).answering(&[Answer::Never]);
    let (result, _) = call(&reg, &Policy::default(), get(A), &mut script);
    assert_eq!(result, CallResult::Aborted);
    assert_released(&reg, A);
}

#[test]
fn is_failure_keeps_an_endpoints_500s_off_the_breaker_and_can_count_a_200() {
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({"retry": false, "breaker": {"failureThreshold": 1}}));
    let mut script = Script::new(&clock, &[Step::Status(500)]);
    script.is_failure = Some(|o| match o {
        AttemptOutcome::Response { status: 500, .. } => Some(false),
        _ => None,
    });
    let (result, _) = call(&reg, &p, get(A), &mut script);
    assert_eq!(result, done(1, 1));
    let s = snapshot(&reg, A, clock.now_ms());
    assert_eq!((s.stats.successes, s.stats.failures), (1, 0));
    assert_eq!(s.breaker, BreakerState::Closed);
    let mut script = Script::new(&clock, &[Step::Status(200)]);
    script.is_failure = Some(|_| Some(true));
    let _ = call(&reg, &p, get(A), &mut script);
    assert_eq!(
        snapshot(&reg, A, clock.now_ms()).breaker,
        BreakerState::Open
    );
}

// shouldRetry in a hedged race.
#[cfg(feature = "hedge")]
mod race;
