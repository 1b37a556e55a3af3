//! The fake environment (`Clock`: virtual time, seeded randomness, an abort switch), the
//! scripted transport (`Script`) and the owned record of a call's events (`Log`).

use super::UNIX_BASE;
use resilient_fetch::breaker::BreakerState;
use resilient_fetch::engine::{
    AttemptLimit, AttemptOutcome, BreakerAnswer, Ended, Env, HookAnswer, Transport,
};
use resilient_fetch::events::{Event, GiveUpReason, OutcomeKind, RetryReason};
#[cfg(feature = "pacing")]
use resilient_fetch::rate_limit::Quota;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::{Future, poll_fn};
use std::task::{Context, Poll, Waker};

/// The fake environment: virtual clock, seeded randomness, an abort switch.
pub struct Clock {
    pub now: Cell<f64>,
    pub seed: Cell<u64>,
    pub aborted: Cell<bool>,
    /// Auto mode: abort when a sleep reaches this time.
    pub abort_at: Cell<Option<f64>>,
    pub manual: bool,
    pub wakers: RefCell<Vec<Waker>>,
    /// Whether the runtime says it is offline; `online_at`: when the network comes back (the
    /// clock jumps there when a call waits for it; `None`: never).
    pub offline: Cell<bool>,
    pub online_at: Cell<Option<f64>>,
}

impl Clock {
    pub fn auto() -> Self {
        Clock {
            now: Cell::new(0.0),
            seed: Cell::new(0x9e37_79b9_7f4a_7c15),
            aborted: Cell::new(false),
            abort_at: Cell::new(None),
            manual: false,
            wakers: RefCell::new(Vec::new()),
            offline: Cell::new(false),
            online_at: Cell::new(None),
        }
    }

    pub fn manual() -> Self {
        Clock {
            manual: true,
            ..Clock::auto()
        }
    }

    pub fn advance(&self, ms: f64) {
        self.now.set(self.now.get() + ms);
        self.wake_all();
    }

    pub fn abort(&self) {
        self.aborted.set(true);
        self.wake_all();
    }

    pub fn wake_all(&self) {
        let wakers = std::mem::take(&mut *self.wakers.borrow_mut());
        wakers.into_iter().for_each(Waker::wake);
    }

    pub fn park(&self, cx: &Context<'_>) {
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

    fn offline(&self) -> bool {
        self.offline.get()
    }

    fn online_wait(&self) -> impl Future<Output = ()> {
        poll_fn(move |cx| match self.online_at.get() {
            Some(at) if !self.manual || self.now.get() >= at => {
                self.now.set(self.now.get().max(at));
                self.offline.set(false);
                Poll::Ready(())
            }
            _ => {
                self.park(cx);
                Poll::Pending
            }
        })
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
pub enum Step {
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
    #[cfg(feature = "pacing")]
    Quota(u16, u32, f64),
}

/// Answers attempts from a script; each answer takes `took_ms` of virtual time. The output
/// is the attempt's number, so tests can tell which attempt's output came back.
pub struct Script<'e> {
    pub clock: &'e Clock,
    pub steps: RefCell<VecDeque<Step>>,
    pub limits: RefCell<Vec<AttemptLimit>>,
    /// Where each attempt went: `None` the call's own URL, else the alternate origin.
    pub sent_to: RefCell<Vec<Option<String>>>,
    pub took_ms: f64,
    /// The caller's `retry.shouldRetry`, one answer per attempt (none: no hook).
    pub answers: Option<RefCell<VecDeque<Answer>>>,
    /// What the hook was asked: (attempt, elapsed, remaining).
    pub asked: RefCell<Vec<(u32, f64, f64)>>,
    /// The caller's `breaker.isFailure`.
    pub is_failure: Option<fn(&AttemptOutcome) -> Option<bool>>,
}

impl<'e> Script<'e> {
    pub fn new(clock: &'e Clock, steps: &[Step]) -> Self {
        Script {
            clock,
            steps: RefCell::new(steps.iter().cloned().collect()),
            limits: RefCell::new(Vec::new()),
            sent_to: RefCell::new(Vec::new()),
            took_ms: 10.0,
            answers: None,
            asked: RefCell::new(Vec::new()),
            is_failure: None,
        }
    }

    pub fn answering(mut self, answers: &[Answer]) -> Self {
        self.answers = Some(RefCell::new(answers.iter().copied().collect()));
        self
    }
}

/// A scripted `shouldRetry` answer.
#[derive(Clone, Copy, Debug)]
pub enum Answer {
    Retry,
    Stop,
    Default,
    /// The hook throws: the call ends with this output.
    Fail(u32),
    /// The hook never answers.
    Never,
}

impl<'e> Transport for Script<'e> {
    type Output = u32;

    fn send(
        &self,
        attempt: u32,
        limit: AttemptLimit,
        to: Option<resilient_fetch::failover::Alternate<'_>>,
    ) -> impl Future<Output = (AttemptOutcome, u32)> {
        self.limits.borrow_mut().push(limit);
        let to = to.map(|alternate| alternate.origin().to_owned());
        self.sent_to.borrow_mut().push(to);
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
                #[cfg(feature = "pacing")]
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

    fn is_failure(&self, ended: &Ended<'_>, _output: &u32) -> BreakerAnswer {
        match self.is_failure.and_then(|f| f(ended.outcome)) {
            Some(true) => BreakerAnswer::Failure,
            Some(false) => BreakerAnswer::Success,
            None => BreakerAnswer::Default,
        }
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
pub struct Log {
    pub kinds: Vec<&'static str>,
    pub retries: Vec<(u32, f64, RetryReason, bool)>,
    pub give_ups: Vec<(GiveUpReason, u32)>,
    pub transitions: Vec<(String, BreakerState, BreakerState)>,
    pub ends: Vec<(OutcomeKind, Option<u16>)>,
    pub short_circuits: Vec<f64>,
}

impl Log {
    pub fn record(&mut self, event: &Event<'_>) {
        self.kinds.push(event.kind());
        match *event {
            Event::Retry {
                attempt,
                delay_ms,
                reason,
                retry_after,
                ..
            } => {
                self.retries.push((attempt, delay_ms, reason, retry_after));
            }
            Event::GiveUp { reason, attempts } => self.give_ups.push((reason, attempts)),
            Event::BreakerTransition {
                origin, from, to, ..
            } => {
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
