//! One more attempt of a call that ended, after its body broke (`engine::run_course` with a
//! `resume::Broke`): decided as a retry of the break (attempts, deadline, budget, breaker),
//! waited for, sent and recorded as the call's attempts are, and retried as they would be.

use crate::support::*;
use futures_executor::block_on;
use resilient_fetch::engine::{self, AttemptOutcome, CallResult, Course, Env};
use resilient_fetch::events::{GiveUpReason, RetryReason};
use resilient_fetch::owner::Owner;
use resilient_fetch::policy::Policy;
use resilient_fetch::resume::Broke;

/// The call's first run through `script`, keeping its course.
fn first(reg: &Owner, p: &Policy, script: &mut Script<'_>, course: &mut Course) -> CallResult<u32> {
    let clock = script.clock;
    block_on(engine::run_course(
        reg,
        p,
        get(A),
        script,
        clock,
        &mut |_| {},
        course,
        None,
    ))
}

/// One resume of the call after its body broke with `outcome` (output 0: the break's; an
/// attempt's output is its number).
fn resume(
    reg: &Owner,
    p: &Policy,
    script: &mut Script<'_>,
    course: &mut Course,
    outcome: AttemptOutcome,
) -> (CallResult<u32>, Log) {
    let mut log = Log::default();
    let clock = script.clock;
    let broke = Broke::new(outcome, 0);
    let result = block_on(engine::run_course(
        reg,
        p,
        get(A),
        script,
        clock,
        &mut |e| log.record(e),
        course,
        Some(broke),
    ));
    (result, log)
}

#[test]
fn a_resume_is_the_call_s_next_attempt_after_its_backoff() {
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({"retry": {"maxAttempts": 4, "jitter": "none"}}));
    let mut course = Course::default();
    let mut script = Script::new(&clock, &[Step::Status(200)]);
    assert_eq!(first(&reg, &p, &mut script, &mut course), done(1, 1));
    let broke_at = clock.now_ms();
    // The range request: a 503 first (retried as any), then the 206.
    let mut script = Script::new(&clock, &[Step::Status(503), Step::Status(206)]);
    let (result, log) = resume(
        &reg,
        &p,
        &mut script,
        &mut course,
        AttemptOutcome::NetworkError,
    );
    assert_eq!(
        result,
        done(3, 3),
        "attempts 2 and 3 of the call: the 206 is the third's"
    );
    assert_eq!(course.attempts(), 3);
    assert_eq!(
        log.retries,
        [
            (2, 100.0, RetryReason::Network, false),
            (3, 200.0, RetryReason::Status, false)
        ],
        "the backoff goes on from the call's (jitter none: 100 ms, doubling)"
    );
    assert!(clock.now_ms() - broke_at >= 300.0);
    assert_eq!(snapshot(&reg, A, clock.now_ms()).stats.attempts, 3);
    // A gap is a timeout's retry.
    let mut script = Script::new(&clock, &[Step::Status(206)]);
    let (result, log) = resume(&reg, &p, &mut script, &mut course, AttemptOutcome::Timeout);
    assert_eq!(result, done(4, 4));
    assert_eq!(log.retries[0].2, RetryReason::Timeout);
    assert_released(&reg, A);
}

#[test]
fn no_attempt_left_no_retries_or_no_time_ends_it_with_the_break_s_output() {
    let clock = Clock::auto();
    let reg = registry();
    for (json, reason) in [
        (
            serde_json::json!({"retry": {"maxAttempts": 1}}),
            GiveUpReason::MaxAttempts,
        ),
        (
            serde_json::json!({"retry": false}),
            GiveUpReason::NotRetryable,
        ),
        (
            serde_json::json!({"totalTimeoutMs": 1000, "retry": {"baseDelayMs": 5000, "maxDelayMs": 5000, "jitter": "none"}}),
            GiveUpReason::Deadline,
        ),
    ] {
        let p = policy(json);
        let mut course = Course::default();
        let mut script = Script::new(&clock, &[Step::Status(200)]);
        first(&reg, &p, &mut script, &mut course);
        let mut script = Script::new(&clock, &[]);
        let (result, log) = resume(
            &reg,
            &p,
            &mut script,
            &mut course,
            AttemptOutcome::NetworkError,
        );
        assert_eq!(
            result,
            done(0, 1),
            "{reason:?}: nothing sent, the break's output"
        );
        assert_eq!(log.give_ups, [(reason, 1)]);
    }
}

#[test]
fn a_resume_pays_the_budget_and_its_breaker_admits_it() {
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({
        "retry": {"maxAttempts": 2},
        "retryBudget": {"capacity": 5, "retryCost": 5, "timeoutRetryCost": 5, "noRetryIncrement": 0}
    }));
    let tokens = |reg: &Owner| snapshot(reg, A, clock.now_ms()).budget_tokens;
    let mut course = Course::default();
    first(
        &reg,
        &p,
        &mut Script::new(&clock, &[Step::Status(200)]),
        &mut course,
    );
    let script = &mut Script::new(&clock, &[Step::Status(503)]);
    let (result, log) = resume(&reg, &p, script, &mut course, AttemptOutcome::NetworkError);
    assert_eq!(
        result,
        done(2, 2),
        "the range request's 503, its attempts spent"
    );
    assert_eq!(log.give_ups, [(GiveUpReason::MaxAttempts, 2)]);
    assert_eq!(tokens(&reg), 0, "the resume paid a network retry's tokens");
    let mut course = Course::default();
    first(
        &reg,
        &p,
        &mut Script::new(&clock, &[Step::Status(200)]),
        &mut course,
    );
    let (result, log) = resume(
        &reg,
        &p,
        &mut Script::new(&clock, &[]),
        &mut course,
        AttemptOutcome::NetworkError,
    );
    assert_eq!(result, done(0, 1));
    assert_eq!(log.give_ups, [(GiveUpReason::Budget, 1)]);

    // Another call opens the origin's breaker: the resume is not sent.
    let reg = registry();
    let p = policy(
        serde_json::json!({"breaker": {"mode": "consecutive", "failureThreshold": 1, "cooldownMs": 60000}}),
    );
    let mut course = Course::default();
    first(
        &reg,
        &p,
        &mut Script::new(&clock, &[Step::Status(200)]),
        &mut course,
    );
    let _ = call(
        &reg,
        &p,
        get(A),
        &mut Script::new(&clock, &[Step::Status(503)]),
    );
    let (result, log) = resume(
        &reg,
        &p,
        &mut Script::new(&clock, &[]),
        &mut course,
        AttemptOutcome::NetworkError,
    );
    assert_eq!(result, done(0, 1));
    assert_eq!(log.give_ups, [(GiveUpReason::BreakerOpen, 1)]);
}
