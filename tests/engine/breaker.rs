//! The circuit breaker: it opens, short-circuits, lets probes through half-open and closes;
//! how it meets retries and their tokens; the failure-rate mode; and `refused_at_once`, the
//! fast path for an open breaker.

use crate::support::pool::{Board, Pool, spawn_call};
use crate::support::*;
use futures_executor::block_on;
use resilient_fetch::breaker::BreakerState;
use resilient_fetch::classify::Judgement;
use resilient_fetch::engine::{self, CallResult, Env};
use resilient_fetch::events::{Event, GiveUpReason};
use resilient_fetch::policy::Policy;

// ---------------------------------------------------------------- opening, probing, closing

#[test]
fn the_breaker_opens_short_circuits_then_a_probe_closes_it() {
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(
        serde_json::json!({"retry": false, "breaker": {"failureThreshold": 3, "cooldownMs": 5000}}),
    );
    for i in 0..3 {
        let (result, log) = call(
            &reg,
            &p,
            get(A),
            &mut Script::new(&clock, &[Step::Status(500)]),
        );
        assert_eq!(result, done(1, 1));
        assert_eq!(
            log.give_ups,
            [(GiveUpReason::NotRetryable, 1)],
            "retry: false"
        );
        let opened = vec![(A.to_owned(), BreakerState::Closed, BreakerState::Open)];
        assert_eq!(log.transitions, if i == 2 { opened } else { vec![] });
    }
    assert_eq!(
        snapshot(&reg, A, clock.now_ms()).breaker,
        BreakerState::Open
    );

    clock.advance(1000.0);
    let mut script = Script::new(&clock, &[Step::Status(200)]);
    let (result, log) = call(&reg, &p, get(A), &mut script);
    assert_eq!(
        result,
        CallResult::ShortCircuited {
            retry_after_ms: 4000.0
        }
    );
    assert!(script.limits.borrow().is_empty(), "nothing sent");
    assert_eq!(log.kinds, ["shortCircuit"]);
    assert_eq!(snapshot(&reg, A, clock.now_ms()).stats.short_circuits, 1);

    clock.advance(4000.0);
    assert_eq!(
        snapshot(&reg, A, clock.now_ms()).breaker,
        BreakerState::HalfOpen
    );
    let (result, log) = call(
        &reg,
        &p,
        get(A),
        &mut Script::new(&clock, &[Step::Status(200)]),
    );
    assert_eq!(result, done(1, 1));
    assert_eq!(
        log.transitions,
        [
            (A.to_owned(), BreakerState::Open, BreakerState::HalfOpen),
            (A.to_owned(), BreakerState::HalfOpen, BreakerState::Closed),
        ]
    );
    assert_eq!(
        log.kinds,
        [
            "breakerTransition",
            "attemptStart",
            "attemptEnd",
            "breakerTransition",
            "success"
        ]
    );
    assert_eq!(
        snapshot(&reg, A, clock.now_ms()).breaker,
        BreakerState::Closed
    );
    assert_released(&reg, A);
}

#[test]
fn a_failed_probe_reopens_the_breaker() {
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(
        serde_json::json!({"retry": false, "breaker": {"failureThreshold": 1, "cooldownMs": 100}}),
    );
    let _ = call(&reg, &p, get(A), &mut Script::new(&clock, &[Step::Network]));
    clock.advance(100.0);
    let (_, log) = call(&reg, &p, get(A), &mut Script::new(&clock, &[Step::Hang]));
    assert_eq!(
        log.transitions.last(),
        Some(&(A.to_owned(), BreakerState::HalfOpen, BreakerState::Open))
    );
    assert_eq!(
        snapshot(&reg, A, clock.now_ms()).breaker,
        BreakerState::Open
    );
}

#[test]
fn a_retry_into_a_breaker_this_attempt_opened_gives_up_at_once() {
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(
        serde_json::json!({"retry": {"maxAttempts": 5}, "breaker": {"failureThreshold": 2}}),
    );
    let mut script = Script::new(&clock, &vec![Step::Status(503); 5]);
    let (result, log) = call(&reg, &p, get(A), &mut script);
    assert_eq!(result, done(2, 2));
    assert_eq!(
        log.kinds[log.kinds.len() - 3..],
        ["attemptEnd", "breakerTransition", "giveUp"],
        "no retry scheduled into the open breaker"
    );
    assert_eq!(log.give_ups, [(GiveUpReason::BreakerOpen, 2)]);
    assert_eq!(log.retries.len(), 1);
    let d1 = log.retries[0].1;
    assert_eq!(
        clock.now_ms(),
        20.0 + d1,
        "no sleep after the attempt that opened it"
    );
    let s = snapshot(&reg, A, clock.now_ms());
    assert_eq!(s.stats.short_circuits, 0);
    assert_eq!(
        s.budget_tokens, 495,
        "only the retry that was sent is paid for"
    );
}

#[test]
fn a_cooldown_shorter_than_the_wait_lets_the_retry_probe() {
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({
        "retry": {"jitter": "none", "baseDelayMs": 100},
        "breaker": {"failureThreshold": 1, "cooldownMs": 50}
    }));
    let mut script = Script::new(&clock, &[Step::Status(503), Step::Status(200)]);
    let (result, log) = call(&reg, &p, get(A), &mut script);
    assert_eq!(
        result,
        done(2, 2),
        "half-open when the wait ends: the retry probes"
    );
    assert_eq!(
        log.transitions,
        [
            (A.to_owned(), BreakerState::Closed, BreakerState::Open),
            (A.to_owned(), BreakerState::Open, BreakerState::HalfOpen),
            (A.to_owned(), BreakerState::HalfOpen, BreakerState::Closed),
        ]
    );
}

#[test]
fn a_retry_the_breaker_refuses_gives_its_tokens_back() {
    let clock = Clock::auto();
    let reg = registry();
    let p = Policy::default();
    let trip = policy(serde_json::json!({"breaker": {"failureThreshold": 1}}))
        .breaker
        .expect("on");
    let mut log = Log::default();
    let mut on_event = |e: &Event<'_>| {
        log.record(e);
        if let Event::Retry { .. } = e {
            // Another call opens the breaker while this one waits to retry.
            let now = clock.now_ms();
            reg.lend().with(A, |_, s| {
                if let Ok(permit) = s.breaker.try_acquire(now, &trip, &|| 0.5) {
                    let _ = s
                        .breaker
                        .record(permit, Judgement::Failure, false, now, &trip);
                }
            });
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
    assert_eq!(result, done(1, 1), "the last response is handed back");
    assert_eq!(
        log.kinds[log.kinds.len() - 3..],
        ["retry", "shortCircuit", "giveUp"]
    );
    assert_eq!(log.give_ups, [(GiveUpReason::BreakerOpen, 1)]);
    assert_eq!(script.limits.borrow().len(), 1);
    let s = snapshot(&reg, A, clock.now_ms());
    assert_eq!(s.stats.short_circuits, 1);
    assert_eq!(
        s.budget_tokens, 500,
        "the unsent retry's 5 tokens came back"
    );
    assert_released(&reg, A);
}

#[test]
fn half_open_lets_only_half_open_max_calls_probes_through_at_once() {
    let clock = Clock::manual();
    let reg = registry();
    let board = Board::default();
    let p = policy(serde_json::json!({
        "retry": false,
        "breaker": {"failureThreshold": 1, "cooldownMs": 100, "halfOpenMaxCalls": 2}
    }));
    let mut pool = Pool::new();
    spawn_call(&mut pool, &reg, &p, &clock, &board, "opener");
    pool.run_until_stalled();
    board.answer("opener", 503);
    pool.run_until_stalled();
    clock.advance(100.0);
    for name in ["p1", "p2", "p3", "p4"] {
        spawn_call(&mut pool, &reg, &p, &clock, &board, name);
    }
    pool.run_until_stalled();
    assert_eq!(
        *board.sent.borrow(),
        ["opener", "p1", "p2"],
        "two probes out, no more"
    );
    for i in [3, 4] {
        assert_eq!(
            pool.result(i),
            Some(&CallResult::ShortCircuited {
                retry_after_ms: 100.0
            })
        );
    }
    let s = snapshot(&reg, A, clock.now_ms());
    assert_eq!(
        (s.stats.in_flight, s.stats.short_circuits, s.breaker),
        (2, 2, BreakerState::HalfOpen)
    );
    // The first probe succeeds and closes the breaker: calls go through again.
    board.answer("p1", 200);
    pool.run_until_stalled();
    assert_eq!(pool.result(1), Some(&done(1, 1)));
    assert_eq!(
        snapshot(&reg, A, clock.now_ms()).breaker,
        BreakerState::Closed
    );
    spawn_call(&mut pool, &reg, &p, &clock, &board, "after");
    pool.run_until_stalled();
    assert_eq!(*board.sent.borrow(), ["opener", "p1", "p2", "after"]);
    board.answer("p2", 200);
    board.answer("after", 200);
    pool.run_until_stalled();
    assert_eq!(pool.result(2), Some(&done(1, 1)));
    assert_eq!(pool.result(5), Some(&done(1, 1)));
    assert_released(&reg, A);
}

#[test]
fn failure_rate_mode_opens_on_the_rate_of_the_window() {
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({
        "retry": false,
        "breaker": {"mode": "failure-rate", "windowType": "count", "windowSize": 4, "minimumCalls": 4,
                    "failureRateThreshold": 0.5, "cooldownMs": 1000}
    }));
    // At most two failures in a row: consecutive mode (5) would never open.
    let statuses = [200, 503, 200, 200, 200, 503, 503];
    for (i, status) in statuses.into_iter().enumerate() {
        let (result, log) = call(
            &reg,
            &p,
            get(A),
            &mut Script::new(&clock, &[Step::Status(status)]),
        );
        assert_eq!(result, done(1, 1));
        // Call 2: 1 of 2 failed (50%) but fewer than minimumCalls seen. Call 7: the window
        // holds the last 4 calls, 2 of them failed: 50% (of all 7 calls only 43%).
        let opened = vec![(A.to_owned(), BreakerState::Closed, BreakerState::Open)];
        assert_eq!(
            log.transitions,
            if i == 6 { opened } else { vec![] },
            "call {}",
            i + 1
        );
    }
    let (result, log) = call(&reg, &p, get(A), &mut Script::new(&clock, &[]));
    assert_eq!(
        result,
        CallResult::ShortCircuited {
            retry_after_ms: 1000.0
        }
    );
    assert_eq!(log.kinds, ["shortCircuit"]);
}

// ---------------------------------------------------------------- refused at once

/// A registry whose origin A's breaker `p` opened (3 failures), and its clock.
fn opened(p: &Policy) -> (Owner, Clock) {
    let (reg, clock) = (registry(), Clock::manual());
    for _ in 0..3 {
        call(
            &reg,
            p,
            get(A),
            &mut Script::new(&clock, &[Step::Status(500)]),
        );
    }
    (reg, clock)
}

#[test]
fn refused_at_once_is_what_the_loop_decides_for_an_open_breaker() {
    let p = policy(
        serde_json::json!({"retry": false, "breaker": {"failureThreshold": 3, "cooldownMs": 5000}}),
    );
    // The same history twice: one registry asked at once, the other through the loop.
    let (sync, sync_clock) = opened(&p);
    let (run, run_clock) = opened(&p);
    sync_clock.advance(1000.0);
    run_clock.advance(1000.0);
    let now = sync_clock.now_ms();
    assert_eq!(now, run_clock.now_ms());
    let mut at_once = Log::default();
    let refused = engine::refused_at_once(&sync, &p, A, Default::default(), &|| now, &mut |e| {
        at_once.record(e)
    });
    let mut script = Script::new(&run_clock, &[Step::Status(200)]);
    let (result, looped) = call(&run, &p, get(A), &mut script);
    let Some(ms) = refused else {
        panic!("an open breaker is refused at once")
    };
    assert_eq!(result, CallResult::ShortCircuited { retry_after_ms: ms });
    assert!(script.limits.borrow().is_empty(), "nothing sent");
    assert_eq!(at_once.kinds, looped.kinds);
    assert_eq!(at_once.short_circuits, looped.short_circuits);
    assert_eq!(snapshot(&sync, A, now).stats, snapshot(&run, A, now).stats);
    assert_eq!(snapshot(&sync, A, now).stats.short_circuits, 1);
}

#[test]
fn refused_at_once_leaves_every_other_call_to_the_loop() {
    let base =
        serde_json::json!({"retry": false, "breaker": {"failureThreshold": 3, "cooldownMs": 5000}});
    let p = policy(base.clone());
    let (reg, clock) = opened(&p);
    let none = |reg: &Owner, p: &Policy, origin: &str, now: f64| {
        let mut events = 0;
        let refused =
            engine::refused_at_once(reg, p, origin, Default::default(), &|| now, &mut |_| {
                events += 1
            });
        assert_eq!(events, u32::from(refused.is_some()));
        refused
    };
    // Another origin (no state), and A once its cooldown has run out: the loop decides.
    assert_eq!(none(&reg, &p, B, clock.now_ms()), None);
    assert_eq!(none(&reg, &p, A, clock.now_ms() + 5000.0), None);
    // Anything that stands before the breaker in the loop: a bulkhead, throttling; breakers off.
    let extras = [
        Some(serde_json::json!({"bulkhead": true})),
        cfg!(feature = "throttle").then(|| serde_json::json!({"throttle": true})),
        Some(serde_json::json!({"breaker": false})),
    ];
    for extra in extras.into_iter().flatten() {
        let mut json = base.clone();
        json.as_object_mut()
            .expect("object")
            .extend(extra.as_object().expect("object").clone());
        assert_eq!(
            none(&reg, &policy(json.clone()), A, clock.now_ms()),
            None,
            "{json}"
        );
    }
    // A Retry-After hold known for the origin: the loop makes the call wait for it first.
    #[cfg(feature = "pacing")]
    {
        reg.lend()
            .with(A, |_, s| s.pacer.hold(clock.now_ms() + 100.0));
        assert_eq!(none(&reg, &p, A, clock.now_ms()), None);
        // Without pacing the hold does not count.
        let unpaced = policy(serde_json::json!({"retry": false, "rateLimit": false,
            "breaker": {"failureThreshold": 3, "cooldownMs": 5000}}));
        let refused = none(&reg, &unpaced, A, clock.now_ms());
        assert!(
            refused.is_some_and(|ms| ms > 4000.0 && ms <= 5000.0),
            "{refused:?}"
        );
    }
}
