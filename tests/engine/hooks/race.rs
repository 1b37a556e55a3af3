//! `shouldRetry` asked in a hedged race (the `hedge` capability).

use crate::support::pool::Pool;
use crate::support::timed::{Timed, hedging, run_timed};
use crate::support::*;
use resilient_fetch::engine::{self, AttemptOutcome, CallResult, Env, HookAnswer};
use resilient_fetch::events::Event;
use std::cell::RefCell;

/// A `shouldRetry` that retries 404s at once and keeps the built-in answer otherwise.
fn retry_404(outcome: &AttemptOutcome) -> (HookAnswer<u32>, f64) {
    match outcome.status() {
        Some(404) => (HookAnswer::Retry, 0.0),
        _ => (HookAnswer::Default, 0.0),
    }
}

#[test]
fn an_answer_should_retry_retries_does_not_end_the_race() {
    let reg = registry();
    let p = hedging(serde_json::json!({ "delayMs": 40 }));
    let clock = Clock::manual();
    // The hedge (sent at 40) gets a 404 at 45 that the hook makes worth retrying; the first
    // attempt goes on and answers 200 at 300.
    let mut timed = Timed::new(&clock, &[(300.0, 200), (5.0, 404), (5.0, 404)]).asking(retry_404);
    let (result, kinds) = run_timed(&reg, &p, get(A), &mut timed, &clock, 1.0);
    assert_eq!(
        (result, clock.now_ms()),
        (done(1, 2), 300.0),
        "the first attempt's 200, no retry: {kinds:?}"
    );
    assert!(
        timed.dropped.borrow().is_empty(),
        "the first attempt was not aborted"
    );
    assert!(!kinds.contains(&"retry"), "{kinds:?}");
    assert_eq!(
        timed.hook_asked.borrow().as_slice(),
        [(2, Some(404), 45.0), (1, Some(200), 300.0)]
    );
    let a = snapshot(&reg, A, clock.now_ms());
    assert_eq!((a.stats.attempts, a.stats.hedge_wins), (2, 0));
    assert_released(&reg, A);
}

#[test]
fn should_retry_is_asked_about_every_attempt_of_the_race_that_ended_not_the_aborted() {
    let reg = registry();
    let p = hedging(serde_json::json!({ "delayMs": 50 }));
    let clock = Clock::manual();
    // The hedge (sent at 50) fails with a 503 at 60 while the first goes on to a 200 at 200.
    let mut timed =
        Timed::new(&clock, &[(200.0, 200), (10.0, 503)]).asking(|_| (HookAnswer::Default, 0.0));
    let (result, _) = run_timed(&reg, &p, get(A), &mut timed, &clock, 1.0);
    assert_eq!(result, done(1, 2));
    assert_eq!(
        timed.hook_asked.borrow().as_slice(),
        [(2, Some(503), 60.0), (1, Some(200), 200.0)],
        "each attempt with its own number, outcome and time"
    );
    // The hedge answers first: the first attempt, aborted, is not asked about.
    let reg = registry();
    let clock = Clock::manual();
    let mut timed =
        Timed::new(&clock, &[(500.0, 200), (10.0, 200)]).asking(|_| (HookAnswer::Default, 0.0));
    let (result, _) = run_timed(&reg, &p, get(A), &mut timed, &clock, 1.0);
    assert_eq!(result, done(2, 2));
    assert_eq!(*timed.dropped.borrow(), [1]);
    assert_eq!(timed.hook_asked.borrow().as_slice(), [(2, Some(200), 60.0)]);
    assert_released(&reg, A);
}

#[test]
fn should_retry_saying_stop_makes_a_hedges_503_the_calls_answer() {
    // "false makes this outcome the call's": the hedge's 503 at 60 ends the race.
    let reg = registry();
    let p = hedging(serde_json::json!({ "delayMs": 50 }));
    let clock = Clock::manual();
    let mut timed = Timed::new(&clock, &[(300.0, 200), (10.0, 503)]).asking(|o| match o.status() {
        Some(503) => (HookAnswer::Stop, 0.0),
        _ => (HookAnswer::Default, 0.0),
    });
    let (result, kinds) = run_timed(&reg, &p, get(A), &mut timed, &clock, 1.0);
    assert_eq!((result, clock.now_ms()), (done(2, 2), 60.0));
    assert_eq!(
        *timed.dropped.borrow(),
        [1],
        "the first attempt was aborted"
    );
    assert_eq!(kinds.last(), Some(&"giveUp"));
    assert_eq!(timed.hook_asked.borrow().as_slice(), [(2, Some(503), 60.0)]);
    assert_released(&reg, A);
}

#[test]
fn the_race_goes_on_while_should_retry_is_asked_and_a_definite_answer_ends_it() {
    let reg = registry();
    let p = hedging(serde_json::json!({ "delayMs": 50 }));
    let clock = Clock::manual();
    // The hook takes a second over the hedge's 503 (at 60); the first attempt's 200 at 100,
    // answered at once, ends the race without waiting for it.
    let mut timed = Timed::new(&clock, &[(100.0, 200), (10.0, 503)]).asking(|o| match o.status() {
        Some(503) => (HookAnswer::Retry, 1000.0),
        _ => (HookAnswer::Default, 0.0),
    });
    let (result, kinds) = run_timed(&reg, &p, get(A), &mut timed, &clock, 1.0);
    assert_eq!((result, clock.now_ms()), (done(1, 2), 100.0));
    assert_eq!(kinds.last(), Some(&"success"));
    assert_eq!(
        timed.hook_asked.borrow().as_slice(),
        [(2, Some(503), 60.0), (1, Some(200), 100.0)]
    );
    assert_released(&reg, A);
    // Both fail and the hook retries both: the second answer is the last in flight, so the
    // call retries as usual, after the slower hook's answer.
    let reg = registry();
    let clock = Clock::manual();
    let mut timed =
        Timed::new(&clock, &[(100.0, 404), (10.0, 404), (5.0, 200)]).asking(|o| match o.status() {
            Some(404) => (HookAnswer::Retry, 50.0),
            _ => (HookAnswer::Default, 0.0),
        });
    let (result, kinds) = run_timed(&reg, &p, get(A), &mut timed, &clock, 1.0);
    assert_eq!(result, done(3, 3), "{kinds:?}");
    assert_eq!(kinds.iter().filter(|k| **k == "retry").count(), 1);
    assert_eq!(
        timed.hook_asked.borrow().as_slice(),
        [
            (2, Some(404), 60.0),
            (1, Some(404), 100.0),
            (3, Some(200), 156.0)
        ],
        "the retry went once the slower hook had answered (150) and the backoff (1 ms) passed"
    );
    assert_released(&reg, A);
}

#[test]
fn an_abort_while_should_retry_is_asked_in_a_race_releases_everything() {
    // The hook over each 404 never answers in time; the caller aborts at 100. With the first
    // attempt still on the wire, it ends as aborted and answers for the call; with both
    // asked about and nothing on the wire, the call ends aborted.
    for (plan, expected, asked) in [
        ([(10_000.0, 200), (10.0, 404)], done(1, 2), 1),
        ([(60.0, 404), (20.0, 404)], CallResult::Aborted, 2),
    ] {
        let reg = registry();
        let p = hedging(serde_json::json!({ "delayMs": 50 }));
        let clock = Clock::manual();
        let mut timed = Timed::new(&clock, &plan).asking(|_| (HookAnswer::Retry, 100_000.0));
        let kinds = RefCell::new(Vec::new());
        let mut on_event = |e: &Event<'_>| kinds.borrow_mut().push(e.kind());
        let mut pool = Pool::new();
        pool.spawn(engine::run(
            &reg,
            &p,
            get(A),
            &mut timed,
            &clock,
            &mut on_event,
        ));
        for _ in 0..100 {
            pool.run_until_stalled();
            clock.advance(1.0);
        }
        clock.abort();
        pool.run_until_stalled();
        let result = pool.tasks[0].2.take();
        drop(pool);
        assert_eq!(result, Some(expected));
        assert_eq!(
            timed.hook_asked.borrow().len(),
            asked,
            "the 404s asked about"
        );
        let kinds = kinds.into_inner();
        assert!(
            !kinds
                .iter()
                .any(|k| ["retry", "success", "giveUp"].contains(k)),
            "{kinds:?}"
        );
        assert_released(&reg, A);
    }
}
