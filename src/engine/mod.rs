//! The engine: one call's loop of attempts, waits and decisions.
//!
//! The loop (here) does the waiting, the I/O and the bookkeeping; what follows an attempt is
//! decided from facts alone in [`decide()`] (`decide.rs`), with [`crate::classify`],
//! [`crate::backoff`] and [`crate::budget`]; the holds a call keeps on its origin's entry
//! live in `guards.rs`; an attempt's end (recorded, judged, asked about) in `attempt.rs`;
//! a hedged race in `hedged.rs`. Time, randomness, timers and the caller's abort signal come from
//! an [`Env`]; requests go out through a [`Transport`]. Both are the shell's in production
//! and fakes in tests.
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

mod attempt;
mod decide;
mod guards;
mod hedged;

pub use decide::{Facts, Next, decide};

use crate::breaker::Transition;
use crate::bulkhead::{Admission, BulkheadPermit};
use crate::classify::Verdict;
use crate::events::{Event, GiveUpReason, RetryReason};
use crate::origin::{Ask, Refusal};
use crate::pacing::Why;
use crate::policy::Policy;
use crate::registry::Registry;
use crate::retry_after;
use crate::vocab::Method;
use attempt::{Answered, Flight, ask, settle};
use guards::{AttemptGuard, Booking, Reservation, WaitHold};
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
    /// The limit of an attempt that starts with `remaining` ms left before the deadline.
    pub fn at(policy: &Policy, remaining: f64) -> Self {
        let timeout = f64::from(policy.timeout_ms);
        AttemptLimit {
            timeout_ms: timeout.min(remaining),
            is_deadline: remaining < timeout,
        }
    }

    /// Whether a timeout under this limit is held against the origin: yes under
    /// `timeoutMs`, and under the deadline's rest when that was at least half of the
    /// smaller of `timeoutMs` and `totalTimeoutMs` (see the module docs).
    pub fn timeout_counts(&self, policy: &Policy) -> bool {
        let full = policy.timeout_ms.min(policy.total_timeout_ms);
        !self.is_deadline || self.timeout_ms * 2.0 >= f64::from(full)
    }
}

/// Sends one attempt. The transport enforces the limit itself and reports
/// [`AttemptOutcome::Timeout`] when it runs out. It also carries the caller's own
/// decisions, if any (`breaker.isFailure`, `retry.shouldRetry`); by default there are none.
pub trait Transport {
    /// What the shell gets back from an attempt (a JS `Response` or error), opaque here.
    type Output;
    /// Sends attempt number `attempt` (from 1) within `limit`. Hedged reads have several
    /// in flight at once; dropping one before it ends aborts it (its request is cancelled).
    fn send(
        &self,
        attempt: u32,
        limit: AttemptLimit,
    ) -> impl Future<Output = (AttemptOutcome, Self::Output)>;

    /// The caller's answer to "does this outcome count against the breaker?": `Some`
    /// overrides the built-in rule, `None` keeps it. Synchronous: the breaker decides at once.
    fn is_failure(&self, _ended: &Ended<'_>, _output: &Self::Output) -> Option<bool> {
        None
    }

    /// Whether the caller decides about retries ([`Transport::should_retry`]).
    fn asks_should_retry(&self) -> bool {
        false
    }

    /// The caller's answer to "retry after this outcome?", asked after every attempt the
    /// caller did not abort when [`Transport::asks_should_retry`] (in a hedged race, about
    /// each attempt that ended, while the others go on); bounded by the call's deadline and
    /// the caller's abort. The answer may borrow the transport, not what it was asked about.
    fn should_retry<'t>(
        &'t self,
        _ended: &Ended<'_>,
        _output: &Self::Output,
    ) -> impl Future<Output = HookAnswer<Self::Output>> + use<'t, Self> {
        std::future::ready(HookAnswer::Default)
    }
}

/// An attempt that has ended, as the caller's decisions see it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ended<'a> {
    /// The attempt's number, from 1.
    pub attempt: u32,
    /// How it ended.
    pub outcome: &'a AttemptOutcome,
    /// Since the call started, in ms.
    pub elapsed_ms: f64,
    /// Until the call's deadline, in ms.
    pub remaining_ms: f64,
}

/// The caller's answer to "retry?". It widens or narrows which outcomes are retried, never
/// the safety rules: an unsafe request without a key is not repeated, and attempts, the
/// deadline, the budget, the breaker and `Retry-After` still apply.
#[derive(Debug, PartialEq)]
pub enum HookAnswer<O> {
    /// Retry (if repeating is safe and the other rules allow it).
    Retry,
    /// Do not retry: this outcome is the call's.
    Stop,
    /// Keep the built-in answer.
    Default,
    /// The hook failed: stop, and end the call with this output instead.
    Fail(O),
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
    /// Whether the request has a body (then it is never hedged).
    pub has_body: bool,
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
    /// The origin's rate-limit wait was too long for the call: nothing was sent.
    RateLimited {
        /// When the origin may be sent to, in ms from now.
        retry_after_ms: f64,
        /// Why it waits.
        reason: Why,
    },
    /// Adaptive throttling refused the call locally: nothing was sent.
    Throttled,
}

/// A call its origin's breaker refuses now (`now()` is read only when its breaker is not
/// closed) with nothing that could stand before the breaker in the loop (no bulkhead, no
/// throttling, no deadline shorter than an attempt, no rate-limit quota or hold known for the
/// origin): refused at once, counted and told (`shortCircuit`) as [`run`] would, without the
/// call's async machinery. Returns in how long a call may go; `None`: the call runs, and
/// [`run`] decides the same way.
pub fn refused_at_once(
    registry: &RefCell<Registry>,
    policy: &Policy,
    origin: &str,
    now: &dyn Fn() -> f64,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> Option<f64> {
    // A bulkhead may queue the call before its first attempt asks.
    if policy.bulkhead.is_some() || f64::from(policy.total_timeout_ms) < MIN_ATTEMPT_MS {
        return None;
    }
    let mut registry = registry.try_borrow_mut().ok()?;
    // An origin without state has a closed breaker: nothing to refuse, no clock to read.
    registry.peek(origin).filter(|s| !s.breaker.is_closed())?;
    let now = now();
    // The origin's own admission list, asked to refuse at once or to say nothing.
    let asked = registry.with(origin, |_, s| s.admit(Ask::AtOnce, now, policy, &|| 0.0));
    drop(registry);
    let Err(Refusal::Breaker(retry_after_ms)) = asked else {
        return None;
    };
    on_event(&Event::ShortCircuit {
        origin,
        retry_after_ms,
    });
    Some(retry_after_ms)
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
        safe: call.replayable && (call.has_key || Method(call.method).is_idempotent()),
        called_at,
        deadline: called_at + f64::from(policy.total_timeout_ms),
    };
    let hedge =
        (policy.hedge.as_ref()).filter(|_| crate::hedge::may_hedge(call.method, call.has_body));
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
    // A wait before the next attempt: a retry's backoff, or what the origin's rate limit
    // asks for (one place to wait, so the call's future has one waiting state).
    let mut wait: Option<f64> = None;
    // The send its origin's pacing booked for the call when that wait ends, if any.
    let mut booking: Option<Booking<'_>> = None;
    // How long the call has waited for its origin's rate limit: `maxWaitMs` bounds the sum.
    let mut paced_ms = 0.0;
    loop {
        if let Some(ms) = wait.take()
            && let Either::Left(()) = race(env.abort_wait(), env.sleep(ms)).await
        {
            drop(reserved.take());
            return CallResult::Aborted;
        }
        if env.aborted() {
            drop(reserved.take());
            return CallResult::Aborted;
        }
        let attempt = progress.attempt + 1;
        let start = first_start.take().unwrap_or_else(|| env.now_ms());
        let remaining = ctx.deadline - start;
        let began = if remaining >= MIN_ATTEMPT_MS {
            // The longest the origin may still make this call wait before its attempt.
            let cap = policy.rate_limit.as_ref().map_or(0, |r| r.max_wait_ms);
            let ask = Ask::Attempt {
                retry: attempt > 1,
                booked: booking.as_ref().map(|b| b.ticket),
                max_wait: (f64::from(cap) - paced_ms).min(remaining - MIN_ATTEMPT_MS),
            };
            AttemptGuard::begin(&ctx, start, attempt, ask, &|| env.random(), on_event)
                .map_err(|(refusal, id)| (refusal, Some(id)))
        } else {
            Err((Refusal::Deadline, None))
        };
        if let Err((
            Refusal::Pace {
                wait_ms,
                sleep_ms,
                why,
                booked,
            },
            id,
        )) = began
        {
            // The attempt starts once its origin lets it, and the origin counts as in use
            // meanwhile. A call booked behind others sleeps on untold until its turn.
            let told = match booked.zip(id) {
                Some((ticket, id)) if booking.is_none() => {
                    booking = Some(Booking::new(&ctx, id, ticket));
                    true
                }
                _ => booked.is_none(),
            };
            if waiting.is_none() {
                waiting = Some(WaitHold::take(&ctx));
            }
            if told {
                on_event(&Event::RateLimitWait {
                    origin: ctx.origin,
                    wait_ms,
                    reason: why,
                });
            }
            paced_ms += sleep_ms;
            wait = Some(sleep_ms);
            continue;
        }
        if began.is_ok()
            && let Some(booking) = booking.take()
        {
            booking.used();
        }
        // A booking not used here (refused, out of time) is given back.
        drop(booking.take());
        progress.attempt = attempt;
        // From here the attempt (or the end of the call) keeps the origin in use.
        drop(waiting.take());
        if began.is_err() {
            // The retry is not sent: its tokens go back before the call ends.
            drop(reserved.take());
        }
        let guard = match (began.map_err(|(refusal, _)| refusal), previous.take()) {
            (Ok(guard), _) => {
                progress.spent = reserved.take().map(Reservation::commit);
                guard
            }
            // (`Quiet` is a hedge's or the fast path's answer, never an attempt's.)
            (Err(Refusal::Deadline | Refusal::Quiet), None) => return CallResult::DeadlineExceeded,
            (Err(Refusal::Breaker(retry_after_ms)), None) => {
                return CallResult::ShortCircuited { retry_after_ms };
            }
            // (A wait the call may take is taken above.)
            (
                Err(
                    Refusal::RateLimit(retry_after_ms, reason)
                    | Refusal::Pace {
                        wait_ms: retry_after_ms,
                        why: reason,
                        ..
                    },
                ),
                None,
            ) => {
                return CallResult::RateLimited {
                    retry_after_ms,
                    reason,
                };
            }
            (Err(Refusal::Throttled(_)), None) => return CallResult::Throttled,
            (Err(blocked), Some(output)) => {
                let reason = match blocked {
                    Refusal::Breaker(_) => GiveUpReason::BreakerOpen,
                    Refusal::RateLimit(..) | Refusal::Pace { .. } => GiveUpReason::RateLimit,
                    Refusal::Throttled(_) => GiveUpReason::Throttled,
                    Refusal::Deadline | Refusal::Quiet => GiveUpReason::Deadline,
                };
                return give_up(reason, output, attempt - 1, on_event);
            }
        };
        let limit = AttemptLimit::at(policy, remaining);
        let first = Flight {
            attempt,
            guard,
            start,
            limit,
            slot: None,
        };
        // With hedging, more attempts may go beside this one; the one that answers for the
        // call comes back (the others were recorded and asked about, or aborted), already
        // asked about. `None`: the caller aborted while the hook was asked.
        let answered = match hedge {
            None => {
                let sent = transport.send(attempt, limit).await;
                let answered = settle(&ctx, &*transport, env, first, sent, false, on_event);
                if answered.asks {
                    let answer = ask(&ctx, &*transport, env, &answered).await;
                    answered.told(answer, ctx.safe)
                } else {
                    Some(answered)
                }
            }
            Some(hedge) => {
                hedged::send(
                    &ctx,
                    &*transport,
                    env,
                    hedge,
                    first,
                    &mut progress.attempt,
                    on_event,
                )
                .await
            }
        };
        let Some(Answered {
            outcome,
            output,
            end,
            retry_after_ms,
            verdict,
            asked,
            waiting: held,
            ..
        }) = answered
        else {
            return CallResult::Aborted;
        };
        waiting = held;
        let attempts = progress.attempt;
        // The decision is taken now: after the hook's wait, if there was one.
        let (now, retry_after_ms) = if asked {
            (env.now_ms(), retry_after_of(&outcome, env))
        } else {
            (end, retry_after_ms)
        };
        let facts = ctx.facts(verdict, &outcome, retry_after_ms, &progress, now);
        let next = decide(policy, &facts, &|| env.random());
        // Apply what was decided: the budget's tokens, then the events.
        let budget = policy.retry_budget.as_ref();
        let next = match (next, budget) {
            (Next::Success { refund: Some(n) }, Some(b)) => {
                ctx.registry
                    .borrow_mut()
                    .with(ctx.origin, |_, s| s.refund(n, b.capacity));
                Applied::Success
            }
            (Next::Success { .. }, _) => Applied::Success,
            (Next::Stop, _) => Applied::Stop,
            (Next::GiveUp(reason), _) => Applied::GiveUp(reason),
            (
                Next::Retry {
                    delay_ms,
                    reason,
                    retry_after,
                    cost,
                },
                budget,
            ) => match cost.zip(budget) {
                None => Applied::Retry(delay_ms, reason, retry_after, None),
                Some((cost, b)) => match Reservation::withdraw(&ctx, cost, b.capacity) {
                    Some(tokens) => Applied::Retry(delay_ms, reason, retry_after, Some(tokens)),
                    None => Applied::GiveUp(GiveUpReason::Budget),
                },
            },
        };
        match next {
            Applied::Stop => {
                return CallResult::Done { output, attempts };
            }
            Applied::Success => {
                on_event(&Event::Success { attempts });
                return CallResult::Done { output, attempts };
            }
            Applied::GiveUp(reason) => return give_up(reason, output, attempts, on_event),
            Applied::Retry(delay_ms, reason, retry_after, tokens) => {
                on_event(&Event::Retry {
                    attempt: attempts + 1,
                    delay_ms,
                    reason,
                    retry_after,
                });
                progress.last_delay_ms = delay_ms;
                // Its tokens are given back if the call is aborted during the wait.
                reserved = tokens;
                previous = Some(output);
                wait = Some(delay_ms);
            }
        }
    }
}

/// A decision applied: a retry holds the tokens it paid.
enum Applied<'a> {
    Stop,
    Success,
    GiveUp(GiveUpReason),
    Retry(f64, RetryReason, bool, Option<Reservation<'a>>),
}

/// What every step of a call shares.
struct Ctx<'a> {
    registry: &'a RefCell<Registry>,
    policy: &'a Policy,
    origin: &'a str,
    /// Whether repeating the request is safe.
    safe: bool,
    /// When the call started (monotonic ms).
    called_at: f64,
    /// When the whole call must be over (monotonic ms).
    deadline: f64,
}

impl Ctx<'_> {
    /// An attempt that ended at `end`, as the caller's decisions see it.
    fn ended<'o>(&self, attempt: u32, outcome: &'o AttemptOutcome, end: f64) -> Ended<'o> {
        Ended {
            attempt,
            outcome,
            elapsed_ms: end - self.called_at,
            remaining_ms: self.deadline - end,
        }
    }

    /// The facts a decision needs, read from the origin's entry (not marked used).
    fn facts<'o>(
        &self,
        verdict: Verdict,
        outcome: &'o AttemptOutcome,
        retry_after_ms: Option<f64>,
        progress: &Progress,
        now: f64,
    ) -> Facts<'o> {
        let registry = self.registry.borrow();
        let state = registry.peek(self.origin);
        let capacity = self.policy.retry_budget.as_ref().map_or(0, |b| b.capacity);
        Facts {
            verdict,
            outcome,
            retry_after_ms,
            attempt: progress.attempt,
            last_delay_ms: progress.last_delay_ms,
            spent: progress.spent,
            now,
            deadline: self.deadline,
            open_until: state.and_then(|s| s.breaker.open_until()),
            // A new entry's budget is full.
            tokens: state.map_or(capacity, |s| s.budget.tokens(capacity)),
        }
    }
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

/// The wait an attempt's `Retry-After` asks for, in ms, read now (an HTTP date against the
/// wall clock). The shell reads the header only from error statuses.
fn retry_after_of<E: Env>(outcome: &AttemptOutcome, env: &E) -> Option<f64> {
    match outcome {
        AttemptOutcome::Response {
            retry_after: Some(value),
            ..
        } => retry_after::parse(value, env.unix_ms()),
        _ => None,
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
enum NoSlot {
    Full,
    Aborted,
    Deadline,
}

impl<O> From<NoSlot> for CallResult<O> {
    fn from(refusal: NoSlot) -> Self {
        match refusal {
            NoSlot::Full => CallResult::BulkheadFull,
            NoSlot::Aborted => CallResult::Aborted,
            NoSlot::Deadline => CallResult::DeadlineExceeded,
        }
    }
}

/// A bulkhead slot (none when the bulkhead is off); waiting races the abort and the deadline.
async fn admit<E: Env>(
    ctx: &Ctx<'_>,
    env: &E,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> Result<Option<BulkheadPermit>, NoSlot> {
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
            return Err(NoSlot::Full);
        }
        Admission::Queued(wait) => wait,
    };
    let stop = race(env.abort_wait(), env.sleep(ctx.deadline - env.now_ms()));
    match race(wait, stop).await {
        Either::Left(permit) => Ok(Some(permit)),
        Either::Right(Either::Left(())) => Err(NoSlot::Aborted),
        Either::Right(Either::Right(())) => Err(NoSlot::Deadline),
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
