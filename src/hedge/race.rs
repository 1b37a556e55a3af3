//! A hedged send (policy `hedge`, reads only): the attempt goes out; if it has not
//! answered after the hedge delay, another goes beside it (up to `maxHedges`), each paid
//! from the origin's retry budget and counted as an attempt. The first definite answer
//! wins (one not worth another attempt), and every attempt still in flight is dropped,
//! which aborts it. An answer worth another attempt (a network error, a timeout, a status
//! worth retrying, or any answer the caller's `shouldRetry` says to retry) does not end the
//! send while another attempt is still in flight: it is recorded against the origin as any
//! attempt is, and the others go on. Every attempt that ends is recorded and asked about
//! ([`crate::engine`]'s `attempt.rs`), the others going on meanwhile; an aborted loser is neither asked
//! about nor counted as a failure or a success. With the bulkhead on, a hedge holds a slot
//! of its own while in flight, and none goes when no slot is free or a call waits for one;
//! a call that finds every slot taken takes the youngest hedge's, and that hedge is aborted
//! as a loser is. If it was the last attempt in flight, the last answer worth another
//! attempt is the call's (as when every attempt fails), and the call goes on to retry in its
//! own slot.

use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::task::{Context, Poll};

use super::section::HedgePolicy;
use crate::classify::{AttemptOutcome, Verdict, classify};
use crate::engine::attempt::{Answered, Flight, ask, settle};
use crate::engine::{Ctx, Env, HookAnswer, MIN_ATTEMPT_MS, Transport};
use crate::events::{Event, OutcomeKind};
use crate::policy::RetryPolicy;

/// A hedge sent ([`Event::Hedge`]): attempt `attempt` goes beside those still in flight,
/// after `delay_ms` without an answer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sent {
    /// Number of the hedge's attempt.
    pub attempt: u32,
    /// The hedge delay that passed, in ms.
    pub delay_ms: f64,
}

impl Sent {
    /// Its attempt and the delay that passed, in ms.
    pub fn parts(&self) -> (u32, f64) {
        (self.attempt, self.delay_ms)
    }
}

/// An attempt on the wire.
struct Sending<'a, F> {
    flight: Flight<'a>,
    send: Pin<Box<F>>,
}

/// An attempt that ended, while the caller's `shouldRetry` is asked about it.
struct Asking<'a, O, H> {
    answered: Answered<'a, O>,
    /// Whether the built-in rule finds its answer worth another attempt.
    transient: bool,
    answer: Pin<Box<H>>,
}

/// What the hedged send waited for.
enum Step<O, A> {
    /// Attempt `i` of those on the wire answered.
    Answered(usize, (AttemptOutcome, O)),
    /// The caller answered about attempt `i` of those asked about.
    Told(usize, A),
    /// The hedge delay passed.
    Hedge,
    /// A call took the bulkhead slot of hedge `i` of those on the wire.
    Taken(usize),
}

/// Sends `first` and hedges it; returns the attempt that answers for the call, recorded and
/// asked about (`None`: the caller aborted while the hook was asked). `attempts` counts the
/// attempts made.
pub(crate) async fn send<'a, T: Transport, E: Env>(
    ctx: &Ctx<'a>,
    transport: &T,
    env: &E,
    policy: &HedgePolicy,
    first: Flight<'a>,
    attempts: &mut u32,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> Option<Answered<'a, T::Output>> {
    let first_attempt = first.attempt;
    let delay = ctx.owner.with(ctx.origin(), |_, s| s.hedge_delay(policy));
    let mut hedges_left = policy.max_hedges;
    let mut timer = Box::pin(env.sleep(delay));
    let mut sending = vec![Sending {
        send: Box::pin(transport.send(first.attempt, first.limit, first.to)),
        flight: first,
    }];
    let mut asking = Vec::new();
    // The last answer worth another attempt that came while others were in flight.
    let mut last = None;
    // Whether an answer is worth another attempt: as retries judge it (by default when
    // retries are off), for a read.
    let default_retry = RetryPolicy::default();
    let retry = ctx.policy.retry.as_ref().unwrap_or(&default_retry);
    loop {
        let step = poll_fn(|cx| {
            for (i, s) in sending.iter_mut().enumerate() {
                if let Poll::Ready(answer) = s.send.as_mut().poll(cx) {
                    return Poll::Ready(Step::Answered(i, answer));
                }
                if let Some(slot) = &s.flight.slot
                    && slot.poll_taken(cx).is_ready()
                {
                    return Poll::Ready(Step::Taken(i));
                }
            }
            if let Some((i, answer)) = told(&mut asking, cx) {
                return Poll::Ready(Step::Told(i, answer));
            }
            // A hedge goes beside an attempt still on the wire.
            if hedges_left > 0 && !sending.is_empty() && timer.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Step::Hedge);
            }
            Poll::Pending
        })
        .await;
        // An attempt whose answer is known, and whether it is worth another attempt.
        let (answered, worth) = match step {
            Step::Hedge => {
                hedges_left -= 1;
                timer = Box::pin(env.sleep(delay));
                match begin(ctx, env, *attempts + 1, delay, on_event) {
                    Some(flight) => {
                        *attempts = flight.attempt;
                        sending.push(Sending {
                            send: Box::pin(transport.send(flight.attempt, flight.limit, flight.to)),
                            flight,
                        });
                    }
                    None => hedges_left = 0,
                }
                continue;
            }
            Step::Taken(i) => {
                abort(vec![sending.swap_remove(i)], env, on_event);
                if sending.is_empty() && asking.is_empty() {
                    // Only hedges hold slots of their own, so the first attempt has ended,
                    // worth another attempt (else the race would be over): `last` holds it
                    // or a later such answer.
                    debug_assert!(last.is_some(), "a race with no answer left");
                    return last;
                }
                continue;
            }
            Step::Answered(i, sent) => {
                let Sending { flight, send } = sending.swap_remove(i);
                drop(send);
                let transient = matches!(classify(&sent.0, Some(retry), true), Verdict::Retry(_));
                let answered = settle(ctx, transport, env, flight, sent, true, on_event);
                if answered.asks {
                    // Asked while the others go on.
                    let answer = Box::pin(ask(ctx, transport, env, &answered));
                    asking.push(Asking {
                        answered,
                        transient,
                        answer,
                    });
                    continue;
                }
                (answered, transient)
            }
            Step::Told(i, answer) => {
                let Asking {
                    answered,
                    transient,
                    answer: _,
                } = asking.swap_remove(i);
                // Worth another attempt as the caller says, or by the built-in rule.
                let worth = match &answer {
                    Some(HookAnswer::Retry) => ctx.safe,
                    Some(HookAnswer::Default) => transient,
                    Some(HookAnswer::Stop | HookAnswer::Fail(_)) | None => false,
                };
                match answered.told(answer, ctx.safe) {
                    Some(answered) => (answered, worth),
                    // The caller aborted: so is every attempt still on the wire.
                    None => {
                        abort(sending, env, on_event);
                        return None;
                    }
                }
            }
        };
        if worth && !(sending.is_empty() && asking.is_empty()) {
            // Not the call's answer while others are in flight: it was recorded (its
            // Retry-After holds the origin); the call waits for the others.
            last = Some(answered);
            continue;
        }
        // The call's answer: the attempts still on the wire are aborted (dropping a send
        // aborts it; its guard, dropped unfinished, records nothing against the origin),
        // and those still asked about are not waited for.
        abort(sending, env, on_event);
        drop(asking);
        if answered.attempt != first_attempt && !worth {
            ctx.owner.with(ctx.origin(), |_, s| s.hedge_won());
        }
        return Some(answered);
    }
}

/// The first answer of the caller's that came, with the index of what it is about.
fn told<O, H: Future>(
    asking: &mut [Asking<'_, O, H>],
    cx: &mut Context<'_>,
) -> Option<(usize, H::Output)> {
    asking
        .iter_mut()
        .enumerate()
        .find_map(|(i, a)| match a.answer.as_mut().poll(cx) {
            Poll::Ready(answer) => Some((i, answer)),
            Poll::Pending => None,
        })
}

/// Aborts the attempts still on the wire (an aborted loser: `attemptEnd` says so).
fn abort<E: Env, F>(sending: Vec<Sending<'_, F>>, env: &E, on_event: &mut dyn FnMut(&Event<'_>)) {
    let now = env.now_ms();
    for loser in sending {
        drop(loser.send);
        on_event(&Event::AttemptEnd {
            attempt: loser.flight.attempt,
            origin: loser.flight.origin(),
            outcome: OutcomeKind::Aborted,
            status: None,
            duration_ms: now - loser.flight.start,
        });
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
    // A hedge takes a bulkhead slot of its own, if one is free and no call waits for one
    // (it never queues), and gives it up to a call that finds none.
    let slot = match &policy.bulkhead {
        Some(b) => {
            // The call's bulkhead: its primary's, wherever its attempts go.
            let bulkhead = ctx.owner.with(ctx.primary(), |_, s| s.bulkhead.clone());
            Some(bulkhead.hedge(b)?)
        }
        None => None,
    };
    // The origin's admission list: a hedge it would refuse is simply not sent (no
    // short-circuit, rate-limit or throttle event or count for it).
    let flight = Flight::hedge(ctx, env, attempt, now, slot, on_event)?;
    on_event(&Event::Hedge(Sent {
        attempt,
        delay_ms: delay,
    }));
    Some(flight)
}
