//! Attempts that answer on a timed plan of the manual clock (`Timed`), for hedged reads, and
//! the runners that step such calls to their end.

use super::pool::Pool;
use super::*;
use resilient_fetch::engine::{
    self, AttemptLimit, AttemptOutcome, BreakerAnswer, Call, CallResult, Ended, Env, HookAnswer,
    Transport,
};
use resilient_fetch::events::Event;
use resilient_fetch::policy::Policy;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::{Future, poll_fn};
use std::rc::Rc;
use std::task::Poll;

/// Attempts that answer after a planned time of the manual clock: `(took_ms, status)` per
/// attempt (an attempt past its limit times out). Attempts dropped before they answered
/// (aborted) are listed in `dropped`.
pub struct Timed<'c> {
    pub clock: &'c Clock,
    pub plan: RefCell<VecDeque<(f64, u16)>>,
    pub dropped: Rc<RefCell<Vec<u32>>>,
    /// What `isFailure` was asked: (attempt, elapsed since the call started).
    pub asked: RefCell<Vec<(u32, f64)>>,
    /// The caller's `retry.shouldRetry` (none: no hook): its answer to an outcome, and how
    /// many ms after it is asked it gives it.
    pub hook: Option<Hook>,
    /// What `shouldRetry` was asked: (attempt, status, elapsed since the call started).
    pub hook_asked: RefCell<Vec<(u32, Option<u16>, f64)>>,
}

impl<'c> Timed<'c> {
    pub fn new(clock: &'c Clock, plan: &[(f64, u16)]) -> Self {
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
    pub fn asking(mut self, hook: Hook) -> Self {
        self.hook = Some(hook);
        self
    }
}

/// A scripted `shouldRetry`: its answer to an outcome, given this many ms after it is asked.
pub type Hook = fn(&AttemptOutcome) -> (HookAnswer<u32>, f64);

/// Notes its attempt as dropped unless it answered.
pub struct Dropped(u32, bool, Rc<RefCell<Vec<u32>>>);

impl Drop for Dropped {
    fn drop(&mut self) {
        if !self.1 {
            self.2.borrow_mut().push(self.0);
        }
    }
}

impl<'c> Transport for Timed<'c> {
    type Output = u32;

    fn is_failure(&self, ended: &Ended<'_>, _output: &u32) -> BreakerAnswer {
        self.asked
            .borrow_mut()
            .push((ended.attempt, ended.elapsed_ms));
        BreakerAnswer::Default
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
        _: Option<resilient_fetch::failover::Alternate<'_>>,
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
pub fn hedged_call(
    reg: &Owner,
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
pub fn run_timed(
    reg: &Owner,
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

pub fn hedging(hedge: serde_json::Value) -> Policy {
    policy(serde_json::json!({ "hedge": hedge, "retry": { "baseDelayMs": 1, "maxDelayMs": 1 } }))
}
