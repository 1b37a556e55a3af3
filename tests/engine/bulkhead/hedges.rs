//! Hedges and the bulkhead: hedges give their slots to real calls (the `hedge` capability).

use crate::support::pool::Pool;
use crate::support::timed::Timed;
use crate::support::*;
use resilient_fetch::engine::{self, CallResult, Env};
use resilient_fetch::events::Event;
use resilient_fetch::policy::Policy;
use std::cell::RefCell;
use std::collections::VecDeque;

/// How one of several calls side by side ended: its result, when, and its events (an
/// attempt's end as `attemptEnd N Kind`).
type Outcome = (CallResult<u32>, f64, Vec<String>);

/// Runs calls of `policy` side by side on the manual `clock`, each through its `Timed` from
/// its start (ms, in order), advancing the clock 1 ms at a time until all have ended.
fn side_by_side(
    reg: &Owner,
    policy: &Policy,
    clock: &Clock,
    calls: &mut [(f64, Timed<'_>)],
) -> Vec<Outcome> {
    let logs: Vec<RefCell<Vec<String>>> = calls.iter().map(|_| RefCell::default()).collect();
    let mut ended: Vec<Option<(CallResult<u32>, f64)>> = calls.iter().map(|_| None).collect();
    {
        let mut waiting: VecDeque<_> = calls.iter_mut().zip(&logs).collect();
        let mut pool = Pool::new();
        for _ in 0..100_000 {
            while waiting
                .front()
                .is_some_and(|((at, _), _)| *at <= clock.now_ms())
            {
                let Some(((_, timed), log)) = waiting.pop_front() else {
                    break;
                };
                pool.spawn(async move {
                    let mut on_event = |e: &Event<'_>| {
                        log.borrow_mut().push(match *e {
                            Event::AttemptEnd {
                                attempt, outcome, ..
                            } => format!("attemptEnd {attempt} {outcome:?}"),
                            _ => e.kind().to_owned(),
                        });
                    };
                    engine::run(reg, policy, get(A), timed, clock, &mut on_event).await
                });
            }
            pool.run_until_stalled();
            for (i, task) in pool.tasks.iter_mut().enumerate() {
                if let Some(result) = task.2.take() {
                    ended[i] = Some((result, clock.now_ms()));
                }
            }
            if waiting.is_empty() && ended.iter().all(Option::is_some) {
                break;
            }
            clock.advance(1.0);
        }
    }
    ended
        .into_iter()
        .zip(logs)
        .map(|(ended, log)| {
            let (result, at) = ended.expect("every call ends");
            (result, at, log.into_inner())
        })
        .collect()
}

fn hedged_bulkhead(bulkhead: serde_json::Value, hedge: serde_json::Value) -> Policy {
    policy(serde_json::json!({
        "hedge": hedge, "bulkhead": bulkhead,
        "retry": { "baseDelayMs": 1, "maxDelayMs": 1 },
    }))
}

#[test]
fn a_call_that_finds_the_bulkhead_full_takes_a_hedges_slot_and_the_hedge_is_aborted() {
    for bulkhead in [
        serde_json::json!({ "maxConcurrent": 2 }),
        serde_json::json!({ "maxConcurrent": 2, "maxQueue": 5 }),
    ] {
        let reg = registry();
        let p = hedged_bulkhead(bulkhead.clone(), serde_json::json!({ "delayMs": 10 }));
        let clock = Clock::manual();
        // A's first attempt and its hedge (sent at 10) hold both slots; B comes at 20.
        let mut calls = [
            (0.0, Timed::new(&clock, &[(100.0, 200), (100.0, 200)])),
            (20.0, Timed::new(&clock, &[(5.0, 200)])),
        ];
        let ended = side_by_side(&reg, &p, &clock, &mut calls);
        let (a, b) = (&ended[0], &ended[1]);
        assert_eq!(
            (&b.0, b.1),
            (&done(1, 1), 25.0),
            "B went at once ({bulkhead}): {:?}",
            b.2
        );
        assert_eq!(
            (&a.0, a.1),
            (&done(1, 2), 100.0),
            "A's own attempt answered"
        );
        assert_eq!(*calls[0].1.dropped.borrow(), [2], "A's hedge was aborted");
        assert!(
            a.2.contains(&"attemptEnd 2 Aborted".to_owned()),
            "{:?}",
            a.2
        );
        let s = snapshot(&reg, A, clock.now_ms());
        assert_eq!(
            (
                s.stats.hedges,
                s.stats.hedge_wins,
                s.stats.failures,
                s.stats.successes
            ),
            (1, 0, 0, 2),
            "the preempted hedge counts as neither a failure nor a success"
        );
        assert_released(&reg, A);
    }
}

#[test]
fn the_youngest_hedge_gives_its_slot_first_and_real_calls_keep_theirs() {
    let reg = registry();
    let p = hedged_bulkhead(
        serde_json::json!({ "maxConcurrent": 3 }),
        serde_json::json!({ "delayMs": 10, "maxHedges": 2 }),
    );
    let clock = Clock::manual();
    // A hedges at 10 and 20 (attempts 2 and 3); B at 25 takes attempt 3's slot, C at 30
    // attempt 2's; D at 35 finds three real calls and is refused.
    let mut calls = [
        (0.0, Timed::new(&clock, &[(100.0, 200); 3])),
        (25.0, Timed::new(&clock, &[(100.0, 200)])),
        (30.0, Timed::new(&clock, &[(100.0, 200)])),
        (35.0, Timed::new(&clock, &[(100.0, 200)])),
    ];
    let ended = side_by_side(&reg, &p, &clock, &mut calls);
    assert_eq!(*calls[0].1.dropped.borrow(), [3, 2]);
    assert_eq!(ended[0].0, done(1, 3));
    assert_eq!((&ended[1].0, &ended[2].0), (&done(1, 1), &done(1, 1)));
    assert_eq!(ended[3].0, CallResult::BulkheadFull);
    assert_released(&reg, A);
}

#[test]
fn a_preempted_hedge_that_was_the_last_on_the_wire_leaves_the_call_its_last_answer() {
    let reg = registry();
    let p = hedged_bulkhead(
        serde_json::json!({ "maxConcurrent": 2 }),
        serde_json::json!({ "delayMs": 10 }),
    );
    let clock = Clock::manual();
    // A's first attempt fails (503) at 15 while its hedge runs; B takes the hedge's slot at
    // 20; A goes on with the 503 and retries in its own slot.
    let mut calls = [
        (
            0.0,
            Timed::new(&clock, &[(15.0, 503), (100.0, 200), (5.0, 200)]),
        ),
        (20.0, Timed::new(&clock, &[(5.0, 200)])),
    ];
    let ended = side_by_side(&reg, &p, &clock, &mut calls);
    let (a, b) = (&ended[0], &ended[1]);
    assert_eq!(b.0, done(1, 1));
    assert_eq!((&a.0, a.1), (&done(3, 3), 26.0), "{:?}", a.2);
    assert!(a.2.contains(&"attemptEnd 2 Aborted".to_owned()) && a.2.contains(&"retry".to_owned()));
    let s = snapshot(&reg, A, clock.now_ms());
    assert_eq!((s.stats.failures, s.stats.successes), (1, 2));
    assert_released(&reg, A);
}
