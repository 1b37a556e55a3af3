//! One call's loop, written down as its phases: it asks its origin for an attempt
//! ([`Phase::Begin`]), waits when the origin or a retry's backoff says so ([`Phase::Wait`]),
//! sends ([`Phase::Send`], hedged or not), and applies what [`decide`] answers. What the call
//! holds on its origin between attempts (the retry's budget tokens, a send its pacing booked,
//! the origin kept in use, the last answer) is one [`Hold`], given back when dropped: a call
//! that ends, or whose future is dropped, in any phase leaves nothing behind.

use super::attempt::{Answered, Flight, ask, settle};
use super::guards::{AttemptGuard, Booking, Reservation, WaitHold};
use super::{
    AttemptLimit, Call, CallResult, Ctx, Either, Env, Facts, MIN_ATTEMPT_MS, Next, Transport,
    admit, decide, give_up, race, retry_after_of,
};
use crate::classify::{AttemptOutcome, Verdict, classify};
use crate::events::{Event, GiveUpReason};
use crate::failover::{At, Route};
use crate::origin::{Ask, Refusal};
use crate::owner::Owner;
use crate::policy::Policy;
use crate::vocab::Method;

/// Where a call stands.
enum Phase<'a> {
    /// About to ask its origin for the next attempt, at `start` when the time is known (the
    /// first attempt's is the call's, unless a bulkhead queued it).
    Begin { start: Option<f64> },
    /// Waiting this many ms before asking again: a retry's backoff, or what the origin's
    /// rate limit asks for (one place to wait, so the call's future has one waiting state).
    Wait(f64),
    /// Waiting for the network to come back (the runtime said it was offline when the last
    /// attempt failed), at most until the deadline.
    Offline,
    /// An attempt is on the wire (with hedging, others may go beside it).
    Send(Flight<'a>),
}

/// What a call holds on its origin between attempts.
struct Hold<'a, O> {
    /// The last attempt's output, kept while waiting to retry it.
    previous: Option<O>,
    /// The budget tokens of the retry about to be sent; given back when dropped unsent.
    reserved: Option<Reservation<'a>>,
    /// The send its origin's pacing booked for the call, if any; given back when not made.
    booking: Option<Booking<'a>>,
    /// The origin marked in use while the call waits (until the next attempt counts).
    waiting: Option<WaitHold<'a>>,
    /// How long the call has waited for its origin's rate limit: `maxWaitMs` bounds the sum.
    paced_ms: f64,
}

/// Where the retry loop stands.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Progress {
    /// The current attempt's number, from 1.
    pub(super) attempt: u32,
    /// The last backoff wait (for decorrelated jitter; `baseDelayMs` before the first).
    last_delay_ms: f64,
    /// Budget tokens the retry that led to this attempt cost (`None` for the first attempt
    /// or without a budget).
    spent: Option<u32>,
    /// Where in its route the current attempt went (with failover; else 0).
    at: usize,
}

/// What asking the origin for an attempt came to.
enum Began<'a, O> {
    /// It goes.
    Go(Flight<'a>),
    /// The call ends.
    End(CallResult<O>),
    /// The origin asks the call to wait this many ms first (pacing's).
    Wait(f64),
}

/// A decision applied: a retry holds the tokens it paid.
enum Applied<'a> {
    Stop,
    Success,
    GiveUp(GiveUpReason),
    Offline,
    Retry(
        f64,
        crate::events::RetryReason,
        bool,
        Option<Reservation<'a>>,
    ),
}

/// Where a call stands once its loop has returned, for one more attempt of it
/// ([`run_course`]): when it started (its deadline runs from then), the attempts it made and
/// its last backoff.
#[derive(Clone, Copy, Debug, Default)]
pub struct Course {
    /// When the call started (monotonic ms).
    pub called_at: f64,
    /// Its attempts and last backoff.
    progress: Progress,
}

impl Course {
    /// Attempts made.
    pub fn attempts(&self) -> u32 {
        self.progress.attempt
    }
}

/// Runs one call: bulkhead, attempts, retries, bookkeeping and events.
pub async fn run<T: Transport, E: Env>(
    owner: &Owner,
    policy: &Policy,
    call: Call<'_>,
    transport: &mut T,
    env: &E,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> CallResult<T::Output> {
    let mut course = Course::default();
    run_course(
        owner,
        policy,
        call,
        transport,
        env,
        on_event,
        &mut course,
        None,
    )
    .await
}

/// [`run`], keeping where the call stands in `course`; with `broke`, one more attempt of a
/// call that ended (`course`, as it left it) after what its answer's body came to (a
/// network error or a timeout, with the output it leaves the caller: [`crate::resume::Broke`],
/// none without `resume`): decided as a retry of that failure ([`decide`]: attempts left,
/// the deadline, the budget, the breaker), then waited for, sent, recorded and decided as
/// the call's attempts are. Its bulkhead slot is not taken again. `broke`'s output is the
/// call's if no attempt goes (a `giveUp` event says why).
#[allow(clippy::too_many_arguments)]
pub async fn run_course<T: Transport, E: Env>(
    owner: &Owner,
    policy: &Policy,
    call: Call<'_>,
    transport: &mut T,
    env: &E,
    on_event: &mut dyn FnMut(&Event<'_>),
    course: &mut Course,
    broke: Option<crate::resume::Broke<T::Output>>,
) -> CallResult<T::Output> {
    if broke.is_none() {
        course.called_at = env.now_ms();
    }
    let called_at = course.called_at;
    let route = Route::new(call.origin, call.alternates);
    let ctx = Ctx {
        owner,
        policy,
        at: At::new(&route),
        route,
        safe: call.replayable && (call.has_key || Method(call.method).is_idempotent()),
        called_at,
        deadline: called_at + f64::from(policy.total_timeout_ms),
        kept: call.kept,
    };
    if env.aborted() {
        return CallResult::Aborted;
    }
    let progress = &mut course.progress;
    let (mut phase, _slot, mut hold) = match broke {
        None => {
            let slot = match admit(&ctx, env, on_event).await {
                Ok(slot) => slot,
                Err(refusal) => return refusal.into(),
            };
            *progress = Progress {
                attempt: 0,
                last_delay_ms: policy
                    .retry
                    .as_ref()
                    .map_or(0.0, |r| f64::from(r.base_delay_ms)),
                spent: None,
                at: 0,
            };
            // The first attempt starts when the call is made, unless a bulkhead (which may
            // queue the call) stands in between: one clock read fewer per call.
            let start = policy.bulkhead.is_none().then_some(called_at);
            // The first attempt goes to the first origin whose breaker is not open (with
            // failover).
            ctx.route_first(|| start.unwrap_or_else(|| env.now_ms()));
            (Phase::Begin { start }, slot, Hold::new())
        }
        Some(broke) => {
            let (outcome, output) = broke.parts();
            progress.spent = None;
            // The body broke at the origin its answer came from: a resume is a retry from there.
            ctx.at.set(&ctx.route, progress.at);
            let end = env.now_ms();
            let verdict = classify(&outcome, policy.retry.as_ref(), ctx.safe);
            let answered = Answered {
                attempt: progress.attempt,
                outcome,
                output,
                end,
                retry_after_ms: None,
                verdict,
                asks: false,
                asked: false,
                waiting: None,
                offline: matches!(verdict, Verdict::Retry(_)) && env.offline(),
            };
            let mut hold = Hold::new();
            match hold.decide(&ctx, env, progress, answered, on_event) {
                Ok(Some(delay_ms)) => (Phase::Wait(delay_ms), None, hold),
                Ok(None) => (Phase::Offline, None, hold),
                Err(result) => return result,
            }
        }
    };
    let hedge =
        (policy.hedge.as_ref()).filter(|_| crate::hedge::may_hedge(call.method, call.has_body));
    loop {
        phase = match phase {
            Phase::Wait(ms) => {
                if let Either::Left(()) = race(env.abort_wait(), env.sleep(ms)).await {
                    return CallResult::Aborted;
                }
                Phase::Begin { start: None }
            }
            Phase::Offline => {
                // Until the deadline: reached, the next ask gives up with the last answer.
                let back = race(env.online_wait(), env.sleep(ctx.deadline - env.now_ms()));
                if let Either::Left(()) = race(env.abort_wait(), back).await {
                    return CallResult::Aborted;
                }
                Phase::Begin { start: None }
            }
            Phase::Begin { start } => {
                if env.aborted() {
                    return CallResult::Aborted;
                }
                match hold.begin(&ctx, env, progress, start, on_event) {
                    Began::Go(flight) => Phase::Send(flight),
                    Began::Wait(ms) => Phase::Wait(ms),
                    Began::End(result) => return result,
                }
            }
            Phase::Send(first) => {
                // With hedging, more attempts may go beside this one; the one that answers
                // for the call comes back (the others were recorded and asked about, or
                // aborted), already asked about. `None`: the caller aborted while the hook
                // was asked.
                let answered = match hedge {
                    None => {
                        let (attempt, limit, to) = (first.attempt, first.limit, first.to);
                        let sent = transport.send(attempt, limit, to).await;
                        let answered = settle(&ctx, &*transport, env, first, sent, false, on_event);
                        if answered.asks {
                            let answer = ask(&ctx, &*transport, env, &answered).await;
                            answered.told(answer, ctx.safe)
                        } else {
                            Some(answered)
                        }
                    }
                    Some(hedge) => {
                        crate::hedge::send(
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
                let Some(answered) = answered else {
                    return CallResult::Aborted;
                };
                match hold.decide(&ctx, env, progress, answered, on_event) {
                    Ok(Some(delay_ms)) => Phase::Wait(delay_ms),
                    Ok(None) => Phase::Offline,
                    Err(result) => return result,
                }
            }
        };
    }
}

impl<'a, O> Hold<'a, O> {
    /// Nothing held yet.
    #[inline(always)]
    fn new() -> Self {
        Hold {
            previous: None,
            reserved: None,
            booking: None,
            waiting: None,
            paced_ms: 0.0,
        }
    }

    /// Asks the origin for the next attempt, at `start` (else now): it goes, the call waits
    /// for its origin (the origin held in use meanwhile, a booked send kept), or the call ends
    /// (refused before any attempt, or giving up with the last answer).
    #[inline(always)]
    fn begin<E: Env>(
        &mut self,
        ctx: &Ctx<'a>,
        env: &E,
        progress: &mut Progress,
        start: Option<f64>,
        on_event: &mut dyn FnMut(&Event<'_>),
    ) -> Began<'a, O> {
        let policy = ctx.policy;
        let attempt = progress.attempt + 1;
        let start = start.unwrap_or_else(|| env.now_ms());
        let remaining = ctx.deadline - start;
        let began = if remaining >= MIN_ATTEMPT_MS {
            // The longest the origin may still make this call wait before its attempt.
            let cap = policy.max_wait_ms();
            let ask = Ask::Attempt {
                retry: attempt > 1,
                booked: self.booking.as_ref().map(|b| b.ticket),
                max_wait: (f64::from(cap) - self.paced_ms).min(remaining - MIN_ATTEMPT_MS),
            };
            AttemptGuard::begin(ctx, start, attempt, ask, &|| env.random(), on_event)
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
            let mut told = booked.is_none();
            if self.booking.is_none() {
                self.booking = booked.zip(id).map(|(t, id)| Booking::new(ctx, id, t));
                told |= self.booking.is_some();
            }
            if self.waiting.is_none() {
                self.waiting = Some(WaitHold::take(ctx));
            }
            if told {
                on_event(&Event::RateLimitWait {
                    origin: ctx.origin(),
                    wait_ms,
                    reason: why,
                });
            }
            self.paced_ms += sleep_ms;
            return Began::Wait(sleep_ms);
        }
        if began.is_ok()
            && let Some(booking) = self.booking.take()
        {
            booking.used();
        }
        // A booking not used here (refused, out of time) is given back.
        drop(self.booking.take());
        progress.attempt = attempt;
        // From here the attempt (or the end of the call) keeps the origin in use.
        drop(self.waiting.take());
        if began.is_err() {
            // The retry is not sent: its tokens go back before the call ends.
            drop(self.reserved.take());
        }
        let refusal = match began {
            Ok(guard) => {
                progress.spent = self.reserved.take().map(Reservation::commit);
                progress.at = ctx.at.get();
                return Began::Go(Flight {
                    attempt,
                    to: ctx.to(),
                    guard,
                    start,
                    limit: AttemptLimit::at(policy, remaining),
                    slot: None,
                });
            }
            Err((refusal, _)) => refusal,
        };
        debug_assert!(
            refusal != Refusal::Quiet,
            "an attempt is never refused quietly"
        );
        Began::End(match (refusal, self.previous.take()) {
            // (`Quiet` is a hedge's or the fast path's answer, never an attempt's.)
            (Refusal::Deadline | Refusal::Quiet, None) => CallResult::DeadlineExceeded,
            (Refusal::Breaker(retry_after_ms), None) => {
                CallResult::ShortCircuited { retry_after_ms }
            }
            // (A wait the call may take is taken above.)
            (
                Refusal::RateLimit(retry_after_ms, reason)
                | Refusal::Pace {
                    wait_ms: retry_after_ms,
                    why: reason,
                    ..
                },
                None,
            ) => CallResult::RateLimited {
                retry_after_ms,
                reason,
            },
            (Refusal::Throttled(p), None) => CallResult::Throttled(p),
            (refusal, Some(output)) => {
                let reason = match refusal {
                    Refusal::Breaker(_) => GiveUpReason::BreakerOpen,
                    Refusal::RateLimit(..) | Refusal::Pace { .. } => GiveUpReason::RateLimit,
                    Refusal::Throttled(_) => GiveUpReason::Throttled,
                    Refusal::Deadline | Refusal::Quiet => GiveUpReason::Deadline,
                };
                give_up(reason, output, attempt - 1, on_event)
            }
        })
    }

    /// Applies what [`decide`] answers about `answered`: the budget's tokens, then the
    /// events. `Ok`: the call retries after that many ms, holding the tokens and the answer
    /// (`None`: once the network is back); `Err`: it ends so.
    #[inline(always)]
    fn decide<E: Env>(
        &mut self,
        ctx: &Ctx<'a>,
        env: &E,
        progress: &mut Progress,
        answered: Answered<'a, O>,
        on_event: &mut dyn FnMut(&Event<'_>),
    ) -> Result<Option<f64>, CallResult<O>> {
        let policy = ctx.policy;
        let Answered {
            outcome,
            output,
            end,
            retry_after_ms,
            verdict,
            asked,
            waiting,
            offline,
            ..
        } = answered;
        self.waiting = waiting;
        let attempts = progress.attempt;
        // The decision is taken now: after the hook's wait, if there was one.
        let (now, retry_after_ms) = if asked {
            (env.now_ms(), retry_after_of(&outcome, env))
        } else {
            (end, retry_after_ms)
        };
        // Where a retry would go (with failover, the next origin whose breaker is not open):
        // the decision reads that origin's breaker and budget.
        let next_at = ctx.route_after(now);
        // A call an outbox keeps is not held for the network: the outbox sends it then.
        let facts = Facts {
            offline,
            kept: ctx.kept,
            ..facts(
                ctx,
                next_at,
                verdict,
                &outcome,
                retry_after_ms,
                progress,
                now,
            )
        };
        let next = decide(policy, &facts, &|| env.random());
        if let Next::Retry { .. } = next {
            // The retry goes there: that origin's budget pays for it, and it is asked next.
            ctx.at.set(&ctx.route, next_at);
        }
        let budget = policy.retry_budget.as_ref();
        let next = match (next, budget) {
            (Next::Success { refund: Some(n) }, Some(b)) => {
                ctx.owner.with(ctx.origin(), |_, s| s.refund(n, b.capacity));
                Applied::Success
            }
            (Next::Success { .. }, _) => Applied::Success,
            (Next::Stop, _) => Applied::Stop,
            (Next::Offline { .. }, _) => Applied::Offline,
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
                Some((cost, b)) => match Reservation::withdraw(ctx, cost, b.capacity) {
                    Some(tokens) => Applied::Retry(delay_ms, reason, retry_after, Some(tokens)),
                    None => Applied::GiveUp(GiveUpReason::Budget),
                },
            },
        };
        match next {
            Applied::Stop => Err(CallResult::Done { output, attempts }),
            Applied::Success => {
                on_event(&Event::Success { attempts });
                Err(CallResult::Done { output, attempts })
            }
            Applied::GiveUp(reason) => Err(give_up(reason, output, attempts, on_event)),
            Applied::Offline => {
                on_event(&Event::Offline {
                    attempt: attempts + 1,
                });
                self.previous = Some(output);
                Ok(None)
            }
            Applied::Retry(delay_ms, reason, retry_after, tokens) => {
                on_event(&Event::Retry {
                    attempt: attempts + 1,
                    origin: ctx.origin(),
                    delay_ms,
                    reason,
                    retry_after,
                });
                progress.last_delay_ms = delay_ms;
                // Its tokens are given back if the call is aborted during the wait.
                self.reserved = tokens;
                self.previous = Some(output);
                Ok(Some(delay_ms))
            }
        }
    }
}

/// The facts a decision needs, read from the entry of the origin at `at` in the route, where a
/// retry would go (not marked used).
#[allow(clippy::too_many_arguments)]
fn facts<'o>(
    ctx: &Ctx<'_>,
    at: usize,
    verdict: Verdict,
    outcome: &'o AttemptOutcome,
    retry_after_ms: Option<f64>,
    progress: &Progress,
    now: f64,
) -> Facts<'o> {
    let registry = ctx.owner.lend();
    let state = registry.peek(ctx.route.origin(at));
    let capacity = ctx.policy.retry_budget.as_ref().map_or(0, |b| b.capacity);
    Facts {
        verdict,
        outcome,
        retry_after_ms,
        attempt: progress.attempt,
        last_delay_ms: progress.last_delay_ms,
        spent: progress.spent,
        now,
        deadline: ctx.deadline,
        open_until: state.and_then(|s| s.breaker.open_until()),
        // A new entry's budget is full.
        tokens: state.map_or(capacity, |s| s.budget.tokens(capacity)),
        offline: false,
        kept: false,
    }
}
