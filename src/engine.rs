//! The engine: one call's loop of attempts, waits and decisions.
//!
//! The engine does the waiting and bookkeeping; what to decide lives in [`crate::classify`],
//! [`crate::backoff`], [`crate::breaker`] and [`crate::budget`]. Time, randomness, timers and
//! the caller's abort signal come from an [`Env`]; requests go out through a [`Transport`].
//! Both are the shell's in production and fakes in tests.
//!
//! Order of a call: bulkhead (may queue), then per attempt: breaker, send (limited by the
//! per-attempt timeout and what is left of the total deadline), record, decide; a retry
//! needs a safe request, attempts left, an acceptable `Retry-After`, a wait that ends at
//! least [`MIN_ATTEMPT_MS`] before the deadline, a breaker that will not still be open when
//! the wait ends, and budget tokens, in that order. The tokens are withdrawn when the retry
//! is decided (so concurrent calls cannot spend them during the wait) and given back if the
//! retry is then not sent: the breaker refuses it, the deadline has come, the caller
//! aborts, or the call is dropped. No `RefCell` borrow is held across an `await` or while
//! an event is delivered (`onEvent` may call back into the registry).
//!
//! A timeout counts against the origin's breaker when the attempt had at least half of
//! the smaller of `timeoutMs` and `totalTimeoutMs` to answer. An attempt cut short by what
//! was left of the call's deadline before that says nothing about the origin (the call ran
//! out of its own time, not the server): it counts in `timeouts` only. So an origin that
//! never answers trips the breaker under any ordering of the two limits.

pub use crate::classify::AttemptOutcome;

use crate::backoff;
use crate::breaker::{BreakerState, Permit, Transition};
use crate::bulkhead::{Admission, BulkheadPermit};
use crate::classify::{Verdict, classify, is_breaker_failure, is_idempotent_method};
use crate::events::{Event, GiveUpReason, RetryReason};
use crate::policy::{BreakerPolicy, Policy};
use crate::registry::{EntryId, Registry};
use crate::retry_after;
use std::cell::RefCell;
use std::future::{Future, poll_fn};
use std::pin::pin;
use std::task::Poll;

/// Time, randomness, timers and the caller's abort signal. All methods take `&self`:
/// implement with `Cell`/`RefCell` inside.
pub trait Env {
    /// Monotonic time in ms (`performance.now()`).
    fn now_ms(&self) -> f64;
    /// Wall-clock time in ms since 1970 (`Date.now()`), for HTTP-date `Retry-After`.
    fn unix_ms(&self) -> f64;
    /// A uniform random number in `[0, 1)`.
    fn random(&self) -> f64;
    /// Resolves after `ms` milliseconds (at once if `ms <= 0`); dropping it cancels the timer.
    fn sleep(&self, ms: f64) -> impl Future<Output = ()>;
    /// Whether the caller's signal has already aborted.
    fn aborted(&self) -> bool;
    /// Resolves when the caller aborts; pending forever without a signal.
    fn abort_wait(&self) -> impl Future<Output = ()>;
}

/// Least time, in ms, that must be left before the total deadline for an attempt to start;
/// with less, the deadline counts as reached (an attempt given a sliver of time would only
/// time out).
pub const MIN_ATTEMPT_MS: f64 = 1.0;

/// How long one attempt may take.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AttemptLimit {
    /// The attempt's time limit in ms: `timeoutMs`, or less if the deadline is nearer.
    pub timeout_ms: f64,
    /// Whether this limit is what is left of the total deadline (not `timeoutMs`).
    pub is_deadline: bool,
}

impl AttemptLimit {
    /// Whether a timeout under this limit is held against the origin: yes under
    /// `timeoutMs`, and under the deadline's rest when that was at least half of the
    /// smaller of `timeoutMs` and `totalTimeoutMs` (see the module docs).
    pub fn timeout_counts(&self, policy: &Policy) -> bool {
        let full = policy.timeout_ms.min(policy.total_timeout_ms);
        !self.is_deadline || self.timeout_ms * 2.0 >= f64::from(full)
    }
}

/// Sends one attempt. The transport enforces the limit itself and reports
/// [`AttemptOutcome::Timeout`] when it runs out.
pub trait Transport {
    /// What the shell gets back from an attempt (a JS `Response` or error), opaque here.
    type Output;
    /// Sends attempt number `attempt` (from 1) within `limit`.
    fn send(
        &mut self,
        attempt: u32,
        limit: AttemptLimit,
    ) -> impl Future<Output = (AttemptOutcome, Self::Output)>;
}

/// What the engine needs to know about a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Call<'a> {
    /// The origin, as the platform's URL parser serialises it (the registry's key).
    pub origin: &'a str,
    /// HTTP method.
    pub method: &'a str,
    /// Whether the request carries an idempotency key.
    pub has_key: bool,
    /// Whether the body can be sent again (false for a one-shot stream).
    pub replayable: bool,
}

/// How a call ended.
#[derive(Debug, PartialEq)]
pub enum CallResult<O> {
    /// Attempts were made; `output` is the last one's (resolve with it or reject with it).
    Done {
        /// The last attempt's output.
        output: O,
        /// Attempts made.
        attempts: u32,
    },
    /// The breaker was open before the first attempt: nothing was sent.
    ShortCircuited {
        /// When the breaker may let a call through, in ms from now.
        retry_after_ms: f64,
    },
    /// The bulkhead and its queue were full: nothing was sent.
    BulkheadFull,
    /// The caller aborted before the first attempt, or while waiting (backoff or queue).
    Aborted,
    /// The total deadline ran out before any attempt could start.
    DeadlineExceeded,
}

/// Runs one call: bulkhead, attempts, retries, bookkeeping and events.
pub async fn run<T: Transport, E: Env>(
    registry: &RefCell<Registry>,
    policy: &Policy,
    call: Call<'_>,
    transport: &mut T,
    env: &E,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> CallResult<T::Output> {
    let called_at = env.now_ms();
    let ctx = Ctx {
        registry,
        policy,
        origin: call.origin,
        safe: call.replayable && (call.has_key || is_idempotent_method(call.method)),
        deadline: called_at + f64::from(policy.total_timeout_ms),
    };
    // The first attempt starts when the call is made, unless a bulkhead (which may
    // queue the call) stands in between: one clock read fewer per call.
    let mut first_start = policy.bulkhead.is_none().then_some(called_at);
    if env.aborted() {
        return CallResult::Aborted;
    }
    let _slot = match admit(&ctx, env, on_event).await {
        Ok(slot) => slot,
        Err(refusal) => return refusal.into(),
    };
    let mut progress = Progress {
        attempt: 0,
        last_delay_ms: policy
            .retry
            .as_ref()
            .map_or(0.0, |r| f64::from(r.base_delay_ms)),
        spent: None,
    };
    // The last attempt's output, kept while waiting to retry it.
    let mut previous: Option<T::Output> = None;
    // The budget tokens of the retry about to be sent; given back when dropped unsent.
    let mut reserved: Option<Reservation<'_>> = None;
    // The origin marked in use while the call waits to retry (until the next attempt counts).
    let mut waiting: Option<WaitHold<'_>> = None;
    loop {
        if env.aborted() {
            drop(reserved.take());
            return CallResult::Aborted;
        }
        progress.attempt += 1;
        let attempt = progress.attempt;
        let start = first_start.take().unwrap_or_else(|| env.now_ms());
        let remaining = ctx.deadline - start;
        let began = if remaining >= MIN_ATTEMPT_MS {
            AttemptGuard::begin(&ctx, start, attempt, on_event)
        } else {
            Err(Blocked::Deadline)
        };
        // From here the attempt (or the end of the call) keeps the origin in use.
        drop(waiting.take());
        if began.is_err() {
            // The retry is not sent: its tokens go back before the call ends.
            drop(reserved.take());
        }
        let guard = match (began, previous.take()) {
            (Ok(guard), _) => {
                progress.spent = reserved.take().map(Reservation::commit);
                guard
            }
            (Err(Blocked::Deadline), None) => return CallResult::DeadlineExceeded,
            (Err(Blocked::Breaker(retry_after_ms)), None) => {
                return CallResult::ShortCircuited { retry_after_ms };
            }
            (Err(blocked), Some(output)) => {
                let reason = match blocked {
                    Blocked::Deadline => GiveUpReason::Deadline,
                    Blocked::Breaker(_) => GiveUpReason::BreakerOpen,
                };
                return give_up(reason, output, attempt - 1, on_event);
            }
        };
        let timeout = f64::from(policy.timeout_ms);
        let limit = AttemptLimit {
            timeout_ms: timeout.min(remaining),
            is_deadline: remaining < timeout,
        };
        let (outcome, output) = transport.send(attempt, limit).await;
        let end = env.now_ms();
        let aborted = outcome.is_local() || env.aborted();
        // Cut short by the call's own deadline: no verdict on the origin.
        let cut_by_deadline = outcome == AttemptOutcome::Timeout && !limit.timeout_counts(policy);
        let failed = if aborted || cut_by_deadline {
            None
        } else {
            is_breaker_failure(&outcome)
        };
        let verdict = if aborted {
            Verdict::Aborted
        } else {
            classify(&outcome, policy.retry.as_ref(), ctx.safe)
        };
        // A call that may retry keeps its origin in use from the end of this attempt
        // (handed over in the same registry access), through the events and the wait.
        let may_retry = matches!(verdict, Verdict::Retry(_));
        let timed_out = outcome == AttemptOutcome::Timeout;
        let (transition, hold) = guard.finish(failed, timed_out, end, may_retry);
        waiting = hold;
        on_event(&Event::AttemptEnd {
            attempt,
            outcome: outcome.kind(),
            status: outcome.status(),
            duration_ms: end - start,
        });
        report(transition, ctx.origin, on_event);
        let random = || env.random();
        let unix = || env.unix_ms();
        match decide(&ctx, verdict, &outcome, &progress, end, &unix, &random) {
            Next::Stop => {
                return CallResult::Done {
                    output,
                    attempts: attempt,
                };
            }
            Next::Success => {
                on_event(&Event::Success { attempts: attempt });
                return CallResult::Done {
                    output,
                    attempts: attempt,
                };
            }
            Next::GiveUp(reason) => return give_up(reason, output, attempt, on_event),
            Next::Retry {
                delay_ms,
                reason,
                retry_after,
                tokens,
            } => {
                on_event(&Event::Retry {
                    attempt: attempt + 1,
                    delay_ms,
                    reason,
                    retry_after,
                });
                if let Either::Left(()) = race(env.abort_wait(), env.sleep(delay_ms)).await {
                    drop(tokens);
                    return CallResult::Aborted;
                }
                progress.last_delay_ms = delay_ms;
                reserved = tokens;
                previous = Some(output);
            }
        }
    }
}

/// What every step of a call shares.
struct Ctx<'a> {
    registry: &'a RefCell<Registry>,
    policy: &'a Policy,
    origin: &'a str,
    /// Whether repeating the request is safe.
    safe: bool,
    /// When the whole call must be over (monotonic ms).
    deadline: f64,
}

/// Where the retry loop stands.
struct Progress {
    /// The current attempt's number, from 1.
    attempt: u32,
    /// The last backoff wait (for decorrelated jitter; `baseDelayMs` before the first).
    last_delay_ms: f64,
    /// Budget tokens the retry that led to this attempt cost (`None` for the first attempt
    /// or without a budget).
    spent: Option<u32>,
}

/// Why an attempt cannot start.
enum Blocked {
    /// The total deadline has passed.
    Deadline,
    /// The breaker refused; it may let a call through in this many ms.
    Breaker(f64),
}

enum Next<'a> {
    /// The caller aborted: hand the output back, no event.
    Stop,
    Success,
    GiveUp(GiveUpReason),
    Retry {
        delay_ms: f64,
        reason: RetryReason,
        retry_after: bool,
        /// The retry's budget tokens (`None` without a budget).
        tokens: Option<Reservation<'a>>,
    },
}

/// Decides what follows an attempt; withdraws or refunds budget tokens as it goes.
fn decide<'a>(
    ctx: &Ctx<'a>,
    verdict: Verdict,
    outcome: &AttemptOutcome,
    progress: &Progress,
    now: f64,
    unix_ms: &dyn Fn() -> f64,
    random: &dyn Fn() -> f64,
) -> Next<'a> {
    let budget = ctx.policy.retry_budget.as_ref();
    let (reason, retry) = match (verdict, ctx.policy.retry.as_ref()) {
        (Verdict::Aborted, _) => return Next::Stop,
        (Verdict::Success, _) => {
            if let Some(b) = budget {
                let refund = progress.spent.unwrap_or(b.no_retry_increment);
                ctx.registry.borrow_mut().with(ctx.origin, |_, s| {
                    s.budget_capacity = b.capacity;
                    s.budget.on_success(refund, b.capacity);
                });
            }
            return Next::Success;
        }
        (Verdict::GiveUp(reason), _) => return Next::GiveUp(reason),
        (Verdict::Retry(reason), Some(retry)) => (reason, retry),
        // `classify` only says Retry when there is a retry policy.
        (Verdict::Retry(_), None) => return Next::GiveUp(GiveUpReason::NotRetryable),
    };
    if progress.attempt >= retry.max_attempts {
        return Next::GiveUp(GiveUpReason::MaxAttempts);
    }
    let header = match outcome {
        AttemptOutcome::Response {
            retry_after: Some(value),
            ..
        } => retry_after::parse(value, unix_ms()),
        _ => None,
    };
    // Whether an attempt could still start after waiting `wait` ms.
    let in_time = |wait: f64| ctx.deadline - (now + wait) >= MIN_ATTEMPT_MS;
    let delay_ms = match header {
        Some(wait) if wait > f64::from(retry.max_retry_after_ms) || !in_time(wait) => {
            return Next::GiveUp(GiveUpReason::RetryAfterTooLong);
        }
        Some(wait) => wait,
        None => backoff::delay(
            retry.jitter,
            progress.attempt.saturating_sub(1),
            f64::from(retry.base_delay_ms),
            f64::from(retry.max_delay_ms),
            progress.last_delay_ms,
            random(),
        ),
    };
    if !in_time(delay_ms) {
        return Next::GiveUp(GiveUpReason::Deadline);
    }
    // Still open when the wait ends (e.g. this very attempt just opened it and the cooldown
    // is longer than the wait): the retry would be refused, so do not wait for it.
    if ctx.policy.breaker.is_some()
        && ctx
            .registry
            .borrow()
            .breaker_state(ctx.origin, now + delay_ms)
            == BreakerState::Open
    {
        return Next::GiveUp(GiveUpReason::BreakerOpen);
    }
    let tokens = match budget {
        None => None,
        Some(b) => {
            let cost = match reason {
                RetryReason::Status => b.retry_cost,
                RetryReason::Network | RetryReason::Timeout => b.timeout_retry_cost,
            };
            let (id, withdrawn) = ctx.registry.borrow_mut().with(ctx.origin, |id, s| {
                s.budget_capacity = b.capacity;
                (id, s.budget.try_withdraw(cost, b.capacity))
            });
            if !withdrawn {
                return Next::GiveUp(GiveUpReason::Budget);
            }
            Some(Reservation {
                registry: ctx.registry,
                origin: ctx.origin,
                id,
                cost,
                capacity: b.capacity,
                sent: false,
            })
        }
    };
    Next::Retry {
        delay_ms,
        reason,
        retry_after: header.is_some(),
        tokens,
    }
}

/// Budget tokens withdrawn for a retry that has not started yet. Dropped before
/// [`Reservation::commit`] (the retry was not sent), it gives them back to the entry it
/// took them from; nothing happens if that entry was evicted meanwhile.
struct Reservation<'a> {
    registry: &'a RefCell<Registry>,
    origin: &'a str,
    id: EntryId,
    cost: u32,
    capacity: u32,
    sent: bool,
}

impl Reservation<'_> {
    /// The retry started: the tokens are spent. Returns their number.
    fn commit(mut self) -> u32 {
        self.sent = true;
        self.cost
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if self.sent {
            return;
        }
        let Ok(mut registry) = self.registry.try_borrow_mut() else {
            return;
        };
        if let Some(state) = registry.get_mut(self.origin, self.id) {
            state.budget_capacity = self.capacity;
            // Up to the capacity, like a success's refund.
            state.budget.on_success(self.cost, self.capacity);
        }
    }
}

fn give_up<O>(
    reason: GiveUpReason,
    output: O,
    attempts: u32,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> CallResult<O> {
    on_event(&Event::GiveUp { reason, attempts });
    CallResult::Done { output, attempts }
}

fn report(transition: Option<Transition>, origin: &str, on_event: &mut dyn FnMut(&Event<'_>)) {
    if let Some(t) = transition {
        on_event(&Event::BreakerTransition {
            origin,
            from: t.from,
            to: t.to,
        });
    }
}

/// Why a call got no bulkhead slot.
enum Refusal {
    Full,
    Aborted,
    Deadline,
}

impl<O> From<Refusal> for CallResult<O> {
    fn from(refusal: Refusal) -> Self {
        match refusal {
            Refusal::Full => CallResult::BulkheadFull,
            Refusal::Aborted => CallResult::Aborted,
            Refusal::Deadline => CallResult::DeadlineExceeded,
        }
    }
}

/// A bulkhead slot (none when the bulkhead is off); waiting races the abort and the deadline.
async fn admit<E: Env>(
    ctx: &Ctx<'_>,
    env: &E,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> Result<Option<BulkheadPermit>, Refusal> {
    let Some(policy) = &ctx.policy.bulkhead else {
        return Ok(None);
    };
    let bulkhead = ctx
        .registry
        .borrow_mut()
        .with(ctx.origin, |_, s| s.bulkhead.clone());
    let wait = match bulkhead.acquire(policy) {
        Admission::Admitted(permit) => return Ok(Some(permit)),
        Admission::Full => {
            on_event(&Event::BulkheadRejected { origin: ctx.origin });
            return Err(Refusal::Full);
        }
        Admission::Queued(wait) => wait,
    };
    let stop = race(env.abort_wait(), env.sleep(ctx.deadline - env.now_ms()));
    match race(wait, stop).await {
        Either::Left(permit) => Ok(Some(permit)),
        Either::Right(Either::Left(())) => Err(Refusal::Aborted),
        Either::Right(Either::Right(())) => Err(Refusal::Deadline),
    }
}

/// A call's hold on its origin between an attempt that may be retried and the next
/// attempt (or the call's end): the origin's `waiting` count, so that the registry does
/// not evict it as idle (see [`Registry`]'s bound).
struct WaitHold<'a> {
    registry: &'a RefCell<Registry>,
    origin: &'a str,
    id: EntryId,
}

impl Drop for WaitHold<'_> {
    fn drop(&mut self) {
        // No borrow is held across an await or when a call's future is dropped.
        let registry = self.registry.try_borrow_mut();
        debug_assert!(registry.is_ok(), "the registry is borrowed as a wait ends");
        // Gone if the origin was evicted meanwhile (every origin busy at the bound).
        if let Ok(mut registry) = registry
            && let Some(state) = registry.get_mut(self.origin, self.id)
        {
            state.waiting = state.waiting.saturating_sub(1);
        }
    }
}

/// One attempt's hold on the origin: its breaker permit and its `in_flight` count.
/// Dropped without [`AttemptGuard::finish`] (the call's future was dropped mid-attempt),
/// it releases both as a caller abort.
struct AttemptGuard<'a> {
    registry: &'a RefCell<Registry>,
    origin: &'a str,
    id: EntryId,
    breaker: Option<(&'a BreakerPolicy, Permit)>,
    started_ms: f64,
    finished: bool,
}

impl<'a> AttemptGuard<'a> {
    /// Asks the breaker and counts the attempt.
    fn begin(
        ctx: &Ctx<'a>,
        now: f64,
        attempt: u32,
        on_event: &mut dyn FnMut(&Event<'_>),
    ) -> Result<Self, Blocked> {
        let policy = ctx.policy.breaker.as_ref();
        let (began, transition) = ctx.registry.borrow_mut().with(ctx.origin, |id, s| {
            let permit = match policy.map(|p| s.breaker.try_acquire(now, p)) {
                Some(Err(rejected)) => {
                    s.stats.short_circuits += 1;
                    return (Err(rejected.retry_after_ms), None);
                }
                Some(Ok(permit)) => Some(permit),
                None => None,
            };
            s.stats.attempts += 1;
            s.stats.retries += u64::from(attempt > 1);
            s.stats.in_flight += 1;
            let transition = permit.as_ref().and_then(Permit::transition);
            (Ok((id, permit)), transition)
        });
        report(transition, ctx.origin, on_event);
        match began {
            Err(retry_after_ms) => {
                on_event(&Event::ShortCircuit {
                    origin: ctx.origin,
                    retry_after_ms,
                });
                Err(Blocked::Breaker(retry_after_ms))
            }
            Ok((id, permit)) => {
                on_event(&Event::AttemptStart {
                    attempt,
                    origin: ctx.origin,
                });
                Ok(AttemptGuard {
                    registry: ctx.registry,
                    origin: ctx.origin,
                    id,
                    breaker: policy.zip(permit),
                    started_ms: now,
                    finished: false,
                })
            }
        }
    }

    /// Records the attempt's result (`None`: caller abort); returns the breaker transition
    /// and, with `hold`, the call's hold on the origin while it goes on to retry (none if
    /// the origin was evicted meanwhile).
    fn finish(
        mut self,
        failed: Option<bool>,
        timed_out: bool,
        now: f64,
        hold: bool,
    ) -> (Option<Transition>, Option<WaitHold<'a>>) {
        self.finished = true;
        match self.release(failed, timed_out, now, hold) {
            Some(transition) => {
                let hold = hold.then_some(WaitHold {
                    registry: self.registry,
                    origin: self.origin,
                    id: self.id,
                });
                (transition, hold)
            }
            None => (None, None),
        }
    }

    /// `None` if the origin's entry is gone; else the breaker transition. With `hold`,
    /// the origin's `waiting` count is taken for the call.
    fn release(
        &mut self,
        failed: Option<bool>,
        timed_out: bool,
        now: f64,
        hold: bool,
    ) -> Option<Option<Transition>> {
        let mut registry = self.registry.try_borrow_mut().ok()?;
        // Gone if the origin was evicted meanwhile: then there is nothing to update.
        let state = registry.get_mut(self.origin, self.id)?;
        state.waiting += u32::from(hold);
        let stats = &mut state.stats;
        stats.in_flight = stats.in_flight.saturating_sub(1);
        match failed {
            Some(true) => stats.failures += 1,
            Some(false) => stats.successes += 1,
            None => {}
        }
        stats.timeouts += u64::from(timed_out);
        Some(
            self.breaker
                .take()
                .and_then(|(policy, permit)| state.breaker.record(permit, failed, now, policy)),
        )
    }
}

impl Drop for AttemptGuard<'_> {
    fn drop(&mut self) {
        if !self.finished {
            let _ = self.release(None, false, self.started_ms, false);
        }
    }
}

/// Which of two raced futures finished first.
pub(crate) enum Either<A, B> {
    /// The first.
    Left(A),
    /// The second.
    Right(B),
}

/// Awaits both futures and returns the first to finish (`a` wins a tie); the other is dropped.
pub(crate) async fn race<A: Future, B: Future>(a: A, b: B) -> Either<A::Output, B::Output> {
    let mut a = pin!(a);
    let mut b = pin!(b);
    poll_fn(|cx| {
        if let Poll::Ready(out) = a.as_mut().poll(cx) {
            return Poll::Ready(Either::Left(out));
        }
        b.as_mut().poll(cx).map(Either::Right)
    })
    .await
}
