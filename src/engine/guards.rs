//! The holds a call keeps on its origin's registry entry, each released when dropped, so
//! a call whose future is dropped (the caller gave up on it) leaves nothing behind: the
//! budget tokens of a retry not yet sent, the hold of a call waiting to retry, and an
//! attempt's breaker permit and `in_flight` count. No `RefCell` borrow is held across an
//! `await` or while an event is delivered (`onEvent` may call back into the registry).

use super::{Blocked, Ctx, report};
use crate::breaker::{Permit, Transition};
use crate::classify::Judgement;
use crate::events::Event;
use crate::pacing::{Admit, Ticket, Why};
use crate::policy::{BreakerPolicy, Policy};
use crate::rate_limit::Quota;
use crate::registry::{EntryId, Registry};
use crate::share;
use std::cell::RefCell;

/// Budget tokens withdrawn for a retry that has not started yet. Dropped before
/// [`Reservation::commit`] (the retry was not sent), it gives them back to the entry it
/// took them from; nothing happens if that entry was evicted meanwhile.
pub(super) struct Reservation<'a> {
    registry: &'a RefCell<Registry>,
    origin: &'a str,
    id: EntryId,
    cost: u32,
    capacity: u32,
    sent: bool,
}

impl<'a> Reservation<'a> {
    /// Withdraws `cost` tokens of `capacity` from the origin's budget for a retry;
    /// `None` if too few are left.
    pub(super) fn withdraw(ctx: &Ctx<'a>, cost: u32, capacity: u32) -> Option<Self> {
        let (id, withdrawn) = ctx.registry.borrow_mut().with(ctx.origin, |id, s| {
            (id, s.budget.try_withdraw(cost, capacity))
        });
        withdrawn.then_some(Reservation {
            registry: ctx.registry,
            origin: ctx.origin,
            id,
            cost,
            capacity,
            sent: false,
        })
    }

    /// The retry started: the tokens are spent. Returns their number.
    pub(super) fn commit(mut self) -> u32 {
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
            // Up to the capacity, like a success's refund.
            state.budget.on_success(self.cost, self.capacity);
        }
    }
}

/// A send the origin's pacing booked for the call (its `ticket`). Dropped before
/// [`Booking::used`] (the call was aborted, ran out of time, or the breaker or throttle
/// refused the send), it is given back ([`crate::pacing::Pacer::unbook`]).
pub(super) struct Booking<'a> {
    registry: &'a RefCell<Registry>,
    origin: &'a str,
    id: EntryId,
    pub(super) ticket: Ticket,
    used: bool,
}

impl<'a> Booking<'a> {
    /// The send booked with `ticket` on the origin's entry `id`.
    pub(super) fn new(ctx: &Ctx<'a>, id: EntryId, ticket: Ticket) -> Self {
        Booking {
            registry: ctx.registry,
            origin: ctx.origin,
            id,
            ticket,
            used: false,
        }
    }

    /// The booked send was made.
    pub(super) fn used(mut self) {
        self.used = true;
    }
}

impl Drop for Booking<'_> {
    fn drop(&mut self) {
        if self.used {
            return;
        }
        if let Ok(mut registry) = self.registry.try_borrow_mut()
            && let Some(state) = registry.get_mut(self.origin, self.id)
        {
            state.pacer.unbook(self.ticket);
        }
    }
}

/// A call's hold on its origin between an attempt that may be retried and the next
/// attempt (or the call's end): the origin's `waiting` count, so that the registry does
/// not evict it as idle (see [`Registry`]'s bound).
pub(super) struct WaitHold<'a> {
    registry: &'a RefCell<Registry>,
    origin: &'a str,
    id: EntryId,
}

impl<'a> WaitHold<'a> {
    /// Marks the origin in use while the call waits for it (its rate limit), so that it is
    /// not evicted with what its pacing knows.
    pub(super) fn take(ctx: &Ctx<'a>) -> Self {
        let id = ctx.registry.borrow_mut().with(ctx.origin, |id, s| {
            s.waiting += 1;
            id
        });
        WaitHold {
            registry: ctx.registry,
            origin: ctx.origin,
            id,
        }
    }
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
pub(super) struct AttemptGuard<'a> {
    registry: &'a RefCell<Registry>,
    policy: &'a Policy,
    origin: &'a str,
    id: EntryId,
    breaker: Option<(&'a BreakerPolicy, Permit)>,
    /// Whether the attempt is the one a probe window of the origin's pacing let go.
    probe: bool,
    started_ms: f64,
    finished: bool,
}

impl<'a> AttemptGuard<'a> {
    /// Asks the origin's pacing (with the ticket of the send `booked` for the call, if one
    /// is; it may wait at most `max_wait` ms), its adaptive throttle (`random` in `[0, 1)`,
    /// drawn only when the throttle is on) and its breaker, then counts the attempt and
    /// takes one request of its quota (a booked send's window counted it already).
    pub(super) fn begin(
        ctx: &Ctx<'a>,
        now: f64,
        attempt: u32,
        (booked, max_wait): (Option<Ticket>, f64),
        random: &dyn Fn() -> f64,
        on_event: &mut dyn FnMut(&Event<'_>),
    ) -> Result<Self, Blocked> {
        let policy = ctx.policy.breaker.as_ref();
        let paced = ctx.policy.rate_limit.is_some();
        let (began, transition) = ctx.registry.borrow_mut().with(ctx.origin, |id, s| {
            if paced {
                let blocked = match s.pacer.admit(now, max_wait, booked) {
                    Admit::Go => None,
                    Admit::Wait(ms, why) => Some(Blocked::Pace {
                        wait_ms: ms,
                        sleep_ms: ms,
                        why,
                        booked: None,
                    }),
                    Admit::Booked { ticket, due, wake } => Some(Blocked::Pace {
                        wait_ms: due,
                        sleep_ms: wake,
                        why: Why::Quota,
                        booked: Some((id, ticket)),
                    }),
                    Admit::TooLong(ms, why) => {
                        s.stats.rate_limited += 1;
                        Some(Blocked::RateLimit(ms, why))
                    }
                };
                if let Some(blocked) = blocked {
                    return (Err(blocked), None);
                }
            }
            if let Some(t) = &ctx.policy.throttle
                && let Some(probability) = s.throttle.refuse(now, random, t)
            {
                s.stats.throttled += 1;
                return (Err(Blocked::Throttled(probability)), None);
            }
            let permit = match policy.map(|p| s.breaker.try_acquire(now, p)) {
                Some(Err(rejected)) => {
                    s.stats.short_circuits += 1;
                    return (Err(Blocked::Breaker(rejected.retry_after_ms)), None);
                }
                Some(Ok(permit)) => Some(permit),
                None => None,
            };
            let probe = paced && booked.is_none() && s.pacer.take(now);
            s.stats.attempts += 1;
            s.stats.retries += u64::from(attempt > 1);
            s.stats.in_flight += 1;
            let transition = permit.as_ref().and_then(Permit::transition);
            (Ok((id, permit, probe)), transition)
        });
        report(transition, ctx.origin, on_event);
        match began {
            Err(blocked) => {
                match blocked {
                    Blocked::Breaker(retry_after_ms) => on_event(&Event::ShortCircuit {
                        origin: ctx.origin,
                        retry_after_ms,
                    }),
                    Blocked::Throttled(probability) => on_event(&Event::Throttled {
                        origin: ctx.origin,
                        probability,
                    }),
                    // (A wait's event comes from the loop, once the origin is held in use.)
                    Blocked::RateLimit(retry_after_ms, reason) => {
                        on_event(&Event::RateLimitRejected {
                            origin: ctx.origin,
                            retry_after_ms,
                            reason,
                        });
                    }
                    _ => {}
                }
                Err(blocked)
            }
            Ok((id, permit, probe)) => {
                on_event(&Event::AttemptStart {
                    attempt,
                    origin: ctx.origin,
                });
                Ok(AttemptGuard {
                    registry: ctx.registry,
                    policy: ctx.policy,
                    origin: ctx.origin,
                    id,
                    breaker: policy.zip(permit),
                    probe,
                    started_ms: now,
                    finished: false,
                })
            }
        }
    }

    /// Records the attempt's result; returns the breaker transition and, with `hold`, the
    /// call's hold on the origin while it goes on to retry (none if the origin was evicted
    /// meanwhile).
    pub(super) fn finish(
        mut self,
        judgement: Judgement,
        timed_out: bool,
        now: f64,
        hold: bool,
        learned: Learned<'_>,
    ) -> (Option<Transition>, Option<WaitHold<'a>>) {
        self.finished = true;
        match self.release(judgement, timed_out, now, hold, learned) {
            Released::Recorded(transition) => {
                let hold = hold.then_some(WaitHold {
                    registry: self.registry,
                    origin: self.origin,
                    id: self.id,
                });
                (transition, hold)
            }
            Released::Gone => (None, None),
        }
    }

    /// Gives the attempt's hold back and records its result. With `hold`, the origin's
    /// `waiting` count is taken for the call.
    fn release(
        &mut self,
        judgement: Judgement,
        timed_out: bool,
        now: f64,
        hold: bool,
        learned: Learned<'_>,
    ) -> Released {
        let Ok(mut registry) = self.registry.try_borrow_mut() else {
            return Released::Gone;
        };
        let rank = registry.rank();
        // Gone if the origin was evicted meanwhile: then there is nothing to update.
        let Some(state) = registry.get_mut(self.origin, self.id) else {
            return Released::Gone;
        };
        // What the peers knew before this answer (only a sharing client tells them).
        let before = rank.map(|_| (state.breaker.is_failing(), state.pacer.wait(now).is_some()));
        state.waiting += u32::from(hold);
        let stats = &mut state.stats;
        stats.in_flight = stats.in_flight.saturating_sub(1);
        match judgement {
            Judgement::Failure => stats.failures += 1,
            Judgement::Success => stats.successes += 1,
            Judgement::Unjudged => {}
        }
        stats.timeouts += u64::from(timed_out);
        if let Some(t) = &self.policy.throttle
            && judgement != Judgement::Unjudged
        {
            state
                .throttle
                .record(now, judgement == Judgement::Success, t);
        }
        if let Some(ms) = learned.latency_ms {
            state.latency.record(ms);
        }
        if self.policy.rate_limit.is_some() {
            let cap = f64::from(self.policy.max_retry_after_ms());
            let heard = (learned.answered, learned.quota);
            state.pacer.heard(heard, self.probe, now, cap);
            if let Some(until) = learned.hold_until {
                state.pacer.hold(until);
            }
        }
        let transition = self
            .breaker
            .take()
            .and_then(|(policy, permit)| state.breaker.record(permit, judgement, now, policy));
        if let (Some(rank), Some(before)) = (rank, before) {
            let notes = share::told(state, before, judgement, transition, now, rank);
            registry.tell(self.origin, notes);
        }
        Released::Recorded(transition)
    }
}

/// What an attempt's answer said of its origin's limits.
#[derive(Clone, Copy, Default)]
pub(super) struct Learned<'q> {
    /// Whether an answer came (a response, whatever its status).
    pub(super) answered: bool,
    /// Its rate-limit headers.
    pub(super) quota: Option<&'q Quota>,
    /// Until when a `Retry-After` on a 429 or 503 holds the origin (monotonic ms).
    pub(super) hold_until: Option<f64>,
    /// How long the attempt took to answer, when the origin's latency is learnt (hedging).
    pub(super) latency_ms: Option<f64>,
}

/// What giving an attempt's hold back did.
enum Released {
    /// The origin's entry is gone (evicted meanwhile, or the registry is in use): nothing
    /// was recorded.
    Gone,
    /// The result was recorded; the breaker may have changed state.
    Recorded(Option<Transition>),
}

impl Drop for AttemptGuard<'_> {
    fn drop(&mut self) {
        if !self.finished {
            let _ = self.release(
                Judgement::Unjudged,
                false,
                self.started_ms,
                false,
                Learned::default(),
            );
        }
    }
}
