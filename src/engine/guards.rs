//! The holds a call keeps on its origin's registry entry, each released when dropped, so
//! a call whose future is dropped (the caller gave up on it) leaves nothing behind: the
//! budget tokens of a retry not yet sent, the hold of a call waiting to retry, and an
//! attempt's lease (its breaker permit and `in_flight` count). Each reaches the origin through
//! the client's [`Owner`], whose loans never outlast a step: none is held across an `await`
//! or while an event is delivered (`onEvent` may call back into the registry).

use super::{Ctx, report};
use crate::breaker::Transition;
use crate::events::Event;
use crate::origin::Ticket;
use crate::origin::{Ask, EndRules, Finished, Refusal};
use crate::owner::{Applied, Lease, Owner, Returned};
use crate::policy::Policy;
use crate::registry::EntryId;

/// Budget tokens withdrawn for a retry that has not started yet. Dropped before
/// [`Reservation::commit`] (the retry was not sent), it gives them back to the entry it
/// took them from; nothing happens if that entry was evicted meanwhile.
pub(super) struct Reservation<'a> {
    owner: &'a Owner,
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
        let (id, withdrawn) = ctx
            .owner
            .with(ctx.origin(), |id, s| (id, s.withdraw(cost, capacity)));
        withdrawn.then_some(Reservation {
            owner: ctx.owner,
            origin: ctx.origin(),
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
        // Up to the capacity, like a success's refund.
        let (cost, capacity) = (self.cost, self.capacity);
        let back = Returned::Refund { cost, capacity };
        self.owner.update(self.origin, Some(self.id), back);
    }
}

/// A send the origin's pacing booked for the call (its `ticket`). Dropped before
/// [`Booking::used`] (the call was aborted, ran out of time, or the breaker or throttle
/// refused the send), it is given back ([`crate::pacing::Pacer::unbook`]).
pub(super) struct Booking<'a> {
    owner: &'a Owner,
    origin: &'a str,
    id: EntryId,
    pub(super) ticket: Ticket,
    used: bool,
}

impl<'a> Booking<'a> {
    /// The send booked with `ticket` on the origin's entry `id`.
    pub(super) fn new(ctx: &Ctx<'a>, id: EntryId, ticket: Ticket) -> Self {
        Booking {
            owner: ctx.owner,
            origin: ctx.origin(),
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
        let back = Returned::Unbook(self.ticket);
        self.owner.update(self.origin, Some(self.id), back);
    }
}

/// A call's hold on its origin between an attempt that may be retried and the next
/// attempt (or the call's end): the origin's `waiting` count, so that the registry does
/// not evict it as idle (see [`Registry`]'s bound).
pub(super) struct WaitHold<'a> {
    owner: &'a Owner,
    origin: &'a str,
    id: EntryId,
}

impl<'a> WaitHold<'a> {
    /// Marks the origin in use while the call waits for it (its rate limit), so that it is
    /// not evicted with what its pacing knows.
    pub(super) fn take(ctx: &Ctx<'a>) -> Self {
        let id = ctx.owner.with(ctx.origin(), |id, s| {
            s.wait_begins();
            id
        });
        WaitHold {
            owner: ctx.owner,
            origin: ctx.origin(),
            id,
        }
    }
}

impl Drop for WaitHold<'_> {
    fn drop(&mut self) {
        // Gone if the origin was evicted meanwhile (every origin busy at the bound).
        self.owner
            .update(self.origin, Some(self.id), Returned::WaitEnds);
    }
}

/// One attempt's hold on the origin: its breaker permit and its `in_flight` count.
/// Dropped without [`AttemptGuard::finish`] (the call's future was dropped mid-attempt),
/// it releases both as a caller abort.
pub(super) struct AttemptGuard<'a> {
    owner: &'a Owner,
    policy: &'a Policy,
    origin: &'a str,
    /// The lease, until the attempt's end gives it back.
    lease: Option<Lease>,
    started_ms: f64,
}

impl<'a> AttemptGuard<'a> {
    /// Asks the origin's admission list for attempt number `attempt` (`ask`, with `random` in `[0, 1)` drawn only when the
    /// throttle is on) at `now`; with leave, the attempt is counted and its `attemptStart` told.
    /// Refusals are told here (a wait's event comes from the loop, once the origin is held in
    /// use); with a booked send, the entry's id comes with it.
    pub(super) fn begin(
        ctx: &Ctx<'a>,
        now: f64,
        attempt: u32,
        ask: Ask,
        random: &dyn Fn() -> f64,
        on_event: &mut dyn FnMut(&Event<'_>),
    ) -> Result<Self, (Refusal, EntryId)> {
        let (lease, transition) = match ctx.owner.admit(ctx.origin(), ask, now, ctx.policy, random)
        {
            Ok(leased) => leased,
            Err((refusal, id)) => {
                let origin = ctx.origin();
                match refusal {
                    Refusal::Breaker(retry_after_ms) => on_event(&Event::ShortCircuit {
                        origin,
                        retry_after_ms,
                    }),
                    Refusal::Throttled(probability) => on_event(&Event::Throttled {
                        origin,
                        probability,
                    }),
                    Refusal::RateLimit(retry_after_ms, reason) => {
                        on_event(&Event::RateLimitRejected {
                            origin,
                            retry_after_ms,
                            reason,
                        });
                    }
                    _ => {}
                }
                return Err((refusal, id));
            }
        };
        report(transition, ctx.origin(), on_event);
        on_event(&Event::AttemptStart {
            attempt,
            origin: ctx.origin(),
        });
        Ok(AttemptGuard {
            owner: ctx.owner,
            policy: ctx.policy,
            origin: ctx.origin(),
            lease: Some(lease),
            started_ms: now,
        })
    }

    /// The origin it was admitted by.
    pub(super) fn origin(&self) -> &'a str {
        self.origin
    }

    /// Records the attempt's end (`ended.hold`: the call goes on to retry, holding the
    /// origin meanwhile); returns the breaker transition and that hold (none if the origin
    /// was evicted meanwhile).
    pub(super) fn finish(
        mut self,
        ended: Finished<'_>,
        now: f64,
    ) -> (Option<Transition>, Option<WaitHold<'a>>) {
        match self.release(ended, now) {
            Some((id, Some(transition))) => {
                let hold = ended.hold.then_some(WaitHold {
                    owner: self.owner,
                    origin: self.origin,
                    id,
                });
                (transition, hold)
            }
            // The origin's entry is gone (evicted meanwhile): nothing was recorded.
            _ => (None, None),
        }
    }

    /// Gives the lease back with the attempt's end (once): its entry's id and what the
    /// owner did with it ([`Owner::finish`]).
    #[inline(never)]
    fn release(&mut self, ended: Finished<'_>, now: f64) -> Option<(EntryId, Applied)> {
        let lease = self.lease.take()?;
        let id = lease.id;
        let rules = EndRules::of(self.policy);
        Some((id, self.owner.finish(self.origin, lease, ended, now, rules)))
    }
}

impl Drop for AttemptGuard<'_> {
    fn drop(&mut self) {
        // Dropped mid-attempt (the call's future was dropped): ended as a caller abort.
        let _ = self.release(Finished::default(), self.started_ms);
    }
}
