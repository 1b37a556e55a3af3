//! The registry of origins: each origin its own state, events that read the registry while a
//! call runs, and eviction, which never takes an origin a call is using or about to retry.

use crate::support::pool::{Board, Hand, Pool, spawn_call, spawn_call_to};
use crate::support::*;
use futures_executor::block_on;
use resilient_fetch::breaker::BreakerState;
use resilient_fetch::engine::{self, CallResult, Env};
use resilient_fetch::events::Event;
use resilient_fetch::policy::Policy;
use resilient_fetch::registry::{OriginSnapshot, Registry};
use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

#[test]
fn origins_are_isolated() {
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({"retry": false, "breaker": {"failureThreshold": 1}}));
    let _ = call(
        &reg,
        &p,
        get(A),
        &mut Script::new(&clock, &[Step::Status(503)]),
    );
    assert!(matches!(
        call(&reg, &p, get(A), &mut Script::new(&clock, &[])).0,
        CallResult::ShortCircuited { .. }
    ));
    let (result, _) = call(
        &reg,
        &p,
        get(B),
        &mut Script::new(&clock, &[Step::Status(200)]),
    );
    assert_eq!(result, done(1, 1));
    assert_eq!(
        snapshot(&reg, B, clock.now_ms()).breaker,
        BreakerState::Closed
    );
    assert_eq!(snapshot(&reg, B, clock.now_ms()).stats.attempts, 1);
}

#[test]
fn events_may_read_the_registry() {
    // onEvent runs JS, which may ask for stats: no borrow may be held while it runs.
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({"breaker": {"failureThreshold": 1}}));
    let mut seen = 0;
    let mut on_event = |_: &Event<'_>| {
        seen += reg.lend().stats(0.0).len();
        reg.lend().reset(None);
    };
    let mut script = Script::new(&clock, &[Step::Status(503), Step::Status(200)]);
    let _ = block_on(engine::run(
        &reg,
        &p,
        get(A),
        &mut script,
        &clock,
        &mut on_event,
    ));
    assert!(seen > 0);
}

#[test]
fn an_evicted_origin_does_not_break_a_call_in_flight() {
    let clock = Clock::auto();
    let reg = Owner::new(Registry::new(1));
    let mut script = Script::new(&clock, &[Step::Status(503), Step::Status(200)]);
    let mut on_event = |e: &Event<'_>| {
        if e.kind() == "attemptStart" {
            // Another origin's call pushes this one out of the registry mid-attempt.
            reg.lend().with(B, |_, _| ());
        }
    };
    let result = default_get_a(&reg, &mut script, &clock, &mut on_event);
    assert_eq!(result, done(2, 2));
}

#[test]
fn a_call_waiting_to_retry_keeps_its_origin_when_new_origins_arrive() {
    let clock = Clock::manual();
    let reg = Owner::new(Registry::new(2));
    let board = Board::default();
    let p = Policy::default();
    let mut pool = Pool::new();
    spawn_call(&mut pool, &reg, &p, &clock, &board, "a");
    pool.run_until_stalled();
    board.answer("a", 503);
    pool.run_until_stalled();
    assert!(pool.result(0).is_none(), "the call waits to retry");
    // Two more origins arrive while A waits (nothing of A in flight): B, used after A, is
    // the one to go, not A, whose breaker has just seen a failure.
    reg.lend().with(B, |_, _| ());
    reg.lend().with("https://c.test", |_, _| ());
    assert_eq!(
        reg.lend()
            .stats(0.0)
            .iter()
            .map(|s| s.origin.as_str())
            .collect::<Vec<_>>(),
        [A, "https://c.test"]
    );
    // Past any first backoff wait (at most maxDelayMs), well within the total deadline.
    clock.advance(f64::from(p.retry.as_ref().expect("retry on").max_delay_ms));
    clock.wake_all();
    pool.run_until_stalled();
    board.answer("a", 200);
    pool.run_until_stalled();
    assert_eq!(pool.result(0), Some(&done(2, 2)));
    let a = snapshot(&reg, A, clock.now_ms());
    assert_eq!(
        (a.stats.attempts, a.stats.failures, a.stats.successes),
        (2, 1, 1)
    );
    // Idle again once the call is over.
    assert!(reg.lend().with(A, |_, s| s.waiting == 0 && s.is_idle()));
}

#[test]
fn an_origin_about_to_be_retried_is_kept_through_the_events_too() {
    let clock = Clock::auto();
    let reg = Owner::new(Registry::new(2));
    let mut script = Script::new(&clock, &[Step::Status(503), Step::Status(200)]);
    let mut ends = 0;
    let mut on_event = |e: &Event<'_>| {
        if e.kind() == "attemptEnd" {
            ends += 1;
            if ends == 1 {
                // Between the failed attempt and the retry's wait, two origins arrive.
                reg.lend().with(B, |_, _| ());
                reg.lend().with("https://c.test", |_, _| ());
            }
        }
    };
    let result = default_get_a(&reg, &mut script, &clock, &mut on_event);
    assert_eq!(result, done(2, 2));
    let a = snapshot(&reg, A, clock.now_ms());
    assert_eq!(
        (a.stats.attempts, a.stats.failures),
        (2, 1),
        "A's entry (and the failure it saw) was kept, not made afresh"
    );
    assert_released(&reg, A);
}

#[test]
fn an_origin_with_a_call_between_attempts_is_not_evicted() {
    let clock = Clock::manual();
    let reg = Owner::new(Registry::new(2));
    let board = Board::default();
    let p = policy(serde_json::json!({
        "retry": {"jitter": "none", "baseDelayMs": 1000},
        "bulkhead": {"maxConcurrent": 1}
    }));
    let mut pool = Pool::new();
    // a1 gets a 503 and waits to retry, holding A's only bulkhead slot.
    spawn_call_to(&mut pool, &reg, &p, &clock, &board, A, "a1");
    pool.run_until_stalled();
    board.answer("a1", 503);
    pool.run_until_stalled();
    assert_eq!(snapshot(&reg, A, 0.0).stats.in_flight, 0);
    // Calls to two other origins fill the registry of 2.
    const C: &str = "https://c.test";
    for (origin, name) in [(B, "b"), (C, "c")] {
        spawn_call_to(&mut pool, &reg, &p, &clock, &board, origin, name);
        pool.run_until_stalled();
        board.answer(name, 200);
        pool.run_until_stalled();
    }
    let kept: Vec<String> = reg
        .lend()
        .stats(0.0)
        .into_iter()
        .map(|s| s.origin)
        .collect();
    assert_eq!(kept, [A, C], "the idle B went, not the busy A");
    // A second call to A finds A's slot still taken.
    spawn_call_to(&mut pool, &reg, &p, &clock, &board, A, "a2");
    pool.run_until_stalled();
    assert_eq!(pool.result(3), Some(&CallResult::BulkheadFull));
    clock.advance(1000.0);
    pool.run_until_stalled();
    board.answer("a1", 200);
    pool.run_until_stalled();
    assert_eq!(pool.result(0), Some(&done(2, 2)));
    assert_eq!(
        *board.sent.borrow(),
        ["a1", "b", "c", "a1"],
        "never two calls to A at once"
    );
    assert_released(&reg, A);
}

/// A call's future, polled by hand.
type Polled<'a> = Pin<Box<dyn Future<Output = CallResult<u32>> + 'a>>;

/// Polls each call once; none has ended.
fn poll_each(calls: &RefCell<Vec<Polled<'_>>>) {
    let mut cx = Context::from_waker(Waker::noop());
    for call in calls.borrow_mut().iter_mut() {
        assert!(call.as_mut().poll(&mut cx).is_pending());
    }
}

/// Two calls to A, one waiting to retry (its wait hold and budget tokens taken) and one on
/// the wire (its attempt counted in flight), dropped by a third call's `onEvent` handler;
/// `lent`: the handler holds the registry meanwhile, so every hold given back finds it lent.
/// Returns A's snapshot, whether A is idle, and the third call's result.
fn dropped_by_a_handler(lent: bool) -> (OriginSnapshot, bool, Option<CallResult<u32>>) {
    let (clock, reg, board, p) = (
        Clock::manual(),
        registry(),
        Board::default(),
        Policy::default(),
    );
    let calls: RefCell<Vec<Polled<'_>>> = RefCell::default();
    for name in ["waiting", "sending"] {
        let (reg, p, clock, board) = (&reg, &p, &clock, &board);
        calls.borrow_mut().push(Box::pin(async move {
            let mut transport = Hand { board, name };
            engine::run(reg, p, get(A), &mut transport, clock, &mut |_| {}).await
        }));
    }
    poll_each(&calls);
    board.answer("waiting", 503);
    poll_each(&calls);
    let busy = snapshot(&reg, A, clock.now_ms());
    assert_eq!(busy.stats.in_flight, 1, "one call on the wire");
    assert!(busy.budget_tokens < Policy::default().retry_budget.expect("on").capacity);
    let mut dropper = Box::pin(async {
        let mut transport = Hand {
            board: &board,
            name: "dropper",
        };
        let mut on_event = |e: &Event<'_>| {
            if e.kind() == "attemptStart" {
                let loan = lent.then(|| reg.lend());
                calls.borrow_mut().clear();
                drop(loan);
            }
        };
        engine::run(&reg, &p, get(A), &mut transport, &clock, &mut on_event).await
    });
    let mut cx = Context::from_waker(Waker::noop());
    assert!(dropper.as_mut().poll(&mut cx).is_pending());
    board.answer("dropper", 200);
    let ended = match dropper.as_mut().poll(&mut cx) {
        Poll::Ready(result) => Some(result),
        Poll::Pending => None,
    };
    let idle = reg.lend().with(A, |_, s| s.waiting == 0 && s.is_idle());
    (snapshot(&reg, A, clock.now_ms()), idle, ended)
}

#[test]
fn calls_dropped_while_a_handler_holds_the_registry_give_everything_back() {
    // Run in a release build too (scripts/test.sh: `cargo test --release`), where nothing
    // but the queue keeps these updates.
    let (freely, idle_freely, ended_freely) = dropped_by_a_handler(false);
    let (lent, idle_lent, ended_lent) = dropped_by_a_handler(true);
    assert_eq!(ended_freely, Some(done(1, 1)));
    assert_eq!(ended_lent, Some(done(1, 1)));
    assert!(idle_freely, "nothing held once the calls are dropped");
    assert!(
        idle_lent,
        "every hold given back, though the registry was lent"
    );
    assert_eq!(lent.stats.in_flight, 0);
    assert_eq!(
        lent.budget_tokens, freely.budget_tokens,
        "the tokens refunded"
    );
    assert_eq!(lent, freely, "every count as when the registry was free");
    // The dropped attempt counts as an abort: three attempts, one failure, one success.
    assert_eq!(
        (
            lent.stats.attempts,
            lent.stats.failures,
            lent.stats.successes
        ),
        (3, 1, 1)
    );
}

#[test]
#[cfg(debug_assertions)]
fn an_attempt_searches_the_registry_once_at_most() {
    // A call's steps on its origin (admission, the facts of its decision, its end, a
    // refund) find the entry where the last step left it; only a new origin, or one another
    // call moved away from, is looked for.
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({"retry": {"baseDelayMs": 0}}));
    let searches = |reg: &Owner| reg.read().map(|r| r.searches()).unwrap_or(u64::MAX);
    let steps = [Step::Status(200)];
    let (result, _) = call(&reg, &p, get(A), &mut Script::new(&clock, &steps));
    assert_eq!(result, done(1, 1));
    assert_eq!(searches(&reg), 1, "a new origin: looked for once");
    let _ = call(&reg, &p, get(A), &mut Script::new(&clock, &steps));
    assert_eq!(searches(&reg), 1, "the same origin again: where it was");
    // Three attempts to a new origin (two 503s retried): one search for all three.
    let steps = [Step::Status(503), Step::Status(503), Step::Status(200)];
    let (result, _) = call(&reg, &p, get(B), &mut Script::new(&clock, &steps));
    assert_eq!(result, done(3, 3));
    assert_eq!(searches(&reg), 2, "B: looked for once");
    let before = searches(&reg);
    let _ = call(
        &reg,
        &p,
        get(A),
        &mut Script::new(&clock, &[Step::Status(200)]),
    );
    assert_eq!(searches(&reg) - before, 1, "back to A: one search");
}
