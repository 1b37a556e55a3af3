//! End-to-end calls through `engine::run` with a scripted transport and a fake clock.
//!
//! Virtual time: in `auto` mode a sleep jumps the clock to its end at once, so a call with
//! seconds of backoff runs in microseconds. In `manual` mode sleeps wait until the test
//! advances the clock; concurrent calls are then stepped by a small executor below
//! (`LocalPool` cannot spawn without `futures-util`'s `LocalSpawnExt`, which is not a
//! dev-dependency), which polls a call only when its waker was used, so a missed wake-up
//! shows up as a call that never finishes.

#![cfg(not(target_arch = "wasm32"))]

use futures_executor::block_on;
use proptest::prelude::*;
use resilient_fetch::breaker::BreakerState;
use resilient_fetch::bulkhead::Admission;
use resilient_fetch::classify::Judgement;
use resilient_fetch::engine::{
    self, AttemptLimit, AttemptOutcome, Call, CallResult, Ended, Env, HookAnswer, Transport,
};
use resilient_fetch::events::{Event, GiveUpReason, OutcomeKind, RetryReason};
use resilient_fetch::pacing::Why;
use resilient_fetch::policy::{Policy, PolicyInput, RetryPolicy, TripRule};
use resilient_fetch::rate_limit::{MAX_RESET_MS, Quota};
use resilient_fetch::registry::{OriginSnapshot, Registry};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};

const A: &str = "https://a.test";
const B: &str = "https://b.test";
/// 2025-01-01T00:00:00Z: the wall clock at virtual time 0.
const UNIX_BASE: f64 = 1_735_689_600_000.0;

// ---------------------------------------------------------------- fakes

/// The fake environment: virtual clock, seeded randomness, an abort switch.
struct Clock {
    now: Cell<f64>,
    seed: Cell<u64>,
    aborted: Cell<bool>,
    /// Auto mode: abort when a sleep reaches this time.
    abort_at: Cell<Option<f64>>,
    manual: bool,
    wakers: RefCell<Vec<Waker>>,
}

impl Clock {
    fn auto() -> Self {
        Clock {
            now: Cell::new(0.0),
            seed: Cell::new(0x9e37_79b9_7f4a_7c15),
            aborted: Cell::new(false),
            abort_at: Cell::new(None),
            manual: false,
            wakers: RefCell::new(Vec::new()),
        }
    }

    fn manual() -> Self {
        Clock {
            manual: true,
            ..Clock::auto()
        }
    }

    fn advance(&self, ms: f64) {
        self.now.set(self.now.get() + ms);
        self.wake_all();
    }

    fn abort(&self) {
        self.aborted.set(true);
        self.wake_all();
    }

    fn wake_all(&self) {
        let wakers = std::mem::take(&mut *self.wakers.borrow_mut());
        wakers.into_iter().for_each(Waker::wake);
    }

    fn park(&self, cx: &Context<'_>) {
        self.wakers.borrow_mut().push(cx.waker().clone());
    }
}

impl Env for Clock {
    fn now_ms(&self) -> f64 {
        self.now.get()
    }

    fn unix_ms(&self) -> f64 {
        UNIX_BASE + self.now.get()
    }

    fn random(&self) -> f64 {
        // xorshift64*
        let mut x = self.seed.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.seed.set(x);
        (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn sleep(&self, ms: f64) -> impl Future<Output = ()> {
        let due = self.now.get() + ms.max(0.0);
        poll_fn(move |cx| {
            if self.now.get() >= due {
                return Poll::Ready(());
            }
            if self.manual {
                self.park(cx);
                return Poll::Pending;
            }
            match self.abort_at.get() {
                Some(at) if at <= due => {
                    self.now.set(self.now.get().max(at));
                    self.abort_at.set(None);
                    self.park(cx);
                    self.abort();
                    Poll::Pending
                }
                _ => {
                    self.now.set(due);
                    Poll::Ready(())
                }
            }
        })
    }

    fn aborted(&self) -> bool {
        self.aborted.get()
    }

    fn abort_wait(&self) -> impl Future<Output = ()> {
        poll_fn(move |cx| {
            if self.aborted.get() {
                Poll::Ready(())
            } else {
                self.park(cx);
                Poll::Pending
            }
        })
    }
}

/// One scripted attempt.
#[derive(Clone, Debug)]
enum Step {
    Status(u16),
    RetryAfter(u16, String),
    Network,
    /// Never answers: takes the whole limit, then times out.
    Hang,
    /// The caller aborts while the attempt is on the wire.
    Abort,
    /// The caller aborts just as this status arrives.
    AbortWith(u16),
    /// A status whose rate-limit headers say this many requests are left until a reset
    /// this many ms away.
    Quota(u16, u32, f64),
}

/// Answers attempts from a script; each answer takes `took_ms` of virtual time. The output
/// is the attempt's number, so tests can tell which attempt's output came back.
struct Script<'e> {
    clock: &'e Clock,
    steps: RefCell<VecDeque<Step>>,
    limits: RefCell<Vec<AttemptLimit>>,
    took_ms: f64,
    /// The caller's `retry.shouldRetry`, one answer per attempt (none: no hook).
    answers: Option<RefCell<VecDeque<Answer>>>,
    /// What the hook was asked: (attempt, elapsed, remaining).
    asked: RefCell<Vec<(u32, f64, f64)>>,
    /// The caller's `breaker.isFailure`.
    is_failure: Option<fn(&AttemptOutcome) -> Option<bool>>,
}

/// A scripted `shouldRetry` answer.
#[derive(Clone, Copy, Debug)]
enum Answer {
    Retry,
    Stop,
    Default,
    /// The hook throws: the call ends with this output.
    Fail(u32),
    /// The hook never answers.
    Never,
}

impl<'e> Script<'e> {
    fn new(clock: &'e Clock, steps: &[Step]) -> Self {
        Script {
            clock,
            steps: RefCell::new(steps.iter().cloned().collect()),
            limits: RefCell::new(Vec::new()),
            took_ms: 10.0,
            answers: None,
            asked: RefCell::new(Vec::new()),
            is_failure: None,
        }
    }

    fn answering(mut self, answers: &[Answer]) -> Self {
        self.answers = Some(RefCell::new(answers.iter().copied().collect()));
        self
    }
}

impl<'e> Transport for Script<'e> {
    type Output = u32;

    fn send(
        &self,
        attempt: u32,
        limit: AttemptLimit,
    ) -> impl Future<Output = (AttemptOutcome, u32)> {
        self.limits.borrow_mut().push(limit);
        let step = self
            .steps
            .borrow_mut()
            .pop_front()
            .unwrap_or(Step::Status(200));
        let (clock, took) = (self.clock, self.took_ms);
        async move {
            let outcome = match step {
                Step::Hang => {
                    clock.advance(limit.timeout_ms);
                    AttemptOutcome::Timeout
                }
                Step::Abort => {
                    clock.abort();
                    AttemptOutcome::Aborted
                }
                Step::AbortWith(status) => {
                    clock.abort();
                    AttemptOutcome::Response {
                        status,
                        retry_after: None,
                        quota: None,
                    }
                }
                Step::Network => {
                    clock.advance(took);
                    AttemptOutcome::NetworkError
                }
                Step::Status(status) => {
                    clock.advance(took);
                    AttemptOutcome::Response {
                        status,
                        retry_after: None,
                        quota: None,
                    }
                }
                Step::Quota(status, remaining, reset_ms) => {
                    clock.advance(took);
                    AttemptOutcome::Response {
                        status,
                        retry_after: None,
                        quota: Some(Quota {
                            remaining,
                            reset_ms,
                            limit: None,
                            window_ms: None,
                        }),
                    }
                }
                Step::RetryAfter(status, value) => {
                    clock.advance(took);
                    AttemptOutcome::Response {
                        status,
                        retry_after: Some(value),
                        quota: None,
                    }
                }
            };
            (outcome, attempt)
        }
    }

    fn is_failure(&self, ended: &Ended<'_>, _output: &u32) -> Option<bool> {
        self.is_failure.and_then(|f| f(ended.outcome))
    }

    fn asks_should_retry(&self) -> bool {
        self.answers.is_some()
    }

    fn should_retry<'t>(
        &'t self,
        ended: &Ended<'_>,
        _output: &u32,
    ) -> impl Future<Output = HookAnswer<u32>> + use<'t, 'e> {
        self.asked
            .borrow_mut()
            .push((ended.attempt, ended.elapsed_ms, ended.remaining_ms));
        let answer = self
            .answers
            .as_ref()
            .and_then(|a| a.borrow_mut().pop_front())
            .unwrap_or(Answer::Default);
        poll_fn(move |_| match answer {
            Answer::Retry => Poll::Ready(HookAnswer::Retry),
            Answer::Stop => Poll::Ready(HookAnswer::Stop),
            Answer::Default => Poll::Ready(HookAnswer::Default),
            Answer::Fail(output) => Poll::Ready(HookAnswer::Fail(output)),
            Answer::Never => Poll::Pending,
        })
    }
}

/// What the events said, in owned form.
#[derive(Default, Debug)]
struct Log {
    kinds: Vec<&'static str>,
    retries: Vec<(u32, f64, RetryReason, bool)>,
    give_ups: Vec<(GiveUpReason, u32)>,
    transitions: Vec<(String, BreakerState, BreakerState)>,
    ends: Vec<(OutcomeKind, Option<u16>)>,
    short_circuits: Vec<f64>,
}

impl Log {
    fn record(&mut self, event: &Event<'_>) {
        self.kinds.push(event.kind());
        match *event {
            Event::Retry {
                attempt,
                delay_ms,
                reason,
                retry_after,
            } => {
                self.retries.push((attempt, delay_ms, reason, retry_after));
            }
            Event::GiveUp { reason, attempts } => self.give_ups.push((reason, attempts)),
            Event::BreakerTransition { origin, from, to } => {
                self.transitions.push((origin.to_owned(), from, to));
            }
            Event::AttemptEnd {
                outcome, status, ..
            } => self.ends.push((outcome, status)),
            Event::ShortCircuit { retry_after_ms, .. } => self.short_circuits.push(retry_after_ms),
            _ => {}
        }
    }
}

// ---------------------------------------------------------------- helpers

fn policy(json: serde_json::Value) -> Policy {
    let input: PolicyInput = serde_json::from_value(json).expect("decodes");
    Policy::from_input(&input).expect("valid policy")
}

fn get(origin: &'static str) -> Call<'static> {
    Call {
        origin,
        method: "GET",
        has_key: false,
        replayable: true,
        has_body: false,
    }
}

fn post(origin: &'static str, has_key: bool) -> Call<'static> {
    Call {
        origin,
        method: "POST",
        has_key,
        replayable: true,
        has_body: false,
    }
}

fn registry() -> RefCell<Registry> {
    RefCell::new(Registry::new(1000))
}

/// Runs one call to completion.
fn call(
    reg: &RefCell<Registry>,
    policy: &Policy,
    call: Call<'_>,
    script: &mut Script<'_>,
) -> (CallResult<u32>, Log) {
    let mut log = Log::default();
    let clock = script.clock;
    let result = block_on(engine::run(reg, policy, call, script, clock, &mut |e| {
        log.record(e)
    }));
    (result, log)
}

fn snapshot(reg: &RefCell<Registry>, origin: &str, now: f64) -> OriginSnapshot {
    reg.borrow()
        .stats(now)
        .into_iter()
        .find(|s| s.origin == origin)
        .expect("origin is in the registry")
}

/// Nothing of the call is left holding a slot or counted as in flight or waiting.
fn assert_released(reg: &RefCell<Registry>, origin: &str) {
    let s = snapshot(reg, origin, 0.0);
    assert_eq!(s.stats.in_flight, 0, "in_flight back to 0");
    assert_eq!(
        reg.borrow_mut().with(origin, |_, s| s.waiting),
        0,
        "waiting back to 0"
    );
    assert_eq!(
        (s.bulkhead_active, s.bulkhead_queued),
        (0, 0),
        "bulkhead slots back"
    );
}

/// A GET to A with the default policy, events going to `on_event`.
fn default_get_a(
    reg: &RefCell<Registry>,
    script: &mut Script<'_>,
    clock: &Clock,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> CallResult<u32> {
    block_on(engine::run(
        reg,
        &Policy::default(),
        get(A),
        script,
        clock,
        on_event,
    ))
}

fn done(output: u32, attempts: u32) -> CallResult<u32> {
    CallResult::Done { output, attempts }
}

// ---------------------------------------------------------------- scripted calls

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
fn the_deadline_cuts_retries_and_limits_the_last_attempt() {
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({
        "timeoutMs": 1000, "totalTimeoutMs": 2500,
        "retry": {"maxAttempts": 10, "jitter": "none", "baseDelayMs": 100}
    }));
    let mut script = Script::new(&clock, &[Step::Hang, Step::Hang, Step::Hang, Step::Hang]);
    let (result, log) = call(&reg, &p, get(A), &mut script);
    // 0–1000 attempt 1, wait 100, 1100–2100 attempt 2, wait 200, attempt 3 gets the 200 left.
    assert_eq!(result, done(3, 3));
    assert_eq!(
        script.limits.borrow()[2],
        AttemptLimit {
            timeout_ms: 200.0,
            is_deadline: true
        }
    );
    assert_eq!(log.give_ups, [(GiveUpReason::Deadline, 3)]);
    assert_eq!(clock.now_ms(), 2500.0);
}

#[test]
fn a_wait_past_the_deadline_gives_up_at_once() {
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({
        "totalTimeoutMs": 1000, "retry": {"jitter": "none", "baseDelayMs": 995}
    }));
    let (result, log) = call(
        &reg,
        &p,
        get(A),
        &mut Script::new(&clock, &[Step::Status(503)]),
    );
    assert_eq!(result, done(1, 1));
    assert_eq!(log.give_ups, [(GiveUpReason::Deadline, 1)]);
    assert_eq!(
        clock.now_ms(),
        10.0,
        "no sleeping when the wait cannot end in time"
    );
    assert_eq!(
        snapshot(&reg, A, 0.0).budget_tokens,
        500,
        "no tokens spent on a retry not made"
    );
}

#[test]
fn a_wait_leaving_less_than_the_minimum_gives_up_at_once() {
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({
        "totalTimeoutMs": 1000, "retry": {"jitter": "none", "baseDelayMs": 989}
    }));
    let mut script = Script::new(&clock, &[Step::Status(503)]);
    script.took_ms = 10.5;
    let (result, log) = call(&reg, &p, get(A), &mut script);
    // The wait would end at 999.5, leaving 0.5 ms: less than an attempt needs.
    assert_eq!(result, done(1, 1));
    assert_eq!(log.give_ups, [(GiveUpReason::Deadline, 1)]);
    assert_eq!(clock.now_ms(), 10.5, "no sleeping");
    assert_eq!(snapshot(&reg, A, 0.0).budget_tokens, 500);
}

#[test]
fn a_late_timer_leaving_less_than_the_minimum_sends_nothing_and_refunds() {
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({
        "totalTimeoutMs": 1000, "retry": {"jitter": "none", "baseDelayMs": 500}
    }));
    let mut log = Log::default();
    let mut on_event = |e: &Event<'_>| {
        log.record(e);
        if let Event::Retry { .. } = e {
            // The timer fires late (a busy event loop): the wait ends at 999.5, not 510.
            clock.advance(489.5);
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
    assert_eq!(result, done(1, 1));
    assert_eq!(clock.now_ms(), 999.5);
    assert_eq!(
        script.limits.borrow().len(),
        1,
        "no attempt with 0.5 ms to live"
    );
    assert_eq!(log.give_ups, [(GiveUpReason::Deadline, 1)]);
    let s = snapshot(&reg, A, clock.now_ms());
    assert_eq!(s.stats.attempts, 1);
    assert_eq!(s.budget_tokens, 500, "the unsent retry's tokens came back");
    assert_released(&reg, A);
}

#[test]
fn a_timeout_cut_by_the_deadline_does_not_count_against_the_breaker() {
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({
        "totalTimeoutMs": 1000, "retry": {"jitter": "none", "baseDelayMs": 985},
        "breaker": {"failureThreshold": 2}
    }));
    let mut script = Script::new(&clock, &[Step::Status(503), Step::Hang]);
    let (result, log) = call(&reg, &p, get(A), &mut script);
    // 503 at 10, wait 985, attempt 2 gets the 5 ms left and times out at 1000.
    assert_eq!(result, done(2, 2));
    assert_eq!(
        script.limits.borrow()[1],
        AttemptLimit {
            timeout_ms: 5.0,
            is_deadline: true
        }
    );
    assert_eq!(log.give_ups, [(GiveUpReason::Deadline, 2)]);
    assert!(log.transitions.is_empty(), "{:?}", log.transitions);
    let s = snapshot(&reg, A, clock.now_ms());
    assert_eq!(
        (s.stats.attempts, s.stats.failures, s.stats.timeouts),
        (2, 1, 1),
        "counted as a timeout, not as a failure"
    );
    assert_eq!(s.breaker, BreakerState::Closed);
}

#[test]
fn a_black_holed_origin_trips_the_breaker_when_the_deadline_is_the_smaller_limit() {
    // totalTimeoutMs < timeoutMs: every attempt's limit is the deadline, and an origin
    // that never answers must still count as failing.
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({
        "timeoutMs": 10000, "totalTimeoutMs": 150, "retry": false,
        "breaker": {"failureThreshold": 2}
    }));
    for _ in 0..2 {
        let mut script = Script::new(&clock, &[Step::Hang]);
        let (result, _) = call(&reg, &p, get(A), &mut script);
        assert_eq!(result, done(1, 1));
        assert!(script.limits.borrow()[0].is_deadline);
    }
    let s = snapshot(&reg, A, clock.now_ms());
    assert_eq!((s.stats.failures, s.stats.timeouts), (2, 2));
    assert_eq!(s.breaker, BreakerState::Open);
    let mut script = Script::new(&clock, &[Step::Hang]);
    let (result, _) = call(&reg, &p, get(A), &mut script);
    assert!(
        matches!(result, CallResult::ShortCircuited { .. }),
        "{result:?}"
    );
    assert!(script.limits.borrow().is_empty(), "nothing sent while open");
}

#[test]
fn a_deadline_limit_counts_from_half_the_smaller_limit() {
    let p = policy(serde_json::json!({"timeoutMs": 1000, "totalTimeoutMs": 3000}));
    let limit = |ms: f64| AttemptLimit {
        timeout_ms: ms,
        is_deadline: true,
    };
    assert!(limit(500.0).timeout_counts(&p), "half of timeoutMs counts");
    assert!(
        !limit(499.0).timeout_counts(&p),
        "less says nothing about the origin"
    );
    let attempt = AttemptLimit {
        timeout_ms: 1.0,
        is_deadline: false,
    };
    assert!(attempt.timeout_counts(&p), "timeoutMs itself always counts");
    let short = policy(serde_json::json!({"timeoutMs": 1000, "totalTimeoutMs": 200}));
    assert!(limit(200.0).timeout_counts(&short));
    assert!(limit(100.0).timeout_counts(&short));
    assert!(!limit(99.0).timeout_counts(&short));
}

#[test]
fn a_timeout_of_the_attempt_limit_still_counts_near_the_deadline() {
    // The deadline is near but the attempt's own timeoutMs is shorter: a real timeout.
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({
        "timeoutMs": 5, "totalTimeoutMs": 1000, "retry": false,
        "breaker": {"failureThreshold": 1}
    }));
    let mut script = Script::new(&clock, &[Step::Hang]);
    let (result, _) = call(&reg, &p, get(A), &mut script);
    assert_eq!(result, done(1, 1));
    assert!(!script.limits.borrow()[0].is_deadline);
    let s = snapshot(&reg, A, clock.now_ms());
    assert_eq!((s.stats.failures, s.stats.timeouts), (1, 1));
    assert_eq!(s.breaker, BreakerState::Open);
}

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
    assert_eq!(reg.borrow().stats(0.0)[0].budget_tokens, 0);
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
            reg.borrow_mut().with(A, |_, s| {
                if let Ok(permit) = s.breaker.try_acquire(now, &trip) {
                    let _ = s.breaker.record(permit, Judgement::Failure, now, &trip);
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

#[test]
fn a_caller_abort_during_the_backoff_wait_ends_the_call() {
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({"retry": {"jitter": "none", "baseDelayMs": 1000}}));
    clock.abort_at.set(Some(50.0));
    let mut script = Script::new(&clock, &[Step::Status(503), Step::Status(200)]);
    let (result, log) = call(&reg, &p, get(A), &mut script);
    assert_eq!(result, CallResult::Aborted);
    assert_eq!(script.limits.borrow().len(), 1, "the retry was never sent");
    assert_eq!(clock.now_ms(), 50.0);
    assert_eq!(log.kinds.last(), Some(&"retry"));
    assert_eq!(
        snapshot(&reg, A, 0.0).budget_tokens,
        500,
        "the unsent retry's tokens came back"
    );
    assert_released(&reg, A);
}

#[test]
fn a_caller_abort_during_an_attempt_is_not_a_failure_and_not_retried() {
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({"breaker": {"failureThreshold": 1}}));
    let (result, log) = call(
        &reg,
        &p,
        get(A),
        &mut Script::new(&clock, &[Step::Abort, Step::Status(200)]),
    );
    assert_eq!(result, done(1, 1), "the abort's output is handed back");
    assert_eq!(log.kinds, ["attemptStart", "attemptEnd"]);
    let s = snapshot(&reg, A, clock.now_ms());
    assert_eq!(
        (s.stats.failures, s.stats.successes, s.breaker),
        (0, 0, BreakerState::Closed)
    );
    assert_released(&reg, A);
}

#[test]
fn a_caller_abort_as_a_failure_arrives_is_not_counted_and_not_retried() {
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({"breaker": {"failureThreshold": 1}}));
    let mut script = Script::new(&clock, &[Step::AbortWith(503), Step::Status(200)]);
    let (result, log) = call(&reg, &p, get(A), &mut script);
    assert_eq!(result, done(1, 1));
    assert_eq!(log.kinds, ["attemptStart", "attemptEnd"]);
    let s = snapshot(&reg, A, clock.now_ms());
    assert_eq!((s.stats.failures, s.breaker), (0, BreakerState::Closed));
}

#[test]
fn an_abort_before_the_first_attempt_sends_nothing() {
    let clock = Clock::auto();
    clock.abort();
    let reg = registry();
    let mut script = Script::new(&clock, &[]);
    let (result, log) = call(&reg, &Policy::default(), get(A), &mut script);
    assert_eq!(result, CallResult::Aborted);
    assert!(script.limits.borrow().is_empty() && log.kinds.is_empty());
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

#[test]
fn events_may_read_the_registry() {
    // onEvent runs JS, which may ask for stats: no borrow may be held while it runs.
    let clock = Clock::auto();
    let reg = registry();
    let p = policy(serde_json::json!({"breaker": {"failureThreshold": 1}}));
    let mut seen = 0;
    let mut on_event = |_: &Event<'_>| {
        seen += reg.borrow().stats(0.0).len();
        reg.borrow_mut().reset(None);
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
    let reg = RefCell::new(Registry::new(1));
    let mut script = Script::new(&clock, &[Step::Status(503), Step::Status(200)]);
    let mut on_event = |e: &Event<'_>| {
        if e.kind() == "attemptStart" {
            // Another origin's call pushes this one out of the registry mid-attempt.
            reg.borrow_mut().with(B, |_, _| ());
        }
    };
    let result = default_get_a(&reg, &mut script, &clock, &mut on_event);
    assert_eq!(result, done(2, 2));
}

#[test]
fn a_call_waiting_to_retry_keeps_its_origin_when_new_origins_arrive() {
    let clock = Clock::manual();
    let reg = RefCell::new(Registry::new(2));
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
    reg.borrow_mut().with(B, |_, _| ());
    reg.borrow_mut().with("https://c.test", |_, _| ());
    assert_eq!(
        reg.borrow()
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
    assert!(
        reg.borrow_mut()
            .with(A, |_, s| s.waiting == 0 && s.is_idle())
    );
}

#[test]
fn an_origin_about_to_be_retried_is_kept_through_the_events_too() {
    let clock = Clock::auto();
    let reg = RefCell::new(Registry::new(2));
    let mut script = Script::new(&clock, &[Step::Status(503), Step::Status(200)]);
    let mut ends = 0;
    let mut on_event = |e: &Event<'_>| {
        if e.kind() == "attemptEnd" {
            ends += 1;
            if ends == 1 {
                // Between the failed attempt and the retry's wait, two origins arrive.
                reg.borrow_mut().with(B, |_, _| ());
                reg.borrow_mut().with("https://c.test", |_, _| ());
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

// ---------------------------------------------------------------- concurrent calls

struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

type CallFuture<'a> = Pin<Box<dyn Future<Output = CallResult<u32>> + 'a>>;

/// A tiny single-threaded executor that polls a call only after its waker fired.
struct Pool<'a> {
    tasks: Vec<(CallFuture<'a>, Arc<Flag>, Option<CallResult<u32>>)>,
}

impl<'a> Pool<'a> {
    fn new() -> Self {
        Pool { tasks: Vec::new() }
    }

    fn spawn(&mut self, future: impl Future<Output = CallResult<u32>> + 'a) {
        self.tasks.push((
            Box::pin(future),
            Arc::new(Flag(AtomicBool::new(true))),
            None,
        ));
    }

    fn run_until_stalled(&mut self) {
        loop {
            let mut progressed = false;
            for (future, flag, result) in &mut self.tasks {
                if result.is_none() && flag.0.swap(false, Ordering::SeqCst) {
                    progressed = true;
                    let waker = Waker::from(flag.clone());
                    if let Poll::Ready(r) = future.as_mut().poll(&mut Context::from_waker(&waker)) {
                        *result = Some(r);
                    }
                }
            }
            if !progressed {
                return;
            }
        }
    }

    fn result(&self, i: usize) -> Option<&CallResult<u32>> {
        self.tasks.get(i).and_then(|t| t.2.as_ref())
    }

    fn drop_task(&mut self, i: usize) {
        drop(self.tasks.remove(i));
    }
}

/// Requests that wait until the test answers them by name.
#[derive(Default)]
struct Board {
    sent: RefCell<Vec<&'static str>>,
    answers: RefCell<Vec<(&'static str, u16)>>,
    wakers: RefCell<Vec<Waker>>,
}

impl Board {
    fn answer(&self, name: &'static str, status: u16) {
        self.answers.borrow_mut().push((name, status));
        std::mem::take(&mut *self.wakers.borrow_mut())
            .into_iter()
            .for_each(Waker::wake);
    }
}

struct Hand<'b> {
    board: &'b Board,
    name: &'static str,
}

impl Transport for Hand<'_> {
    type Output = u32;

    fn send(&self, attempt: u32, _: AttemptLimit) -> impl Future<Output = (AttemptOutcome, u32)> {
        self.board.sent.borrow_mut().push(self.name);
        let (board, name) = (self.board, self.name);
        poll_fn(move |cx| {
            let mut answers = board.answers.borrow_mut();
            match answers.iter().position(|(n, _)| *n == name) {
                Some(i) => {
                    let (_, status) = answers.remove(i);
                    Poll::Ready((
                        AttemptOutcome::Response {
                            status,
                            retry_after: None,
                            quota: None,
                        },
                        attempt,
                    ))
                }
                None => {
                    board.wakers.borrow_mut().push(cx.waker().clone());
                    Poll::Pending
                }
            }
        })
    }
}

fn spawn_call<'a>(
    pool: &mut Pool<'a>,
    reg: &'a RefCell<Registry>,
    policy: &'a Policy,
    clock: &'a Clock,
    board: &'a Board,
    name: &'static str,
) {
    spawn_call_to(pool, reg, policy, clock, board, A, name);
}

fn spawn_call_to<'a>(
    pool: &mut Pool<'a>,
    reg: &'a RefCell<Registry>,
    policy: &'a Policy,
    clock: &'a Clock,
    board: &'a Board,
    origin: &'static str,
    name: &'static str,
) {
    pool.spawn(async move {
        let mut transport = Hand { board, name };
        engine::run(reg, policy, get(origin), &mut transport, clock, &mut |_| {}).await
    });
}

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

#[test]
fn an_origin_with_a_call_between_attempts_is_not_evicted() {
    let clock = Clock::manual();
    let reg = RefCell::new(Registry::new(2));
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
        .borrow()
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

// ---------------------------------------------------------------- properties

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        prop::sample::select(vec![200u16, 204, 404, 408, 429, 500, 501, 502, 503, 504])
            .prop_map(Step::Status),
        (
            prop::sample::select(vec![429u16, 503]),
            prop::sample::select(vec!["0", "1", "45", "x"])
        )
            .prop_map(|(s, v)| Step::RetryAfter(s, v.to_owned())),
        Just(Step::Network),
        Just(Step::Hang),
        Just(Step::Abort),
        prop::sample::select(vec![200u16, 503]).prop_map(Step::AbortWith),
    ]
}

/// What the origin and the caller are like when a call starts.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Before {
    Nothing,
    /// Another call opened the breaker.
    BreakerOpen,
    /// Another call holds the only bulkhead slot (and, if `queue_full`, the one place in
    /// the queue).
    SlotTaken {
        queue_full: bool,
    },
    /// The caller aborted already.
    Aborted,
    /// The caller aborts at this time, if the call is waiting then.
    AbortAt(f64),
}

fn before() -> impl Strategy<Value = Before> {
    prop_oneof![
        4 => Just(Before::Nothing),
        1 => Just(Before::BreakerOpen),
        1 => any::<bool>().prop_map(|queue_full| Before::SlotTaken { queue_full }),
        1 => Just(Before::Aborted),
        2 => (0u32..2000).prop_map(|at| Before::AbortAt(f64::from(at))),
    ]
}

proptest! {
    #[test]
    fn an_unsafe_request_is_never_retried(
        steps in prop::collection::vec(step(), 1..6),
        method in prop::sample::select(vec!["POST", "PATCH", "post", "CONNECT"]),
        key_but_not_replayable in any::<bool>(),
    ) {
        let clock = Clock::auto();
        let reg = registry();
        let c = Call {
            origin: A,
            method,
            has_key: key_but_not_replayable,
            replayable: !key_but_not_replayable,
            has_body: true,
        };
        let p = policy(serde_json::json!({"timeoutMs": 100, "retry": {"maxAttempts": 5}}));
        let mut script = Script::new(&clock, &steps);
        let (result, log) = call(&reg, &p, c, &mut script);
        prop_assert_eq!(script.limits.borrow().len(), 1);
        prop_assert!(log.retries.is_empty());
        let one_attempt = matches!(result, CallResult::Done { attempts: 1, .. });
        prop_assert!(one_attempt, "{:?}", result);
        prop_assert_eq!(snapshot(&reg, A, 0.0).stats.in_flight, 0);
    }

    #[test]
    fn safe_requests_stay_within_attempts_and_release_everything(
        steps in prop::collection::vec(step(), 1..8),
        max_attempts in 1u32..6,
        before in before(),
    ) {
        let clock = Clock::auto();
        let reg = registry();
        let p = policy(serde_json::json!({
            "timeoutMs": 100, "totalTimeoutMs": 100000,
            "retry": {"maxAttempts": max_attempts},
            "breaker": {"failureThreshold": 3},
            "bulkhead": {"maxConcurrent": 1, "maxQueue": 1}
        }));
        reg.borrow_mut().with(A, |_, _| ()); // known to the registry even if nothing is sent
        // Slots and places in the queue taken by other calls.
        let mut held: Vec<Admission> = Vec::new();
        match before {
            Before::Nothing => {}
            Before::BreakerOpen => {
                let b = p.breaker.clone().expect("on");
                reg.borrow_mut().with(A, |_, s| {
                    let TripRule::Consecutive { failure_threshold } = b.trip else {
                        panic!("a consecutive policy");
                    };
                    for _ in 0..failure_threshold {
                        if let Ok(permit) = s.breaker.try_acquire(0.0, &b) {
                            let _ = s.breaker.record(permit, Judgement::Failure, 0.0, &b);
                        }
                    }
                });
            }
            Before::SlotTaken { queue_full } => {
                let bulkhead = p.bulkhead.clone().expect("on");
                reg.borrow_mut().with(A, |_, s| {
                    held.push(s.bulkhead.acquire(&bulkhead));
                    if queue_full {
                        held.push(s.bulkhead.acquire(&bulkhead));
                    }
                });
            }
            Before::Aborted => clock.abort(),
            Before::AbortAt(at) => clock.abort_at.set(Some(at)),
        }
        let mut script = Script::new(&clock, &steps);
        let (result, log) = call(&reg, &p, get(A), &mut script);
        let sent = script.limits.borrow().len() as u32;
        prop_assert!(sent <= max_attempts);
        let last = log.kinds.last().copied();
        match result {
            CallResult::Done { output, attempts } => {
                prop_assert!(sent >= 1);
                prop_assert_eq!((output, attempts), (sent, sent));
                // Every retry scheduled was sent, unless the breaker refused it.
                prop_assert_eq!(sent as usize, log.retries.len() + 1 - log.short_circuits.len());
                match last {
                    Some("success" | "giveUp") => prop_assert!(!clock.aborted()),
                    // Aborted mid-attempt: the output is handed back without a verdict.
                    Some("attemptEnd") => prop_assert!(clock.aborted()),
                    other => prop_assert!(false, "ended with {:?}", other),
                }
            }
            CallResult::ShortCircuited { retry_after_ms } => {
                prop_assert_eq!(before, Before::BreakerOpen);
                prop_assert_eq!((sent, retry_after_ms), (0, 5_000.0));
                prop_assert_eq!(&log.kinds, &["shortCircuit"]);
            }
            CallResult::BulkheadFull => {
                prop_assert_eq!(before, Before::SlotTaken { queue_full: true });
                prop_assert_eq!(sent, 0);
                prop_assert_eq!(&log.kinds, &["bulkheadRejected"]);
            }
            CallResult::DeadlineExceeded => {
                // Queued behind the held slot until the deadline.
                prop_assert_eq!(before, Before::SlotTaken { queue_full: false });
                prop_assert_eq!((sent, clock.now_ms()), (0, 100_000.0));
                prop_assert!(log.kinds.is_empty());
            }
            CallResult::Aborted => {
                prop_assert!(clock.aborted());
                match before {
                    Before::Aborted => prop_assert_eq!(sent, 0),
                    // Aborted while waiting to retry: the retry was scheduled, not sent.
                    Before::AbortAt(_) => {
                        prop_assert_eq!(last, Some("retry"));
                        prop_assert_eq!(sent as usize, log.retries.len());
                    }
                    other => prop_assert!(false, "aborted after {:?}", other),
                }
            }
            // Neither the rate limit (no quota headers here) nor the throttle (off) refuses.
            CallResult::RateLimited { .. } | CallResult::Throttled => {
                prop_assert!(false, "refused by pacing or throttling: {:?}", log.kinds);
            }
        }
        // Budget: only retries that were sent are paid for; a success refunds the retry
        // that led to it, or 1 after a first-attempt success.
        let cost = |reason: RetryReason| if reason == RetryReason::Status { 5 } else { 10 };
        let paid: Vec<u32> = log
            .retries
            .iter()
            .filter(|r| r.0 <= sent)
            .map(|r| cost(r.2))
            .collect();
        let spent: u32 = paid.iter().sum();
        let refund = match (last, paid.last()) {
            (Some("success"), Some(&c)) if sent > 1 => c,
            (Some("success"), _) => 1,
            _ => 0,
        };
        prop_assert_eq!(
            snapshot(&reg, A, clock.now_ms()).budget_tokens,
            (500 - spent + refund).min(500)
        );
        drop(held);
        assert_released(&reg, A);
    }
}

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

// ---------------------------------------------------------------- pacing and throttling

/// An event's kind, the wait (or probability) it states, and why it waits.
type Paced = (String, f64, Option<Why>);

/// Events of one kind with the origin wait they state.
fn pacing_events(events: &[Paced], kind: &str) -> Vec<(f64, Why)> {
    events
        .iter()
        .filter(|(k, ..)| k == kind)
        .filter_map(|(_, ms, why)| why.map(|w| (*ms, w)))
        .collect()
}

/// Runs a GET to A under `p`, keeping the pacing events.
fn paced_get(
    reg: &RefCell<Registry>,
    p: &Policy,
    clock: &Clock,
    steps: &[Step],
) -> (CallResult<u32>, Vec<Paced>, usize) {
    let mut script = Script::new(clock, steps);
    let mut events = Vec::new();
    let result = block_on(engine::run(reg, p, get(A), &mut script, clock, &mut |e| {
        let (ms, why) = match *e {
            Event::RateLimitWait {
                wait_ms, reason, ..
            } => (wait_ms, Some(reason)),
            Event::RateLimitRejected {
                retry_after_ms,
                reason,
                ..
            } => (retry_after_ms, Some(reason)),
            Event::Throttled { probability, .. } => (probability, None),
            _ => (0.0, None),
        };
        events.push((e.kind().to_owned(), ms, why));
    }));
    (result, events, script.limits.borrow().len())
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
        let state = reg.borrow_mut().with(A, |_, s| s.pacer.wait(0.0));
        assert_eq!(state.map(|(ms, _)| ms), expected_wait);
        if expected_wait.is_none() {
            reg.borrow_mut().with(A, |_, s| s.pacer.take(0.0));
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

#[test]
fn throttling_refuses_locally_once_the_origin_rejects_most() {
    let (reg, clock) = (registry(), Clock::auto());
    let p = policy(serde_json::json!({
        "retry": false, "breaker": false, "throttle": {"k": 2, "windowMs": 60000}
    }));
    let (mut sent, mut refused, mut accepted) = (0, 0, 0);
    for i in 0..400 {
        // The origin accepts one request in ten (a 503 otherwise).
        let status = if i % 10 == 0 { 200 } else { 503 };
        let (result, events, n) = paced_get(&reg, &p, &clock, &[Step::Status(status)]);
        sent += n;
        match result {
            CallResult::Throttled => {
                refused += 1;
                assert_eq!(n, 0);
                let (_, probability, _) = &events[0];
                assert!(*probability > 0.0 && *probability < 1.0);
            }
            _ if status == 200 => accepted += 1,
            _ => {}
        }
    }
    assert!(refused > 100, "refused {refused} of 400");
    assert_eq!(snapshot(&reg, A, clock.now_ms()).stats.throttled, refused);
    assert!(sent > 0 && accepted > 0, "{sent} sent, {accepted} accepted");
}

#[test]
fn throttling_is_off_by_default() {
    let (reg, clock) = (registry(), Clock::auto());
    let p = policy(serde_json::json!({"retry": false, "breaker": false}));
    for _ in 0..100 {
        let (_, _, n) = paced_get(&reg, &p, &clock, &[Step::Status(503)]);
        assert_eq!(n, 1);
    }
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
    reg: &RefCell<Registry>,
    p: &Policy,
    clock: &Clock,
    on_wait: &dyn Fn(&RefCell<Registry>),
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
    reg.borrow_mut().with(A, |_, s| {
        s.pacer
            .learn(&limited(0, 1_000.0, 1, 1_000.0), 0.0, f64::INFINITY)
    });
    // Booked for t = 1 000; while it waits, a 429 elsewhere holds the origin until 5 000.
    let hold = |reg: &RefCell<Registry>| {
        reg.borrow_mut().with(A, |_, s| s.pacer.hold(5_000.0));
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
    reg.borrow_mut().with(A, |_, s| {
        s.pacer
            .learn(&limited(0, 1_000.0, 1, 1_000.0), 0.0, f64::INFINITY)
    });
    clock.abort_at.set(Some(500.0));
    let (result, _, sent) = paced_get(&reg, &p, &clock, &[]);
    assert_eq!((result, sent), (CallResult::Aborted, 0));
    // The aborted call's slot (t = 1 000) is the next caller's, not one a window later.
    let next = reg
        .borrow_mut()
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
    let reg = RefCell::new(Registry::new(1));
    let p = Policy::default();
    reg.borrow_mut().with(A, |_, s| {
        s.pacer
            .learn(&limited(0, 1_000.0, 1, 1_000.0), 0.0, f64::INFINITY)
    });
    // While A's call waits, another origin needs the registry's only place.
    let kept = Cell::new(false);
    let touch_b = |reg: &RefCell<Registry>| {
        reg.borrow_mut().with(B, |_, _| ());
        kept.set(
            reg.borrow()
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
    reg.borrow_mut().with(A, |_, s| {
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
    reg: &'a RefCell<Registry>,
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
    reg: &'a RefCell<Registry>,
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

// ---------------------------------------------------------------- hedged reads

/// Attempts that answer after a planned time of the manual clock: `(took_ms, status)` per
/// attempt (an attempt past its limit times out). Attempts dropped before they answered
/// (aborted) are listed in `dropped`.
struct Timed<'c> {
    clock: &'c Clock,
    plan: RefCell<VecDeque<(f64, u16)>>,
    dropped: Rc<RefCell<Vec<u32>>>,
    /// What `isFailure` was asked: (attempt, elapsed since the call started).
    asked: RefCell<Vec<(u32, f64)>>,
    /// The caller's `retry.shouldRetry` (none: no hook): its answer to an outcome, and how
    /// many ms after it is asked it gives it.
    hook: Option<Hook>,
    /// What `shouldRetry` was asked: (attempt, status, elapsed since the call started).
    hook_asked: RefCell<Vec<(u32, Option<u16>, f64)>>,
}

/// A scripted `shouldRetry`: its answer to an outcome, given this many ms after it is asked.
type Hook = fn(&AttemptOutcome) -> (HookAnswer<u32>, f64);

/// Notes its attempt as dropped unless it answered.
struct Dropped(u32, bool, Rc<RefCell<Vec<u32>>>);

impl Drop for Dropped {
    fn drop(&mut self) {
        if !self.1 {
            self.2.borrow_mut().push(self.0);
        }
    }
}

impl<'c> Timed<'c> {
    fn new(clock: &'c Clock, plan: &[(f64, u16)]) -> Self {
        Timed {
            clock,
            plan: RefCell::new(plan.iter().copied().collect()),
            dropped: Rc::default(),
            asked: RefCell::default(),
            hook: None,
            hook_asked: RefCell::default(),
        }
    }

    /// With a `shouldRetry` that answers as `hook` says.
    fn asking(mut self, hook: Hook) -> Self {
        self.hook = Some(hook);
        self
    }
}

impl<'c> Transport for Timed<'c> {
    type Output = u32;

    fn is_failure(&self, ended: &Ended<'_>, _output: &u32) -> Option<bool> {
        self.asked
            .borrow_mut()
            .push((ended.attempt, ended.elapsed_ms));
        None
    }

    fn asks_should_retry(&self) -> bool {
        self.hook.is_some()
    }

    fn should_retry<'t>(
        &'t self,
        ended: &Ended<'_>,
        _output: &u32,
    ) -> impl Future<Output = HookAnswer<u32>> + use<'t, 'c> {
        self.hook_asked.borrow_mut().push((
            ended.attempt,
            ended.outcome.status(),
            ended.elapsed_ms,
        ));
        let (answer, took) = self
            .hook
            .map_or((HookAnswer::Default, 0.0), |hook| hook(ended.outcome));
        let mut answer = Some(answer);
        let clock = self.clock;
        let due = clock.now_ms() + took;
        poll_fn(move |cx| {
            if clock.now_ms() < due {
                clock.park(cx);
                return Poll::Pending;
            }
            Poll::Ready(answer.take().unwrap_or(HookAnswer::Default))
        })
    }

    fn send(
        &self,
        attempt: u32,
        limit: AttemptLimit,
    ) -> impl Future<Output = (AttemptOutcome, u32)> {
        let (took, status) = self.plan.borrow_mut().pop_front().unwrap_or((1.0, 200));
        let clock = self.clock;
        let due = clock.now_ms() + took.min(limit.timeout_ms);
        let mut mark = Dropped(attempt, false, self.dropped.clone());
        poll_fn(move |cx| {
            // The whole marker lives in the closure (not just the field set below).
            let mark = &mut mark;
            if clock.aborted() {
                mark.1 = true;
                return Poll::Ready((AttemptOutcome::Aborted, attempt));
            }
            if clock.now_ms() < due {
                clock.park(cx);
                return Poll::Pending;
            }
            mark.1 = true;
            let outcome = if took > limit.timeout_ms {
                AttemptOutcome::Timeout
            } else {
                AttemptOutcome::Response {
                    status,
                    // A 429 here always says when to come back: in 5 s.
                    retry_after: (status == 429).then(|| "5".to_owned()),
                    quota: None,
                }
            };
            Poll::Ready((outcome, attempt))
        })
    }
}

/// Runs one call of `call` under `policy` on the manual clock, advancing it `step_ms` at a
/// time until it ends; returns its result, the events' kinds and the attempts dropped.
fn hedged_call(
    reg: &RefCell<Registry>,
    policy: &Policy,
    call: Call<'static>,
    plan: &[(f64, u16)],
    step_ms: f64,
) -> (CallResult<u32>, Vec<&'static str>, Vec<u32>, f64) {
    let clock = Clock::manual();
    let mut timed = Timed::new(&clock, plan);
    let (result, kinds) = run_timed(reg, policy, call, &mut timed, &clock, step_ms);
    let dropped = timed.dropped.borrow().clone();
    (result, kinds, dropped, clock.now_ms())
}

/// Runs one call through `timed` on `clock`, advancing it `step_ms` at a time until the call
/// ends; returns its result and the events' kinds.
fn run_timed(
    reg: &RefCell<Registry>,
    policy: &Policy,
    call: Call<'static>,
    timed: &mut Timed<'_>,
    clock: &Clock,
    step_ms: f64,
) -> (CallResult<u32>, Vec<&'static str>) {
    let kinds = RefCell::new(Vec::new());
    let mut on_event = |e: &Event<'_>| kinds.borrow_mut().push(e.kind());
    let result = {
        let mut pool = Pool::new();
        pool.spawn(engine::run(reg, policy, call, timed, clock, &mut on_event));
        let mut result = None;
        for _ in 0..100_000 {
            pool.run_until_stalled();
            if let Some(r) = pool.tasks[0].2.take() {
                result = Some(r);
                break;
            }
            clock.advance(step_ms);
        }
        result.expect("the call ends")
    };
    (result, kinds.into_inner())
}

fn hedging(hedge: serde_json::Value) -> Policy {
    policy(serde_json::json!({ "hedge": hedge, "retry": { "baseDelayMs": 1, "maxDelayMs": 1 } }))
}

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
    reg.borrow_mut().with(A, |_, s| {
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

/// How one of several calls side by side ended: its result, when, and its events (an
/// attempt's end as `attemptEnd N Kind`).
type Outcome = (CallResult<u32>, f64, Vec<String>);

/// Runs calls of `policy` side by side on the manual `clock`, each through its `Timed` from
/// its start (ms, in order), advancing the clock 1 ms at a time until all have ended.
fn side_by_side(
    reg: &RefCell<Registry>,
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

// ---------------------------------------------------------------- refused at once

/// A registry whose origin A's breaker `p` opened (3 failures), and its clock.
fn opened(p: &Policy) -> (RefCell<Registry>, Clock) {
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
    let refused = engine::refused_at_once(&sync, &p, A, &|| now, &mut |e| at_once.record(e));
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
    let none = |reg: &RefCell<Registry>, p: &Policy, origin: &str, now: f64| {
        let mut events = 0;
        let refused = engine::refused_at_once(reg, p, origin, &|| now, &mut |_| events += 1);
        assert_eq!(events, u32::from(refused.is_some()));
        refused
    };
    // Another origin (no state), and A once its cooldown has run out: the loop decides.
    assert_eq!(none(&reg, &p, B, clock.now_ms()), None);
    assert_eq!(none(&reg, &p, A, clock.now_ms() + 5000.0), None);
    // Anything that stands before the breaker in the loop: a bulkhead, throttling; breakers off.
    for extra in [
        serde_json::json!({"bulkhead": true}),
        serde_json::json!({"throttle": true}),
        serde_json::json!({"breaker": false}),
    ] {
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
    reg.borrow_mut()
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
