//! One origin's pacing state ([`Pacer`]): its `Retry-After` hold, its quota and the sends
//! booked into the windows ahead; the rules are in the folder's docs ([`crate::pacing`]).

use super::rate_limit::Quota;

/// Resets closer than this (ms) are taken as the same window when its length is unknown.
pub const SAME_WINDOW_MS: f64 = 1_000.0;

/// What an origin's quota stands at.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Window {
    remaining: u32,
    reset_at: f64,
    limit: Option<u32>,
    window_ms: Option<f64>,
    /// The most requests an answer said were left, plus the one that asked: what a window is
    /// taken to hold when no limit is stated.
    peak: u32,
    /// Until when what the last answer said is believed: its time plus the cap. Spent, the
    /// window holds calls back until its reset or until then, whichever comes first.
    believed_until: f64,
    /// A probe window: `remaining` is 1 until one call goes to ask; it ends on an answer,
    /// and its `reset_at` is only when the calls that wait ask again.
    probe: bool,
}

impl Window {
    /// The length of the next windows: as stated, else a second until a response says.
    fn span(&self) -> f64 {
        self.window_ms.unwrap_or(SAME_WINDOW_MS).max(1.0)
    }

    /// Until when the window, spent, holds calls back.
    fn spent_until(&self) -> f64 {
        if self.probe {
            self.reset_at
        } else {
            self.reset_at.min(self.believed_until)
        }
    }

    /// Whether sends may be booked into the windows after this one: its reset is believed.
    fn bookable(&self) -> bool {
        !self.probe && self.reset_at <= self.believed_until
    }
}

/// A send booked for a call: its place in its origin's queue ([`Admit::Booked`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ticket(u32);

/// The sends booked into the windows after the current one, first come first.
#[derive(Clone, Debug, Default, PartialEq)]
struct Queue {
    /// The tickets still waiting for a window, in the order they were issued.
    waiting: Vec<u32>,
    /// The number of the next ticket (wrapping: 2³² bookings on, no call still holds the
    /// ticket that had the number).
    issued: u32,
    /// The first ticket served into the current window: a ticket from this one on that is
    /// not waiting was served into it (or was given back already).
    served_from: u32,
}

impl Queue {
    fn book(&mut self) -> Ticket {
        let ticket = self.issued;
        self.issued = self.issued.wrapping_add(1);
        self.waiting.push(ticket);
        Ticket(ticket)
    }

    /// How many tickets wait ahead of `ticket`; `None` if it waits no more.
    fn place(&self, ticket: Ticket) -> Option<usize> {
        self.waiting.iter().position(|t| *t == ticket.0)
    }

    /// Serves up to `n` tickets, the first ones, into a window that starts; returns how many.
    fn serve(&mut self, n: u32) -> u32 {
        let n = self.waiting.len().min(n as usize);
        self.served_from = self.waiting.first().copied().unwrap_or(self.issued);
        self.waiting.drain(..n);
        n as u32 // at most `n: u32`
    }

    /// Takes `ticket` out; returns whether it had been served into the current window.
    fn cancel(&mut self, ticket: Ticket) -> bool {
        match self.place(ticket) {
            Some(i) => {
                self.waiting.remove(i);
                false
            }
            // From `served_from` on (tickets in use lie within a few of each other).
            None => ticket.0.wrapping_sub(self.served_from) < u32::MAX / 2,
        }
    }

    /// Lets every waiting ticket go: each goes when its call asks again.
    fn clear(&mut self) {
        self.waiting.clear();
        self.served_from = self.issued;
    }
}

pub use crate::vocab::Why;

/// What the origin says to a call about to send.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Admit {
    /// Send now ([`Pacer::take`] counts it once the attempt really starts, unless it was
    /// booked: its window counted it).
    Go,
    /// Wait this long, then ask again (a hold, or a quota whose limit is unknown).
    Wait(f64, Why),
    /// A send in a later window is booked for the call (or still is, asked with its
    /// `ticket`), due in `due` ms. Calls that find the quota spent are booked in the order
    /// they came, so the first to wait is the first to go. The call waits `wake` ms, until
    /// the next reset, and asks again with its ticket: it goes if it was served into the
    /// window that starts there (bookings ahead of it given back move it up).
    Booked {
        /// The call's place in the queue.
        ticket: Ticket,
        /// How long until the window the send is booked into, as the queue stands.
        due: f64,
        /// How long until the call asks again.
        wake: f64,
    },
    /// The wait would be longer than the call may wait: nothing was booked.
    TooLong(f64, Why),
}

impl Admit {
    /// A wait of `ms` for a call that may wait at most `max_wait` ms.
    fn wait(ms: f64, why: Why, max_wait: f64) -> Self {
        if ms > max_wait {
            Admit::TooLong(ms, why)
        } else {
            Admit::Wait(ms, why)
        }
    }
}

/// One origin's pacing state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pacer {
    /// No send before this time (monotonic ms); 0 when there is no hold.
    not_before: f64,
    quota: Option<Window>,
    queue: Queue,
}

/// Windows rolled over at most in one step; past that the quota starts afresh at `now`.
const MAX_ROLLS: u32 = 64;

impl Pacer {
    /// How long a send must wait at `now`, and why; `None` when it may go (`stats()`).
    pub fn wait(&self, now: f64) -> Option<(f64, Why)> {
        if let Some(ms) = self.held(now) {
            return Some((ms, Why::RetryAfter));
        }
        match self.quota {
            Some(w) if w.remaining == 0 && w.spent_until() > now => {
                Some((w.spent_until() - now, Why::Quota))
            }
            _ => None,
        }
    }

    /// Brings the quota to `now`: each window that ended hands its successor's requests
    /// first to the sends booked into it. Without a stated limit the next window is taken to
    /// hold what answers have said was left at most (plus one), for [`SAME_WINDOW_MS`] or
    /// until an answer tells more: the calls that waited for the reset do not all go at once.
    fn roll(&mut self, now: f64) {
        let Pacer { quota, queue, .. } = self;
        let Some(w) = quota else {
            return;
        };
        let mut rolls = 0;
        while w.reset_at <= now || (w.remaining == 0 && w.spent_until() <= now) {
            if w.probe || w.reset_at > now {
                // Spent, and what the server said is believed no more (or a probe window
                // still waits for its answer): one call asks first, the others wait for it.
                if !w.probe {
                    w.probe = true;
                    w.remaining = 1;
                }
                w.reset_at = now + SAME_WINDOW_MS;
                return;
            }
            let Some(limit) = w.limit.filter(|l| *l > 0) else {
                queue.clear();
                if w.peak == 0 || w.limit == Some(0) {
                    *quota = None;
                } else {
                    w.remaining = w.peak;
                    w.reset_at = now + SAME_WINDOW_MS;
                }
                return;
            };
            rolls += 1;
            if (queue.waiting.is_empty() && w.reset_at + w.span() <= now) || rolls > MAX_ROLLS {
                // Windows missed entirely: a fresh one starts now at the latest.
                queue.clear();
                w.remaining = limit;
                w.reset_at = now + w.span();
            } else {
                w.remaining = limit - queue.serve(limit);
                w.reset_at += w.span();
            }
        }
    }

    /// What the origin says to a call about to send at `now` that may wait at most
    /// `max_wait` ms. Books a later send when the quota is spent and its limit known. A call
    /// that holds a `ticket` goes once it was served into the current window (it waits for
    /// a `Retry-After` hold that came since, though).
    pub fn admit(&mut self, now: f64, max_wait: f64, ticket: Option<Ticket>) -> Admit {
        if let Some(ms) = self.held(now) {
            return Admit::wait(ms, Why::RetryAfter, max_wait);
        }
        self.roll(now);
        let Some(w) = self.quota else {
            return Admit::Go;
        };
        let place = match ticket {
            Some(ticket) => match self.queue.place(ticket) {
                Some(place) => place,
                // Served (or the queue was let go): its window counted it.
                None => return Admit::Go,
            },
            None if w.remaining > 0 => return Admit::Go,
            None => self.queue.waiting.len(),
        };
        let Some(limit) = w.limit.filter(|l| *l > 0 && w.bookable()) else {
            return Admit::wait(w.spent_until() - now, Why::Quota, max_wait);
        };
        let due = w.reset_at + (place / limit as usize) as f64 * w.span() - now;
        if due > max_wait {
            return Admit::TooLong(due, Why::Quota);
        }
        Admit::Booked {
            ticket: ticket.unwrap_or_else(|| self.queue.book()),
            due,
            wake: w.reset_at - now,
        }
    }

    /// Whether the origin has said nothing of its limits that could hold a send at `now`:
    /// no quota known, no `Retry-After` hold.
    pub fn is_quiet(&self, now: f64) -> bool {
        self.quota.is_none() && self.held(now).is_none()
    }

    /// How long a `Retry-After` hold keeps sends back at `now`, if one does.
    fn held(&self, now: f64) -> Option<f64> {
        (self.not_before > now).then_some(self.not_before - now)
    }

    /// Gives back a send booked with `ticket` that was not made (its call was aborted, ran
    /// out of time, or was refused by the breaker or the throttle): still ahead, the booking
    /// goes and the calls booked behind it move up; served into the current window, that
    /// window gets the request back.
    pub fn unbook(&mut self, ticket: Ticket) {
        if self.queue.cancel(ticket)
            && let Some(w) = &mut self.quota
        {
            let limit = w.limit.unwrap_or(u32::MAX);
            w.remaining = w.remaining.saturating_add(1).min(limit);
        }
    }

    /// Takes one request of the quota for a send at `now` that [`Pacer::admit`] let go.
    /// Returns whether the send is a probe window's: what its attempt hears goes to
    /// [`Pacer::heard`] with `probe`.
    pub fn take(&mut self, now: f64) -> bool {
        self.roll(now);
        let Some(w) = &mut self.quota else {
            return false;
        };
        let probe = w.probe && w.remaining > 0;
        w.remaining = w.remaining.saturating_sub(1);
        probe
    }

    /// Learns what the end of an attempt at `now` told: its rate-limit headers (`quota`),
    /// if it was `answered`; `probe` when the attempt was a probe window's send. An answer
    /// ends a probe window (without headers, the quota is forgotten); a probe that got no
    /// answer lets the next call ask. What the headers say is believed for `cap` ms.
    pub fn heard(
        &mut self,
        (answered, quota): (bool, Option<&Quota>),
        probe: bool,
        now: f64,
        cap: f64,
    ) {
        if let Some(quota) = quota {
            self.learn(quota, now, cap);
        }
        match &mut self.quota {
            Some(w) if w.probe && answered => {
                self.quota = None;
                self.queue.clear();
            }
            Some(w) if w.probe && probe => w.remaining = 1,
            _ => {}
        }
    }

    /// Learns what a response at `now` said of the quota, believed for `cap` ms.
    pub fn learn(&mut self, quota: &Quota, now: f64, cap: f64) {
        let reset_at = now + quota.reset_ms;
        if reset_at <= now {
            return; // stale: that window is over
        }
        self.roll(now);
        let fresh = Window {
            remaining: quota.remaining,
            reset_at,
            limit: quota.limit,
            window_ms: quota.window_ms,
            peak: quota.remaining.saturating_add(1),
            believed_until: now + cap,
            probe: false,
        };
        self.quota = Some(match self.quota {
            Some(w) => {
                let tolerance = fresh
                    .window_ms
                    .or(w.window_ms)
                    .map_or(SAME_WINDOW_MS, |ms| ms / 2.0);
                if !w.probe && (reset_at - w.reset_at).abs() < tolerance {
                    Window {
                        remaining: w.remaining.min(fresh.remaining),
                        reset_at: w.reset_at.min(reset_at),
                        limit: fresh.limit.or(w.limit),
                        window_ms: fresh.window_ms.or(w.window_ms),
                        peak: w.peak.max(fresh.peak),
                        believed_until: fresh.believed_until,
                        probe: false,
                    }
                } else if w.probe || reset_at > w.reset_at {
                    // A later window than ours (or the answer a probe window waits for): its
                    // requests go to the sends booked first.
                    Window {
                        remaining: fresh.remaining - self.queue.serve(fresh.remaining),
                        peak: w.peak.max(fresh.peak),
                        ..fresh
                    }
                } else if fresh.remaining < w.remaining {
                    // An earlier reset than the window we assumed, and less left: the server's
                    // windows are not where we thought (it starts one at the first request
                    // after a reset, say). What it says now wins.
                    Window {
                        limit: fresh.limit.or(w.limit),
                        window_ms: fresh.window_ms.or(w.window_ms),
                        peak: w.peak.max(fresh.peak),
                        ..fresh
                    }
                } else {
                    // An earlier reset and as much left or more: an older report. Keep ours.
                    w
                }
            }
            None => fresh,
        });
    }

    /// Holds the origin until `until` (monotonic ms): a `Retry-After` on a 429 or 503.
    pub fn hold(&mut self, until: f64) {
        self.not_before = self.not_before.max(until);
    }

    /// Requests left in the current window, if known.
    pub fn remaining(&self, now: f64) -> Option<u32> {
        self.quota
            .filter(|w| w.reset_at > now)
            .map(|w| w.remaining)
            .or(self.quota.and_then(|w| w.limit))
    }

    /// Forgets everything (`reset()`); calls still holding a ticket go when they ask again.
    pub fn reset(&mut self) {
        self.not_before = 0.0;
        self.quota = None;
        self.queue.clear();
    }
}

#[cfg(test)]
mod tests;
