//! The bulkhead (concurrent calls, answered by hand): its slots and FIFO queue, a queued
//! call's deadline and abort, a dropped call giving everything back, and hedges giving their
//! slots to real calls.

use crate::support::pool::{Board, Pool, spawn_call};
use crate::support::*;
use resilient_fetch::breaker::BreakerState;
use resilient_fetch::engine::{CallResult, Env};

// ---------------------------------------------------------------- slots and the queue

#[test]
fn a_full_bulkhead_rejects_and_its_queue_is_fifo() {
    let clock = Clock::manual();
    let reg = registry();
    let board = Board::default();
    let p = policy(
        serde_json::json!({"retry": false, "bulkhead": {"maxConcurrent": 1, "maxQueue": 2}}),
    );
    let mut pool = Pool::new();
    for name in ["first", "second", "third", "fourth"] {
        spawn_call(&mut pool, &reg, &p, &clock, &board, name);
    }
    pool.run_until_stalled();
    assert_eq!(*board.sent.borrow(), ["first"]);
    assert_eq!(
        pool.result(3),
        Some(&CallResult::BulkheadFull),
        "queue full: rejected at once"
    );
    let s = snapshot(&reg, A, 0.0);
    assert_eq!((s.bulkhead_active, s.bulkhead_queued), (1, 2));

    board.answer("first", 200);
    pool.run_until_stalled();
    assert_eq!(pool.result(0), Some(&done(1, 1)));
    assert_eq!(
        *board.sent.borrow(),
        ["first", "second"],
        "the longest waiter goes next"
    );
    board.answer("second", 200);
    pool.run_until_stalled();
    assert_eq!(*board.sent.borrow(), ["first", "second", "third"]);
    board.answer("third", 200);
    pool.run_until_stalled();
    assert_eq!(pool.result(2), Some(&done(1, 1)));
    assert_released(&reg, A);
}

#[test]
fn a_queued_call_ends_at_the_deadline_or_on_abort() {
    let clock = Clock::manual();
    let reg = registry();
    let board = Board::default();
    let p = policy(
        serde_json::json!({"totalTimeoutMs": 1000, "bulkhead": {"maxConcurrent": 1, "maxQueue": 5}}),
    );
    let mut pool = Pool::new();
    spawn_call(&mut pool, &reg, &p, &clock, &board, "holder");
    spawn_call(&mut pool, &reg, &p, &clock, &board, "waiter");
    pool.run_until_stalled();
    clock.advance(1000.0);
    pool.run_until_stalled();
    assert_eq!(pool.result(1), Some(&CallResult::DeadlineExceeded));
    assert_eq!(
        snapshot(&reg, A, 0.0).bulkhead_queued,
        0,
        "it left the queue"
    );

    spawn_call(&mut pool, &reg, &p, &clock, &board, "aborted");
    pool.run_until_stalled();
    assert_eq!(snapshot(&reg, A, 0.0).bulkhead_queued, 1);
    clock.abort();
    pool.run_until_stalled();
    assert_eq!(pool.result(2), Some(&CallResult::Aborted));
    // The holder's answer arrives after the abort: handed back, not retried.
    board.answer("holder", 503);
    pool.run_until_stalled();
    assert_eq!(pool.result(0), Some(&done(1, 1)));
    assert_eq!(*board.sent.borrow(), ["holder"]);
    assert_released(&reg, A);
}

#[test]
fn dropping_a_call_mid_attempt_releases_everything() {
    let clock = Clock::manual();
    let reg = registry();
    let board = Board::default();
    let p = policy(serde_json::json!({
        "breaker": {"failureThreshold": 1, "cooldownMs": 10},
        "bulkhead": {"maxConcurrent": 1}
    }));
    {
        // Open the breaker, then let the cooldown pass so the next attempt is a probe.
        let mut pool = Pool::new();
        spawn_call(&mut pool, &reg, &p, &clock, &board, "opener");
        pool.run_until_stalled();
        board.answer("opener", 501);
        pool.run_until_stalled();
    }
    clock.advance(10.0);
    let mut pool = Pool::new();
    spawn_call(&mut pool, &reg, &p, &clock, &board, "probe");
    pool.run_until_stalled();
    let s = snapshot(&reg, A, clock.now_ms());
    assert_eq!(
        (s.stats.in_flight, s.bulkhead_active, s.breaker),
        (1, 1, BreakerState::HalfOpen)
    );
    pool.drop_task(0);
    assert_released(&reg, A);
    // The probe slot came back: another call may probe at once.
    spawn_call(&mut pool, &reg, &p, &clock, &board, "next");
    pool.run_until_stalled();
    assert_eq!(*board.sent.borrow(), ["opener", "probe", "next"]);
}

// Hedges and the bulkhead.
#[cfg(feature = "hedge")]
mod hedges;
