//! Hedged reads (attempts answering on a timed plan): when a hedge goes and which answer
//! wins, the limits on hedges (`maxHedges`, attempts, budget, the origin's admission, the
//! bulkhead), the learnt p95 delay, and an abort ending every attempt in flight.

use crate::support::pool::Pool;
use crate::support::timed::{Timed, hedged_call, hedging, run_timed};
use crate::support::*;
use resilient_fetch::breaker::BreakerState;
use resilient_fetch::engine::{self, Call};
use resilient_fetch::events::Event;
use resilient_fetch::policy::{Policy, RetryPolicy};

#[test]
fn a_slow_read_is_hedged_the_hedge_wins_and_the_first_attempt_is_aborted() {
    let reg = registry();
    let p = hedging(serde_json::json!({ "delayMs": 50 }));
    let (result, kinds, dropped, now) =
        hedged_call(&reg, &p, get(A), &[(1000.0, 200), (10.0, 200)], 1.0);
    assert_eq!(result, done(2, 2), "the hedge's answer, two attempts");
    assert_eq!(now, 60.0, "answered at 50 + 10 ms, not 1000");
    assert_eq!(dropped, [1], "the slow attempt was aborted");
    assert_eq!(
        kinds,
        [
            "attemptStart",
            "attemptStart",
            "hedge",
            "attemptEnd",
            "attemptEnd",
            "success"
        ]
    );
    let a = snapshot(&reg, A, now);
    assert_eq!(
        (
            a.stats.attempts,
            a.stats.retries,
            a.stats.hedges,
            a.stats.hedge_wins
        ),
        (2, 0, 1, 1)
    );
    assert_eq!(
        (a.stats.successes, a.stats.failures),
        (1, 0),
        "the aborted loser counts as neither"
    );
    assert_released(&reg, A);
}

#[test]
fn a_read_that_answers_before_the_delay_sends_no_hedge() {
    let reg = registry();
    let p = hedging(serde_json::json!({ "delayMs": 50 }));
    let (result, kinds, dropped, _) = hedged_call(&reg, &p, get(A), &[(49.0, 200)], 1.0);
    assert_eq!(result, done(1, 1));
    assert!(dropped.is_empty() && !kinds.contains(&"hedge"));
}

#[test]
fn a_transient_failure_waits_for_the_hedge_in_flight_and_counts_against_the_origin() {
    let reg = registry();
    let p = hedging(serde_json::json!({ "delayMs": 50 }));
    // The first fails (503) at 100 ms while the hedge (sent at 50) still runs; it answers at 250.
    let (result, _, dropped, now) =
        hedged_call(&reg, &p, get(A), &[(100.0, 503), (200.0, 200)], 1.0);
    assert_eq!(result, done(2, 2));
    assert_eq!(now, 250.0);
    assert!(dropped.is_empty());
    let a = snapshot(&reg, A, now);
    assert_eq!(
        (a.stats.failures, a.stats.successes, a.stats.hedge_wins),
        (1, 1, 1)
    );
}

#[test]
fn the_first_definite_answer_wins_even_a_404() {
    let reg = registry();
    let p = hedging(serde_json::json!({ "delayMs": 20 }));
    let (result, _, dropped, now) = hedged_call(&reg, &p, get(A), &[(500.0, 200), (5.0, 404)], 1.0);
    assert_eq!((result, now, dropped), (done(2, 2), 25.0, vec![1]));
}

#[test]
fn every_attempt_failing_transiently_ends_the_send_and_the_call_retries_as_usual() {
    let reg = registry();
    let p = policy(serde_json::json!({
        "hedge": { "delayMs": 10 },
        "retry": { "maxAttempts": 3, "baseDelayMs": 1, "maxDelayMs": 1 },
    }));
    // 1 (503 at 30) and its hedge 2 (503 at 10 + 30): both fail; then retry 3 answers.
    let (result, kinds, _, _) = hedged_call(
        &reg,
        &p,
        get(A),
        &[(30.0, 503), (30.0, 503), (5.0, 200)],
        1.0,
    );
    assert_eq!(result, done(3, 3));
    assert_eq!(kinds.iter().filter(|k| **k == "retry").count(), 1);
}

#[test]
fn hedges_stop_at_max_hedges_max_attempts_and_half_the_budget() {
    // maxHedges 3, but maxAttempts 2: one hedge.
    let reg = registry();
    let p = policy(serde_json::json!({
        "hedge": { "delayMs": 10, "maxHedges": 3 }, "retry": { "maxAttempts": 2 },
    }));
    let (_, kinds, dropped, _) = hedged_call(&reg, &p, get(A), &[(500.0, 200), (500.0, 200)], 1.0);
    assert_eq!(kinds.iter().filter(|k| **k == "hedge").count(), 1);
    assert_eq!(dropped, [2]);
    // maxHedges 3 and attempts enough: three hedges, 10 ms apart.
    let reg = registry();
    let p = hedging(serde_json::json!({ "delayMs": 10, "maxHedges": 3 }));
    let p = Policy {
        retry: p.retry.map(|r| RetryPolicy {
            max_attempts: 5,
            ..r
        }),
        ..p
    };
    let (result, kinds, _, now) = hedged_call(&reg, &p, get(A), &[(500.0, 200); 4], 1.0);
    assert_eq!(kinds.iter().filter(|k| **k == "hedge").count(), 3);
    assert_eq!(
        (result, now),
        (done(1, 4), 500.0),
        "the first still answered first"
    );
    // A budget below half pays for no hedge: capacity 10, a hedge costs 6 (10 -> 4).
    let reg = registry();
    let p = policy(serde_json::json!({
        "hedge": { "delayMs": 10, "maxHedges": 3 }, "retry": { "maxAttempts": 5 },
        "retryBudget": { "capacity": 10, "retryCost": 6 },
    }));
    let (_, kinds, _, now) = hedged_call(&reg, &p, get(A), &[(500.0, 200); 4], 1.0);
    assert_eq!(kinds.iter().filter(|k| **k == "hedge").count(), 1);
    // 10 - 6 for the hedge, + 1 for the call's success on its first attempt.
    assert_eq!(snapshot(&reg, A, now).budget_tokens, 5);
}

#[test]
fn only_reads_without_a_body_are_hedged() {
    let p = hedging(serde_json::json!({ "delayMs": 10 }));
    for call in [
        post(A, true),
        Call {
            has_body: true,
            kept: false,
            method: "OPTIONS",
            ..get(A)
        },
    ] {
        let reg = registry();
        let (result, kinds, _, _) = hedged_call(&reg, &p, call, &[(100.0, 200)], 1.0);
        assert_eq!(result, done(1, 1));
        assert!(!kinds.contains(&"hedge"), "{} hedged", call.method);
    }
    let reg = registry();
    let (_, kinds, _, _) = hedged_call(
        &reg,
        &p,
        Call {
            method: "HEAD",
            ..get(A)
        },
        &[(100.0, 200)],
        1.0,
    );
    assert!(kinds.contains(&"hedge"));
}

#[test]
fn auto_hedges_at_the_origins_learnt_p95_and_not_before_it_has_learnt() {
    let reg = registry();
    let p = hedging(serde_json::json!({ "minDelayMs": 1, "maxDelayMs": 300 }));
    // Not learnt yet: the delay is maxDelayMs (300), so a 200 ms answer is not hedged.
    let (_, kinds, _, _) = hedged_call(&reg, &p, get(A), &[(200.0, 200)], 1.0);
    assert!(!kinds.contains(&"hedge"));
    // 30 answers of 8 ms teach it: p95 8 ms.
    for _ in 0..30 {
        let _ = hedged_call(&reg, &p, get(A), &[(8.0, 200)], 1.0);
    }
    let (result, kinds, _, now) = hedged_call(&reg, &p, get(A), &[(1000.0, 200), (8.0, 200)], 1.0);
    assert!(kinds.contains(&"hedge"));
    assert_eq!(
        (result, now),
        (done(2, 2), 16.0),
        "hedged at the p95 (8 ms), answered 8 ms later"
    );
}

#[test]
fn a_caller_abort_ends_every_attempt_in_flight() {
    let reg = registry();
    let p = hedging(serde_json::json!({ "delayMs": 10, "maxHedges": 2 }));
    let clock = Clock::manual();
    let mut timed = Timed::new(&clock, &[(1000.0, 200), (1000.0, 200), (1000.0, 200)]);
    let mut on_event = |_: &Event<'_>| {};
    let mut pool = Pool::new();
    pool.spawn(engine::run(
        &reg,
        &p,
        get(A),
        &mut timed,
        &clock,
        &mut on_event,
    ));
    for _ in 0..30 {
        pool.run_until_stalled();
        clock.advance(1.0);
    }
    clock.abort();
    pool.run_until_stalled();
    // The first attempt polled ends as aborted; the two others are dropped, so aborted.
    assert!(pool.tasks[0].2.is_some(), "the call ended");
    drop(pool);
    assert_eq!(
        timed.dropped.borrow().len(),
        2,
        "the other attempts in flight were aborted"
    );
    assert_released(&reg, A);
}

#[test]
fn a_hedged_attempts_retry_after_holds_the_origin_though_another_attempt_answered() {
    let reg = registry();
    let p = hedging(serde_json::json!({ "delayMs": 50 }));
    // The first gets a 429 (Retry-After: 5) at 100 ms while the hedge runs; the hedge answers.
    let (result, _, _, now) = hedged_call(&reg, &p, get(A), &[(100.0, 429), (200.0, 200)], 1.0);
    assert_eq!(result, done(2, 2));
    let wait = snapshot(&reg, A, now).wait_ms;
    assert!(
        wait > 4000.0 && wait <= 5000.0,
        "the origin is held for the Retry-After: {wait}"
    );
}

#[test]
fn a_hedge_the_origin_would_refuse_is_not_sent_and_leaves_no_trace() {
    let reg = registry();
    let p = policy(serde_json::json!({
        "hedge": { "delayMs": 10 },
        "breaker": { "mode": "consecutive", "failureThreshold": 1, "cooldownMs": 1 },
    }));
    let bp = p.breaker.clone().expect("breaker on");
    // Tripped long ago: the next call is the half-open probe, which is never hedged.
    reg.lend().with(A, |_, s| {
        let _ = s.breaker.observe(true, -1000.0, &bp);
    });
    let (result, kinds, _, now) = hedged_call(&reg, &p, get(A), &[(100.0, 200)], 1.0);
    assert_eq!(result, done(1, 1));
    assert!(
        !kinds.contains(&"hedge") && !kinds.contains(&"shortCircuit"),
        "{kinds:?}"
    );
    let a = snapshot(&reg, A, now);
    assert_eq!(
        (a.stats.short_circuits, a.stats.hedges, a.breaker),
        (0, 0, BreakerState::Closed)
    );
}

#[test]
fn a_hedge_that_fails_too_wins_nothing() {
    let reg = registry();
    let p = policy(serde_json::json!({
        "hedge": { "delayMs": 10 }, "retry": { "maxAttempts": 2 },
    }));
    let (_, _, _, now) = hedged_call(&reg, &p, get(A), &[(30.0, 503), (30.0, 503)], 1.0);
    let a = snapshot(&reg, A, now);
    assert_eq!(
        (a.stats.hedges, a.stats.hedge_wins, a.stats.failures),
        (1, 0, 2)
    );
}

#[test]
fn a_hedge_holds_a_bulkhead_slot_of_its_own_and_goes_only_if_one_is_free() {
    // One slot per origin: the call holds it, so no hedge goes.
    let reg = registry();
    let p = policy(serde_json::json!({
        "hedge": { "delayMs": 10 }, "bulkhead": { "maxConcurrent": 1, "maxQueue": 5 },
    }));
    let (_, kinds, _, _) = hedged_call(&reg, &p, get(A), &[(100.0, 200)], 1.0);
    assert!(!kinds.contains(&"hedge"), "{kinds:?}");
    // Two slots: the hedge takes the second while in flight, and gives it back.
    let reg = registry();
    let p = policy(serde_json::json!({
        "hedge": { "delayMs": 10 }, "bulkhead": { "maxConcurrent": 2 },
    }));
    let (result, kinds, dropped, now) =
        hedged_call(&reg, &p, get(A), &[(100.0, 200), (5.0, 200)], 1.0);
    assert!(kinds.contains(&"hedge"));
    assert_eq!((result, dropped), (done(2, 2), vec![1]));
    assert_eq!(
        snapshot(&reg, A, now).bulkhead_active,
        0,
        "every slot given back"
    );
}

#[test]
fn a_hedges_ended_attempt_is_timed_from_the_calls_start_for_the_callers_hooks() {
    let reg = registry();
    let p = hedging(serde_json::json!({ "delayMs": 50 }));
    let clock = Clock::manual();
    // The hedge (sent at 50) fails at 150 while the first still runs; the first answers at 300.
    let mut timed = Timed::new(&clock, &[(300.0, 200), (100.0, 503)]);
    run_timed(&reg, &p, get(A), &mut timed, &clock, 1.0);
    assert_eq!(timed.asked.borrow().as_slice(), [(2, 150.0), (1, 300.0)]);
}
