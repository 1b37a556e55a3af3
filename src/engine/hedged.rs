//! A hedged send (policy `hedge`, reads only): the attempt goes out; if it has not
//! answered after the hedge delay, another goes beside it (up to `maxHedges`), each paid
//! from the origin's retry budget and counted as an attempt. The first definite answer
//! wins, and every attempt still in flight is dropped, which aborts it. A transient failure
//! (a network error, a timeout, a status worth retrying) does not end the send while
//! another attempt is still in flight: it is recorded against the origin as any attempt
//! is, and the others go on. An aborted loser counts neither as a failure nor as a success.
//! With the bulkhead on, a hedge holds a slot of its own while in flight, and none goes when
//! no slot is free.

use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::task::Poll;

use super::guards::{AttemptGuard, WaitHold};
use super::{
    AttemptLimit, Ctx, Env, MIN_ATTEMPT_MS, Transport, judgement, learn, report, retry_after_of,
};
use crate::breaker::BreakerState;
use crate::bulkhead::BulkheadPermit;
use crate::classify::{AttemptOutcome, Judgement, Verdict, classify};
use crate::events::{Event, OutcomeKind};
use crate::hedge;
use crate::policy::{HedgePolicy, RetryPolicy};

/// One attempt of the call: its number, its hold on the origin, when it started, its limit.
pub(super) struct Flight<'a> {
    pub(super) attempt: u32,
    pub(super) guard: AttemptGuard<'a>,
    pub(super) start: f64,
    pub(super) limit: AttemptLimit,
    /// A hedge's own bulkhead slot, held while it is in flight (the call holds its own).
    pub(super) _slot: Option<BulkheadPermit>,
}

impl<'a> Flight<'a> {
    /// Ends the attempt with `outcome`: `(judgement, end, retry_after_ms, learn_latency)`
    /// recorded against its origin (its latency too when the origin is hedged), then its
    /// `attemptEnd` and any breaker transition reported. With `hold`, the call keeps the
    /// origin in use for a retry: the hold is returned.
    pub(super) fn end(
        self,
        ctx: &Ctx<'a>,
        outcome: &AttemptOutcome,
        (judgement, end, retry_after_ms, learn_latency): (Judgement, f64, Option<f64>, bool),
        hold: bool,
        on_event: &mut dyn FnMut(&Event<'_>),
    ) -> Option<WaitHold<'a>> {
        let mut learned = learn(outcome, end, retry_after_ms, ctx.policy);
        if learn_latency {
            learned.latency_ms = outcome.status().map(|_| end - self.start);
        }
        let timed_out = *outcome == AttemptOutcome::Timeout;
        let (transition, hold) = self.guard.finish(judgement, timed_out, end, hold, learned);
        on_event(&Event::AttemptEnd {
            attempt: self.attempt,
            outcome: outcome.kind(),
            status: outcome.status(),
            duration_ms: end - self.start,
        });
        report(transition, ctx.origin, on_event);
        hold
    }
}

/// An attempt on the wire.
struct Sending<'a, F> {
    flight: Flight<'a>,
    send: Pin<Box<F>>,
}

/// What the hedged send waited for.
enum Step<O> {
    /// Attempt `i` of those in flight answered.
    Answered(usize, (AttemptOutcome, O)),
    /// The hedge delay passed.
    Hedge,
}

/// Sends `first` and hedges it; returns the attempt that answers for the call and its
/// answer, with its guard still to finish. `attempts` counts the attempts made.
pub(super) async fn send<'a, T: Transport, E: Env>(
    ctx: &Ctx<'a>,
    transport: &T,
    env: &E,
    policy: &HedgePolicy,
    first: Flight<'a>,
    attempts: &mut u32,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> (Flight<'a>, (AttemptOutcome, T::Output)) {
    let first_attempt = first.attempt;
    let delay = ctx
        .registry
        .borrow_mut()
        .with(ctx.origin, |_, s| hedge::delay_ms(policy, &s.latency));
    let mut hedges_left = policy.max_hedges;
    let mut timer = Box::pin(env.sleep(delay));
    let mut flights = vec![Sending {
        send: Box::pin(transport.send(first.attempt, first.limit)),
        flight: first,
    }];
    // Whether an answer is worth another attempt: as retries judge it (by default when
    // retries are off), for a read.
    let default_retry = RetryPolicy::default();
    let retry = ctx.policy.retry.as_ref().unwrap_or(&default_retry);
    loop {
        let step = poll_fn(|cx| {
            for (i, f) in flights.iter_mut().enumerate() {
                if let Poll::Ready(answer) = f.send.as_mut().poll(cx) {
                    return Poll::Ready(Step::Answered(i, answer));
                }
            }
            if hedges_left > 0 && timer.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Step::Hedge);
            }
            Poll::Pending
        })
        .await;
        match step {
            Step::Hedge => {
                hedges_left -= 1;
                timer = Box::pin(env.sleep(delay));
                match begin(ctx, env, *attempts + 1, delay, on_event) {
                    Some(flight) => {
                        *attempts = flight.attempt;
                        flights.push(Sending {
                            send: Box::pin(transport.send(flight.attempt, flight.limit)),
                            flight,
                        });
                    }
                    None => hedges_left = 0,
                }
            }
            Step::Answered(i, (outcome, output)) => {
                let Sending { flight, send } = flights.swap_remove(i);
                drop(send);
                let transient = matches!(classify(&outcome, Some(retry), true), Verdict::Retry(_));
                if !transient || flights.is_empty() {
                    // The call's answer: the others are aborted (dropping a send aborts it;
                    // its guard, dropped unfinished, records nothing against the origin).
                    let now = env.now_ms();
                    for loser in flights.drain(..) {
                        drop(loser.send);
                        on_event(&Event::AttemptEnd {
                            attempt: loser.flight.attempt,
                            outcome: OutcomeKind::Aborted,
                            status: None,
                            duration_ms: now - loser.flight.start,
                        });
                    }
                    if flight.attempt != first_attempt && !transient {
                        ctx.registry
                            .borrow_mut()
                            .with(ctx.origin, |_, s| s.stats.hedge_wins += 1);
                    }
                    return (flight, (outcome, output));
                }
                // A transient failure while others are still in flight: recorded as any
                // attempt is (its Retry-After holds the origin); the call waits for the others.
                let end = env.now_ms();
                let ended = ctx.ended(flight.attempt, &outcome, end);
                let judgement = judgement(ctx, transport, &ended, &output, &flight.limit, env);
                let ending = (judgement, end, retry_after_of(&outcome, env), true);
                let _ = flight.end(ctx, &outcome, ending, false, on_event);
            }
        }
    }
}

/// Starts hedge number `attempt` after `delay` ms, if the call may: attempts left, time
/// left, half the origin's retry budget (it pays a retry's cost), and the origin's leave
/// (breaker, pacing, throttle; a hedge never waits for its origin).
fn begin<'a, E: Env>(
    ctx: &Ctx<'a>,
    env: &E,
    attempt: u32,
    delay: f64,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> Option<Flight<'a>> {
    let policy = ctx.policy;
    let max_attempts = policy.retry.as_ref().map_or(1, |r| r.max_attempts);
    let now = env.now_ms();
    let remaining = ctx.deadline - now;
    if attempt > max_attempts || remaining < MIN_ATTEMPT_MS || env.aborted() {
        return None;
    }
    // Checked first, so that a hedge the origin would refuse is simply not sent (no
    // short-circuit, rate-limit or throttle event or count for it): a closed breaker (a
    // probe is never hedged), no wait for the origin, no throttling, half the budget.
    let budget = policy.retry_budget.as_ref();
    let clear = ctx.registry.borrow_mut().with(ctx.origin, |_, s| {
        s.breaker.state(now) == BreakerState::Closed
            && s.pacer.wait(now).is_none()
            && (policy.throttle.as_ref())
                .is_none_or(|t| s.throttle.reject_probability(now, t) <= 0.0)
            && budget.is_none_or(|b| {
                let tokens = s.budget.tokens(b.capacity);
                hedge::budget_allows(tokens, b.capacity) && tokens >= b.retry_cost
            })
    });
    if !clear {
        return None;
    }
    // A hedge takes a bulkhead slot of its own, if one is free (it never queues).
    let slot = match &policy.bulkhead {
        Some(b) => {
            let bulkhead = ctx
                .registry
                .borrow_mut()
                .with(ctx.origin, |_, s| s.bulkhead.clone());
            Some(bulkhead.try_acquire(b)?)
        }
        None => None,
    };
    let guard =
        AttemptGuard::begin(ctx, now, attempt, (None, 0.0), &|| env.random(), on_event).ok()?;
    ctx.registry.borrow_mut().with(ctx.origin, |_, s| {
        if let Some(b) = budget {
            // Cannot fail: checked above, and nothing ran in between.
            let _ = s.budget.try_withdraw(b.retry_cost, b.capacity);
        }
        // A hedge is an attempt (counted by begin), not a retry.
        s.stats.retries = s.stats.retries.saturating_sub(1);
        s.stats.hedges += 1;
    });
    on_event(&Event::Hedge {
        attempt,
        delay_ms: delay,
    });
    Some(Flight {
        attempt,
        guard,
        start: now,
        limit: AttemptLimit::at(policy, remaining),
        _slot: slot,
    })
}
