//! One attempt from the moment it is on the wire: its [`Flight`], its end recorded against
//! the origin ([`settle`]: `isFailure`, the breaker, what its answer says of the origin's
//! limits, `attemptEnd`), and the caller's `shouldRetry` asked about it ([`ask`]). The loop
//! ([`super::run`]) and a hedged race ([`crate::hedge`]'s `race.rs`) end every attempt this
//! way, so each ended attempt is recorded, judged and asked about once, with its own number,
//! outcome and time, whichever of them it turns out to be. A call strategy outside the engine
//! (the hedged race) reaches these through the crate.

use std::future::Future;

use super::guards::{AttemptGuard, WaitHold};
use super::{
    AttemptLimit, BreakerAnswer, Ctx, Either, Env, HookAnswer, Transport, race, report,
    retry_after_of,
};
use crate::classify::{AttemptOutcome, Judgement, Verdict, classify, judge};
use crate::events::{Event, GiveUpReason, RetryReason};
use crate::hedge::Slot;
use crate::origin::{Ask, Finished};
use crate::policy::Policy;

/// One attempt of the call: its number, its hold on the origin, when it started, its limit.
pub(crate) struct Flight<'a> {
    pub(crate) attempt: u32,
    /// The alternate origin it goes to (`None`: the call's own URL).
    pub(crate) to: Option<crate::failover::Alternate<'a>>,
    pub(super) guard: AttemptGuard<'a>,
    pub(crate) start: f64,
    pub(crate) limit: AttemptLimit,
    /// A hedge's own bulkhead slot, held while it is in flight (the call holds its own); a
    /// call may take it back.
    pub(crate) slot: Option<Slot>,
}

impl<'a> Flight<'a> {
    /// Hedge number `attempt`, starting `now` with its own bulkhead `slot` if it holds one,
    /// if the origin's admission list lets it go at once (a hedge never waits; one refused
    /// is simply not sent: no event, no count).
    #[allow(
        dead_code,
        reason = "a hedged race's (crate::hedge), which the lean build lacks"
    )]
    #[inline(always)]
    pub(crate) fn hedge<E: Env>(
        ctx: &Ctx<'a>,
        env: &E,
        attempt: u32,
        now: f64,
        slot: Option<Slot>,
        on_event: &mut dyn FnMut(&Event<'_>),
    ) -> Option<Self> {
        let guard =
            AttemptGuard::begin(ctx, now, attempt, Ask::Hedge, &|| env.random(), on_event).ok()?;
        Some(Flight {
            attempt,
            to: ctx.to(),
            guard,
            start: now,
            limit: AttemptLimit::at(ctx.policy, ctx.deadline - now),
            slot,
        })
    }
}

/// An attempt that has ended and been recorded against its origin, with what the built-in
/// rule says of it (and, once asked, the caller's `shouldRetry`).
pub(crate) struct Answered<'a, O> {
    pub(crate) attempt: u32,
    pub(super) outcome: AttemptOutcome,
    pub(super) output: O,
    /// When it ended (monotonic ms).
    pub(super) end: f64,
    /// Its `Retry-After`, read when it ended.
    pub(super) retry_after_ms: Option<f64>,
    /// What it means for retrying: the built-in rule's, then the caller's.
    pub(super) verdict: Verdict,
    /// Whether the caller's `shouldRetry` is to be asked about it.
    pub(crate) asks: bool,
    /// Whether it was (its answer came after a wait: the decision reads the clock again).
    pub(super) asked: bool,
    /// The call's hold on the origin while it may go on to retry.
    pub(super) waiting: Option<WaitHold<'a>>,
    /// Whether it failed to reach its origin while the runtime was offline: it counts for
    /// nothing, and a retry waits for the network instead of a backoff.
    pub(super) offline: bool,
}

impl<O> Answered<'_, O> {
    /// With the caller's `answer` (`None`: the caller aborted while it was asked, and the
    /// call ends). A retry only where repeating is safe; a hook that threw ends the call
    /// with what it threw.
    pub(crate) fn told(self, answer: Option<HookAnswer<O>>, safe: bool) -> Option<Self> {
        let (verdict, failed) = overrule(self.verdict, answer?, safe);
        Some(Answered {
            verdict,
            output: failed.unwrap_or(self.output),
            asked: true,
            ..self
        })
    }
}

/// Ends `flight` with what its send returned, read at the current time: judged for the
/// breaker (the caller's `isFailure`, else the built-in rule), recorded against the origin
/// (with its latency when `hedged`), its `attemptEnd` and any breaker transition told. The
/// call keeps the origin in use if the attempt may be retried.
pub(crate) fn settle<'a, T: Transport, E: Env>(
    ctx: &Ctx<'a>,
    transport: &T,
    env: &E,
    flight: Flight<'a>,
    (outcome, output): (AttemptOutcome, T::Output),
    hedged: bool,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> Answered<'a, T::Output> {
    let end = env.now_ms();
    let aborted = outcome.is_local() || env.aborted();
    let ended = ctx.ended(flight.attempt, &outcome, end);
    // Offline is not an outage: a failure to reach the origin then says nothing of it.
    let offline = !aborted
        && matches!(
            outcome,
            AttemptOutcome::NetworkError | AttemptOutcome::Timeout
        )
        && env.offline();
    let judgement = if offline {
        Judgement::Unjudged
    } else {
        judgement(ctx, transport, &ended, &output, &flight.limit, env)
    };
    let verdict = if aborted {
        Verdict::Aborted
    } else {
        classify(&outcome, ctx.policy.retry.as_ref(), ctx.safe)
    };
    let asks = !aborted && transport.asks_should_retry();
    // A call that may retry keeps its origin in use from the end of this attempt (handed
    // over in the same registry access), through the events and the wait.
    let may_retry = matches!(verdict, Verdict::Retry(_)) || asks;
    // An HTTP date is read against the wall clock when the decision is taken (again after
    // a hook).
    let retry_after_ms = retry_after_of(&outcome, env);
    let attempt = flight.attempt;
    let ending = (judgement, end, retry_after_ms, hedged);
    let waiting = flight.end(ctx, &outcome, ending, (may_retry, offline), on_event);
    Answered {
        attempt,
        outcome,
        output,
        end,
        retry_after_ms,
        verdict,
        asks,
        asked: false,
        waiting,
        offline,
    }
}

/// Asks the caller's `shouldRetry` about `answered`; resolves to its answer, or to the
/// built-in answer (`Default`) when none came before the call's deadline (which, reached,
/// then refuses any retry), or to `None` when the caller aborted meanwhile. It borrows only
/// the transport and the environment, so a hedged race goes on while it is asked.
pub(crate) fn ask<'t, T: Transport, E: Env>(
    ctx: &Ctx<'_>,
    transport: &'t T,
    env: &'t E,
    answered: &Answered<'_, T::Output>,
) -> impl Future<Output = Option<HookAnswer<T::Output>>> + use<'t, T, E> {
    let deadline = env.sleep(ctx.deadline - answered.end);
    let ended = ctx.ended(answered.attempt, &answered.outcome, answered.end);
    let answer = transport.should_retry(&ended, &answered.output);
    async move {
        match race(answer, race(env.abort_wait(), deadline)).await {
            Either::Left(answer) => Some(answer),
            Either::Right(Either::Left(())) => None,
            Either::Right(Either::Right(())) => Some(HookAnswer::Default),
        }
    }
}

impl<'a> Flight<'a> {
    /// The origin it went to: its registry entry's name.
    #[allow(
        dead_code,
        reason = "a hedged race's (crate::hedge), which the lean build lacks"
    )]
    pub(crate) fn origin(&self) -> &'a str {
        self.guard.origin()
    }

    /// Ends the attempt with `outcome`: `(judgement, end, retry_after_ms, learn_latency)`
    /// recorded against its origin (its latency too when the origin is hedged), then its
    /// `attemptEnd` and any breaker transition reported. With `hold`, the call keeps the
    /// origin in use for a retry: the hold is returned.
    fn end(
        self,
        ctx: &Ctx<'a>,
        outcome: &AttemptOutcome,
        (judgement, end, retry_after_ms, learn_latency): (Judgement, f64, Option<f64>, bool),
        (hold, offline): (bool, bool),
        on_event: &mut dyn FnMut(&Event<'_>),
    ) -> Option<WaitHold<'a>> {
        let mut ended = learn(outcome, end, retry_after_ms, ctx.policy);
        if learn_latency {
            ended.latency_ms = outcome.status().map(|_| end - self.start);
        }
        let ended = Finished {
            judgement,
            timed_out: *outcome == AttemptOutcome::Timeout,
            hold,
            offline,
            duration_ms: end - self.start,
            ..ended
        };
        let origin = self.guard.origin();
        let (transition, hold) = self.guard.finish(ended, end);
        on_event(&Event::AttemptEnd {
            attempt: self.attempt,
            origin,
            outcome: outcome.kind(),
            status: outcome.status(),
            duration_ms: end - self.start,
        });
        report(transition, origin, on_event);
        // A hedge's own slot goes back once its end is told.
        drop(self.slot);
        hold
    }
}

/// The built-in `verdict` after the caller's `answer`: a retry only where repeating is safe
/// and retries are on; a stop turns a retry into giving up. With a failed hook, its output.
fn overrule<O>(verdict: Verdict, answer: HookAnswer<O>, safe: bool) -> (Verdict, Option<O>) {
    let verdict = match (answer, verdict) {
        (HookAnswer::Default, v) | (HookAnswer::Retry, v @ Verdict::Retry(_)) => v,
        (HookAnswer::Retry, _) if !safe => Verdict::GiveUp(GiveUpReason::UnsafeMethod),
        (HookAnswer::Retry, _) => Verdict::Retry(RetryReason::ShouldRetry),
        (HookAnswer::Stop, Verdict::Retry(_)) => Verdict::GiveUp(GiveUpReason::ShouldRetry),
        (HookAnswer::Stop, v) => v,
        (HookAnswer::Fail(output), _) => {
            return (Verdict::GiveUp(GiveUpReason::ShouldRetry), Some(output));
        }
    };
    (verdict, None)
}

/// How an ended attempt counts for the breaker: as the caller's `isFailure` says, else by
/// the built-in rule; nothing when the caller aborted or the call's own deadline cut it.
fn judgement<T: Transport, E: Env>(
    ctx: &Ctx<'_>,
    transport: &T,
    ended: &super::Ended<'_>,
    output: &T::Output,
    limit: &AttemptLimit,
    env: &E,
) -> Judgement {
    let outcome = ended.outcome;
    let cut_by_deadline = *outcome == AttemptOutcome::Timeout && !limit.timeout_counts(ctx.policy);
    if outcome.is_local() || env.aborted() || cut_by_deadline {
        return Judgement::Unjudged;
    }
    match transport.is_failure(ended, output) {
        BreakerAnswer::Failure => Judgement::Failure,
        BreakerAnswer::Success => Judgement::Success,
        BreakerAnswer::Default => judge(outcome),
    }
}

/// What an attempt's answer says of its origin's limits: its rate-limit headers, and the
/// hold its `Retry-After` (`retry_after_ms`) puts on the whole origin after a 429 or 503
/// (from `end`, monotonic). The hold lasts at most `retry.maxRetryAfterMs` (its default
/// without retries), the longest `Retry-After` the client honours: a proxy's "come back in
/// an hour" then costs the origin one request per that span, not an hour's lockout. (A
/// quota's reset is capped the same way where it is learnt, in [`crate::pacing`].)
fn learn<'o>(
    outcome: &'o AttemptOutcome,
    end: f64,
    retry_after_ms: Option<f64>,
    policy: &Policy,
) -> Finished<'o> {
    let cap = policy.max_retry_after_ms();
    match outcome {
        AttemptOutcome::Response { status, quota, .. } => Finished {
            answered: true,
            quota: quota.as_ref(),
            hold_until: retry_after_ms
                .filter(|_| matches!(status, 429 | 503))
                .map(|ms| end + ms.min(f64::from(cap))),
            ..Finished::default()
        },
        _ => Finished::default(),
    }
}
