//! Pacing by rate-limit headers: waits for a spent quota or a `Retry-After` hold, bookings of
//! the quota left, `maxWaitMs`, waiters that give up or are aborted, and the one call that
//! asks for the others after a far reset.

use crate::support::pool::Pool;
use crate::support::*;
use futures_executor::block_on;
use resilient_fetch::engine::{self, AttemptLimit, AttemptOutcome, CallResult, Env, Transport};
use resilient_fetch::events::Event;
use resilient_fetch::pacing::Why;
use resilient_fetch::policy::Policy;
use resilient_fetch::rate_limit::{MAX_RESET_MS, Quota};
use resilient_fetch::registry::Registry;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::{Future, poll_fn};
use std::task::Poll;

/// Events of one kind with the origin wait they state.
fn pacing_events(events: &[Paced], kind: &str) -> Vec<(f64, Why)> {
    events
        .iter()
        .filter(|(k, ..)| k == kind)
        .filter_map(|(_, ms, why)| why.map(|w| (*ms, w)))
        .collect()
}

#[test]
fn a_spent_quota_makes_the_next_call_wait_for_the_reset() {
    let (reg, clock) = (registry(), Clock::auto());
    let p = Policy::default();
    // The answer (at t = 10) says nothing is left until t = 510.
    let (first, _, _) = paced_get(&reg, &p, &clock, &[Step::Quota(200, 0, 500.0)]);
    assert_eq!(first, done(1, 1));
    assert_eq!(snapshot(&reg, A, 10.0).quota_remaining, Some(0));
    assert_eq!(snapshot(&reg, A, 10.0).wait_ms, 500.0);
    let (second, events, sent) = paced_get(&reg, &p, &clock, &[Step::Status(200)]);
    assert_eq!((second, sent), (done(1, 1), 1));
    assert_eq!(
        pacing_events(&events, "rateLimitWait"),
        [(500.0, Why::Quota)]
    );
    assert_eq!(
        events[0].0, "rateLimitWait",
        "it waited before its attempt started"
    );
    // Sent at the reset (510), answered 10 ms later.
    assert_eq!(clock.now_ms(), 520.0);
}

#[test]
fn a_wait_longer_than_max_wait_or_the_deadline_rejects_at_once_without_sending() {
    for (p, why) in [
        (
            policy(serde_json::json!({"rateLimit": {"maxWaitMs": 100}})),
            "maxWaitMs",
        ),
        (
            policy(serde_json::json!({"totalTimeoutMs": 300})),
            "deadline",
        ),
    ] {
        let (reg, clock) = (registry(), Clock::auto());
        paced_get(&reg, &p, &clock, &[Step::Quota(200, 0, 500.0)]);
        let (result, events, sent) = paced_get(&reg, &p, &clock, &[]);
        assert_eq!(sent, 0, "{why}: nothing sent");
        assert_eq!(
            result,
            CallResult::RateLimited {
                retry_after_ms: 500.0,
                reason: Why::Quota
            },
            "{why}"
        );
        assert_eq!(
            pacing_events(&events, "rateLimitRejected"),
            [(500.0, Why::Quota)]
        );
        assert_eq!(clock.now_ms(), 10.0, "{why}: rejected without waiting");
        assert_eq!(snapshot(&reg, A, 10.0).stats.rate_limited, 1);
    }
}

#[test]
fn sends_take_the_quota_left_then_wait() {
    let (reg, clock) = (registry(), Clock::manual());
    let p = Policy::default();
    let mut script = Script::new(&clock, &[Step::Quota(200, 2, 1_000.0)]);
    script.took_ms = 0.0;
    let mut log = Log::default();
    // Manual clock, answers take no time: the first call learns "2 left until t = 1000".
    let first = block_on(engine::run(
        &reg,
        &p,
        get(A),
        &mut script,
        &clock,
        &mut |e| log.record(e),
    ));
    assert_eq!(first, done(1, 1));
    for expected_wait in [None, None, Some(1_000.0)] {
        let state = reg.lend().with(A, |_, s| s.pacer.wait(0.0));
        assert_eq!(state.map(|(ms, _)| ms), expected_wait);
        if expected_wait.is_none() {
            reg.lend().with(A, |_, s| s.pacer.take(0.0));
        }
    }
}

#[test]
fn retry_after_on_a_429_holds_the_whole_origin() {
    let (reg, clock) = (registry(), Clock::auto());
    let p = policy(serde_json::json!({"retry": false}));
    let (first, ..) = paced_get(&reg, &p, &clock, &[Step::RetryAfter(429, "2".into())]);
    assert_eq!(first, done(1, 1));
    // Another call of the client (another caller) waits the hold out before sending.
    let (second, events, sent) = paced_get(&reg, &p, &clock, &[Step::Status(200)]);
    assert_eq!((second, sent), (done(1, 1), 1));
    assert_eq!(
        pacing_events(&events, "rateLimitWait"),
        [(2_000.0, Why::RetryAfter)]
    );
    // B is not held.
    let mut script = Script::new(&clock, &[Step::Status(200)]);
    let mut log = Log::default();
    let before = clock.now_ms();
    block_on(engine::run(
        &reg,
        &p,
        get(B),
        &mut script,
        &clock,
        &mut |e| log.record(e),
    ));
    assert_eq!(clock.now_ms() - before, 10.0);
    assert!(!log.kinds.contains(&"rateLimitWait"));
}

#[test]
fn a_hold_lasts_at_most_max_retry_after_ms() {
    let clock = Clock::auto();
    for (p, held) in [
        (
            policy(serde_json::json!({"retry": {"maxRetryAfterMs": 5000}})),
            5_000.0,
        ),
        (policy(serde_json::json!({"retry": false})), 30_000.0),
    ] {
        let reg = registry();
        paced_get(&reg, &p, &clock, &[Step::RetryAfter(503, "3600".into())]);
        assert_eq!(snapshot(&reg, A, clock.now_ms()).wait_ms, held);
    }
}

#[test]
fn a_retry_after_on_a_500_or_200_holds_nothing() {
    for status in [500, 200] {
        let (reg, clock) = (registry(), Clock::auto());
        let p = policy(serde_json::json!({"retry": false}));
        paced_get(&reg, &p, &clock, &[Step::RetryAfter(status, "2".into())]);
        assert_eq!(snapshot(&reg, A, clock.now_ms()).wait_ms, 0.0, "{status}");
    }
}

#[test]
fn rate_limit_false_neither_learns_nor_waits() {
    let (reg, clock) = (registry(), Clock::auto());
    let p = policy(serde_json::json!({"rateLimit": false}));
    paced_get(&reg, &p, &clock, &[Step::Quota(200, 0, 500.0)]);
    paced_get(&reg, &p, &clock, &[Step::RetryAfter(503, "5".into())]);
    let (result, events, sent) = paced_get(&reg, &p, &clock, &[Step::Status(200)]);
    assert_eq!((result, sent), (done(1, 1), 1));
    assert!(events.iter().all(|(k, ..)| !k.starts_with("rateLimit")));
}

#[test]
fn a_retry_that_must_wait_too_long_gives_up_with_the_last_answer() {
    let (reg, clock) = (registry(), Clock::auto());
    let p = policy(serde_json::json!({"rateLimit": {"maxWaitMs": 1000}}));
    // A 503 whose quota headers say "none left for 5 s": the retry cannot wait that long.
    let (result, events, sent) = paced_get(&reg, &p, &clock, &[Step::Quota(503, 0, 5_000.0)]);
    assert_eq!((result, sent), (done(1, 1), 1));
    let kinds: Vec<&str> = events.iter().map(|(k, ..)| k.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "attemptStart",
            "attemptEnd",
            "retry",
            "rateLimitRejected",
            "giveUp"
        ]
    );
    assert_released(&reg, A);
}

#[test]
fn an_abort_during_a_rate_limit_wait_ends_the_call_without_sending() {
    let (reg, clock) = (registry(), Clock::auto());
    let p = Policy::default();
    paced_get(&reg, &p, &clock, &[Step::Quota(200, 0, 5_000.0)]);
    clock.abort_at.set(Some(1_000.0));
    let (result, _, sent) = paced_get(&reg, &p, &clock, &[]);
    assert_eq!((result, sent), (CallResult::Aborted, 0));
    assert_released(&reg, A);
}

fn limited(remaining: u32, reset_ms: f64, limit: u32, window_ms: f64) -> Quota {
    Quota {
        remaining,
        reset_ms,
        limit: Some(limit),
        window_ms: Some(window_ms),
    }
}

/// A GET to A whose `rateLimitWait` events run `on_wait` (with the registry free to use).
fn get_on_wait(
    reg: &Owner,
    p: &Policy,
    clock: &Clock,
    on_wait: &dyn Fn(&Owner),
) -> (CallResult<u32>, Vec<&'static str>) {
    let mut script = Script::new(clock, &[Step::Status(200)]);
    let mut kinds = Vec::new();
    let result = block_on(engine::run(reg, p, get(A), &mut script, clock, &mut |e| {
        kinds.push(e.kind());
        if let Event::RateLimitWait { .. } = e {
            on_wait(reg);
        }
    }));
    (result, kinds)
}

#[test]
fn a_booked_send_still_waits_for_a_hold_that_came_after_it_was_booked() {
    let (reg, clock) = (registry(), Clock::auto());
    let p = Policy::default();
    reg.lend().with(A, |_, s| {
        s.pacer
            .learn(&limited(0, 1_000.0, 1, 1_000.0), 0.0, f64::INFINITY)
    });
    // Booked for t = 1 000; while it waits, a 429 elsewhere holds the origin until 5 000.
    let hold = |reg: &Owner| {
        reg.lend().with(A, |_, s| s.pacer.hold(5_000.0));
    };
    let (result, kinds) = get_on_wait(&reg, &p, &clock, &hold);
    assert_eq!(result, done(1, 1));
    assert_eq!(
        clock.now_ms(),
        5_010.0,
        "sent when the hold ended, not into it"
    );
    assert_eq!(kinds.iter().filter(|k| **k == "rateLimitWait").count(), 2);
}

#[test]
fn a_booking_given_up_goes_back_to_the_queue() {
    let (reg, clock) = (registry(), Clock::auto());
    let p = Policy::default();
    reg.lend().with(A, |_, s| {
        s.pacer
            .learn(&limited(0, 1_000.0, 1, 1_000.0), 0.0, f64::INFINITY)
    });
    clock.abort_at.set(Some(500.0));
    let (result, _, sent) = paced_get(&reg, &p, &clock, &[]);
    assert_eq!((result, sent), (CallResult::Aborted, 0));
    // The aborted call's slot (t = 1 000) is the next caller's, not one a window later.
    let next = reg
        .lend()
        .with(A, |_, s| s.pacer.admit(500.0, f64::INFINITY, None));
    assert!(
        matches!(next, resilient_fetch::pacing::Admit::Booked { due, .. } if due == 500.0),
        "{next:?}"
    );
    assert_released(&reg, A);
}

#[test]
fn an_origin_a_call_waits_for_is_not_evicted() {
    let clock = Clock::auto();
    let reg = Owner::new(Registry::new(1));
    let p = Policy::default();
    reg.lend().with(A, |_, s| {
        s.pacer
            .learn(&limited(0, 1_000.0, 1, 1_000.0), 0.0, f64::INFINITY)
    });
    // While A's call waits, another origin needs the registry's only place.
    let kept = Cell::new(false);
    let touch_b = |reg: &Owner| {
        reg.lend().with(B, |_, _| ());
        kept.set(
            reg.lend()
                .peek(A)
                .is_some_and(|s| s.pacer.wait(0.0).is_some()),
        );
    };
    get_on_wait(&reg, &p, &clock, &touch_b);
    assert!(
        kept.get(),
        "A and what its pacing knows were kept while its call waited"
    );
}

#[test]
fn max_wait_ms_bounds_the_waits_of_a_call_together() {
    let (reg, clock) = (registry(), Clock::auto());
    let p = policy(serde_json::json!({"totalTimeoutMs": 100000}));
    reg.lend().with(A, |_, s| {
        s.pacer.hold(20_000.0);
        s.pacer
            .learn(&limited(0, 40_000.0, 1, 20_000.0), 0.0, f64::INFINITY);
    });
    // 20 s for the hold, then 20 s more for the quota: 40 s in all, over 30 s.
    let (result, events, sent) = paced_get(&reg, &p, &clock, &[]);
    assert_eq!(sent, 0);
    assert!(
        matches!(
            result,
            CallResult::RateLimited {
                reason: Why::Quota,
                ..
            }
        ),
        "{result:?}"
    );
    assert_eq!(
        pacing_events(&events, "rateLimitWait"),
        [(20_000.0, Why::RetryAfter)]
    );
}

/// One caller of several on the manual clock, with its own abort switch.
struct Caller<'c> {
    clock: &'c Clock,
    aborted: Cell<bool>,
}

impl<'c> Caller<'c> {
    fn new(clock: &'c Clock) -> Self {
        Caller {
            clock,
            aborted: Cell::new(false),
        }
    }

    fn abort(&self) {
        self.aborted.set(true);
        self.clock.wake_all();
    }
}

impl Env for Caller<'_> {
    fn now_ms(&self) -> f64 {
        self.clock.now_ms()
    }

    fn unix_ms(&self) -> f64 {
        self.clock.unix_ms()
    }

    fn random(&self) -> f64 {
        self.clock.random()
    }

    fn sleep(&self, ms: f64) -> impl Future<Output = ()> {
        self.clock.sleep(ms)
    }

    fn aborted(&self) -> bool {
        self.aborted.get()
    }

    fn abort_wait(&self) -> impl Future<Output = ()> {
        poll_fn(move |cx| {
            if self.aborted.get() {
                Poll::Ready(())
            } else {
                self.clock.park(cx);
                Poll::Pending
            }
        })
    }
}

/// A fixed-window quota server on the manual clock, as the fault server's `/quota`: `limit`
/// requests per `span` ms (windows at multiples of `span`), every answer stating the limit,
/// the window and what is left; beyond the limit a 429 with `Retry-After` (whole seconds to
/// the window's end). It answers at once and logs every request: (caller, sent at, status).
struct Windowed<'c> {
    clock: &'c Clock,
    limit: u32,
    span: f64,
    log: RefCell<Vec<(&'static str, f64, u16)>>,
}

impl Windowed<'_> {
    fn answer(&self, name: &'static str) -> AttemptOutcome {
        let now = self.clock.now_ms();
        let start = (now / self.span).floor() * self.span;
        let mut log = self.log.borrow_mut();
        let used = 1 + log.iter().filter(|(_, t, _)| *t >= start).count() as u32;
        let status = if used <= self.limit { 200 } else { 429 };
        log.push((name, now, status));
        let reset_ms = start + self.span - now;
        AttemptOutcome::Response {
            status,
            retry_after: (status == 429).then(|| (reset_ms / 1000.0).ceil().to_string()),
            quota: Some(limited(
                self.limit.saturating_sub(used),
                reset_ms,
                self.limit,
                self.span,
            )),
        }
    }
}

/// A call named `name` to A through `server`, aborted by its `caller`.
fn spawn_windowed<'a>(
    pool: &mut Pool<'a>,
    reg: &'a Owner,
    policy: &'a Policy,
    caller: &'a Caller<'a>,
    server: &'a Windowed<'a>,
    name: &'static str,
) {
    struct To<'s>(&'s Windowed<'s>, &'static str);
    impl Transport for To<'_> {
        type Output = u32;
        fn send(
            &self,
            attempt: u32,
            _: AttemptLimit,
            _: Option<resilient_fetch::failover::Alternate<'_>>,
        ) -> impl Future<Output = (AttemptOutcome, u32)> {
            std::future::ready((self.0.answer(self.1), attempt))
        }
    }
    pool.spawn(async move {
        let mut transport = To(server, name);
        engine::run(reg, policy, get(A), &mut transport, caller, &mut |_| {}).await
    });
}

#[test]
fn a_waiter_aborted_gives_its_slot_to_the_waiters_behind_it() {
    let clock = Clock::manual();
    let reg = registry();
    let p = Policy::default();
    let server = Windowed {
        clock: &clock,
        limit: 2,
        span: 1_000.0,
        log: RefCell::new(Vec::new()),
    };
    let callers: Vec<Caller<'_>> = (0..7).map(|_| Caller::new(&clock)).collect();
    let mut pool = Pool::new();
    // Two calls spend the window [0, 1 000); three more find it spent and wait.
    for (i, name) in ["spent 1", "spent 2", "a", "b", "c"]
        .into_iter()
        .enumerate()
    {
        spawn_windowed(&mut pool, &reg, &p, &callers[i], &server, name);
        pool.run_until_stalled();
    }
    assert_eq!(server.log.borrow().len(), 2, "a, b and c wait");
    clock.advance(30.0);
    callers[2].abort();
    pool.run_until_stalled();
    assert_eq!(pool.result(2), Some(&CallResult::Aborted));
    // The window [1 000, 2 000) holds two sends: b's, and c's in the slot a gave back.
    clock.advance(970.0);
    pool.run_until_stalled();
    // A new call there waits for the window after; at 2 000 another goes at once.
    spawn_windowed(&mut pool, &reg, &p, &callers[5], &server, "d");
    pool.run_until_stalled();
    clock.advance(1_000.0);
    pool.run_until_stalled();
    spawn_windowed(&mut pool, &reg, &p, &callers[6], &server, "e");
    pool.run_until_stalled();
    assert_eq!(
        *server.log.borrow(),
        [
            ("spent 1", 0.0, 200),
            ("spent 2", 0.0, 200),
            ("b", 1_000.0, 200),
            ("c", 1_000.0, 200),
            ("d", 2_000.0, 200),
            ("e", 2_000.0, 200),
        ]
    );
    for i in [0, 1, 3, 4, 5, 6] {
        assert_eq!(pool.result(i), Some(&done(1, 1)), "call {i}");
    }
    assert_released(&reg, A);
}

/// Answers from a script on the manual clock: each request takes the next
/// `(took_ms, status, quota)` and answers after `took_ms`; every request is logged
/// (caller, sent at).
struct Claims<'c> {
    clock: &'c Clock,
    script: RefCell<VecDeque<(f64, u16, Option<Quota>)>>,
    log: RefCell<Vec<(&'static str, f64)>>,
}

impl<'c> Claims<'c> {
    fn new(clock: &'c Clock, script: &[(f64, u16, Option<Quota>)]) -> Self {
        Claims {
            clock,
            script: RefCell::new(script.iter().copied().collect()),
            log: RefCell::new(Vec::new()),
        }
    }
}

/// A call named `name` to A through `server`.
fn spawn_claims<'a>(
    pool: &mut Pool<'a>,
    reg: &'a Owner,
    policy: &'a Policy,
    clock: &'a Clock,
    server: &'a Claims<'a>,
    name: &'static str,
) {
    struct To<'s>(&'s Claims<'s>, &'static str);
    impl Transport for To<'_> {
        type Output = u32;
        fn send(
            &self,
            attempt: u32,
            _: AttemptLimit,
            _: Option<resilient_fetch::failover::Alternate<'_>>,
        ) -> impl Future<Output = (AttemptOutcome, u32)> {
            let (took, status, quota) =
                (self.0.script.borrow_mut().pop_front()).unwrap_or((0.0, 200, None));
            self.0
                .log
                .borrow_mut()
                .push((self.1, self.0.clock.now_ms()));
            let answered = self.0.clock.sleep(took);
            async move {
                answered.await;
                let outcome = AttemptOutcome::Response {
                    status,
                    retry_after: None,
                    quota,
                };
                (outcome, attempt)
            }
        }
    }
    pool.spawn(async move {
        let mut transport = To(server, name);
        engine::run(reg, policy, get(A), &mut transport, clock, &mut |_| {}).await
    });
}

/// `X-RateLimit-Remaining: 0` with an `X-RateLimit-Reset` a year ahead (read as the longest
/// reset believed, a day) and `X-RateLimit-Limit: 60`.
const FAR: Quota = Quota {
    remaining: 0,
    reset_ms: MAX_RESET_MS,
    limit: Some(60),
    window_ms: None,
};

/// The same origin once its window really reset: 58 left of 60 for the next minute.
const FRESH: Quota = Quota {
    remaining: 58,
    reset_ms: 60_000.0,
    limit: Some(60),
    window_ms: None,
};

#[test]
fn a_far_reset_holds_at_most_max_retry_after_ms_then_one_call_asks_for_the_others() {
    let clock = Clock::manual();
    let reg = registry();
    let p = policy(serde_json::json!({"retry": {"maxRetryAfterMs": 5000}}));
    // The probe's answer takes 300 ms and tells the fresh quota.
    let server = Claims::new(&clock, &[(0.0, 200, Some(FAR)), (300.0, 200, Some(FRESH))]);
    let mut pool = Pool::new();
    for name in ["told", "a", "b", "c"] {
        spawn_claims(&mut pool, &reg, &p, &clock, &server, name);
        pool.run_until_stalled();
    }
    assert_eq!(snapshot(&reg, A, 0.0).wait_ms, 5_000.0, "a day cut to 5 s");
    assert_eq!(pool.result(1), None, "a waits, it is not refused");
    clock.advance(5_000.0);
    pool.run_until_stalled();
    assert_eq!(*server.log.borrow(), [("told", 0.0), ("a", 5_000.0)]);
    // While the probe is out, the others wait for its answer.
    clock.advance(300.0);
    pool.run_until_stalled();
    assert_eq!(server.log.borrow().len(), 2);
    assert_eq!(snapshot(&reg, A, clock.now_ms()).quota_remaining, Some(58));
    // They ask again a second after the probe went, and go.
    clock.advance(700.0);
    pool.run_until_stalled();
    assert_eq!(
        *server.log.borrow(),
        [
            ("told", 0.0),
            ("a", 5_000.0),
            ("b", 6_000.0),
            ("c", 6_000.0)
        ]
    );
    for i in 0..4 {
        assert_eq!(pool.result(i), Some(&done(1, 1)), "call {i}");
    }
    assert_released(&reg, A);
}

#[test]
fn a_server_still_limited_answers_the_probe_and_gets_one_request_per_cap() {
    let clock = Clock::manual();
    let reg = registry();
    let p = policy(serde_json::json!({"retry": {"maxAttempts": 1, "maxRetryAfterMs": 5000}}));
    let server = Claims::new(
        &clock,
        &[
            (0.0, 200, Some(FAR)),
            (0.0, 429, Some(FAR)),
            (0.0, 200, Some(FRESH)),
        ],
    );
    let mut pool = Pool::new();
    for name in ["told", "a", "b", "c"] {
        spawn_claims(&mut pool, &reg, &p, &clock, &server, name);
        pool.run_until_stalled();
    }
    for _ in 0..2 {
        clock.advance(5_000.0);
        pool.run_until_stalled();
    }
    assert_eq!(
        *server.log.borrow(),
        [
            ("told", 0.0),
            ("a", 5_000.0),
            ("b", 10_000.0),
            ("c", 10_000.0)
        ],
        "the probe's 429 told the far reset again: the others waited another 5 s"
    );
    for i in 0..4 {
        assert_eq!(pool.result(i), Some(&done(1, 1)), "call {i}");
    }
    assert_released(&reg, A);
}
