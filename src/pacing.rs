//! Pacing: when an origin may be sent to next, from what it said of its limits.
//!
//! Two things make an origin wait, both kept per origin so that every call of a client
//! honours them (not only the call that was told):
//! - a **hold**: a `Retry-After` on a 429 or 503 says "not before then" for the whole
//!   origin, so other calls do not send into the same refusal;
//! - a **quota**: the rate-limit headers ([`crate::rate_limit`]) say how many requests are
//!   left until the window resets. Each send takes one; with none left, calls wait for the
//!   reset. When the reset comes and the window's limit is known, a fresh window is assumed
//!   (its length, if known, else [`SAME_WINDOW_MS`] until a response says when it resets);
//!   without a known limit the quota is forgotten and the next response tells again.
//!
//! Responses to requests sent before the window reset can arrive after it; a report whose
//! reset is already past is stale and ignored. Two reports of the same window (resets
//! within [`SAME_WINDOW_MS`], or within half the window when its length is known: whole-second
//! deltas round) keep the lower remaining and the earlier reset; a later reset is a new
//! window and is taken as it is.

use crate::rate_limit::Quota;

/// Resets closer than this (ms) are taken as the same window when its length is unknown.
pub const SAME_WINDOW_MS: f64 = 1_000.0;

/// What an origin's quota stands at.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Window {
    remaining: u32,
    reset_at: f64,
    limit: Option<u32>,
    window_ms: Option<f64>,
    /// Sends booked into the windows after this one, in the order the calls came.
    booked: u32,
    /// The most requests an answer said were left, plus the one that asked: what a window is
    /// taken to hold when no limit is stated.
    peak: u32,
}

impl Window {
    /// The length of the next windows: as stated, else a second until a response says.
    fn span(&self) -> f64 {
        self.window_ms.unwrap_or(SAME_WINDOW_MS).max(1.0)
    }
}

/// Why a call must wait before sending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// The origin's quota is spent until its window resets.
    Quota,
    /// A `Retry-After` on a 429 or 503 holds the origin.
    RetryAfter,
}

impl Why {
    /// The JS name (events, errors).
    pub fn as_str(self) -> &'static str {
        match self {
            Why::Quota => "quota",
            Why::RetryAfter => "retryAfter",
        }
    }
}

/// What the origin says to a call about to send.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Admit {
    /// Send now ([`Pacer::take`] counts it once the attempt really starts).
    Go,
    /// Wait this long, then ask again (a hold, or a quota whose limit is unknown).
    Wait(f64, Why),
    /// A send in a later window is booked for the call: wait this long, then send without
    /// asking again. Calls that find the quota spent are booked in the order they came, so
    /// the first to wait is the first to go.
    Booked(f64),
    /// The wait would be longer than the call may wait: nothing was booked.
    TooLong(f64, Why),
}

/// One origin's pacing state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pacer {
    /// No send before this time (monotonic ms); 0 when there is no hold.
    not_before: f64,
    quota: Option<Window>,
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
            Some(w) if w.remaining == 0 && w.reset_at > now => Some((w.reset_at - now, Why::Quota)),
            _ => None,
        }
    }

    /// Brings the quota to `now`: each window that ended hands its successor's requests
    /// first to the sends booked into it. Without a stated limit the next window is taken to
    /// hold what answers have said was left at most (plus one), for [`SAME_WINDOW_MS`] or
    /// until an answer tells more: the calls that waited for the reset do not all go at once.
    fn roll(&mut self, now: f64) {
        let Some(w) = &mut self.quota else {
            return;
        };
        let mut rolls = 0;
        while w.reset_at <= now {
            let Some(limit) = w.limit.filter(|l| *l > 0) else {
                if w.peak == 0 || w.limit == Some(0) {
                    self.quota = None;
                } else {
                    w.remaining = w.peak;
                    w.reset_at = now + SAME_WINDOW_MS;
                }
                return;
            };
            let used = w.booked.min(limit);
            w.booked -= used;
            w.remaining = limit - used;
            rolls += 1;
            w.reset_at = if (w.booked == 0 && w.reset_at + w.span() <= now) || rolls > MAX_ROLLS {
                // Windows missed entirely: a fresh one starts now at the latest.
                w.booked = 0;
                w.remaining = limit;
                now + w.span()
            } else {
                w.reset_at + w.span()
            };
        }
    }

    /// What the origin says to a call about to send at `now` that may wait at most
    /// `max_wait` ms. Books a later send when the quota is spent and its limit known. A call
    /// that holds a send `booked` for now waits only for a `Retry-After` hold that came since.
    pub fn admit(&mut self, now: f64, max_wait: f64, booked: bool) -> Admit {
        let (wait, why) = if let Some(ms) = self.held(now) {
            (ms, Why::RetryAfter)
        } else if booked {
            return Admit::Go;
        } else {
            self.roll(now);
            match &mut self.quota {
                Some(w) if w.remaining == 0 => match w.limit.filter(|l| *l > 0) {
                    Some(limit) => {
                        let wait = w.reset_at + f64::from(w.booked / limit) * w.span() - now;
                        if wait > max_wait {
                            return Admit::TooLong(wait, Why::Quota);
                        }
                        w.booked += 1;
                        return Admit::Booked(wait);
                    }
                    None => (w.reset_at - now, Why::Quota),
                },
                _ => return Admit::Go,
            }
        };
        if wait > max_wait {
            Admit::TooLong(wait, why)
        } else {
            Admit::Wait(wait, why)
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

    /// Gives back a send booked for `at` that was not made (its call was aborted, ran out of
    /// time, or was refused by the breaker or the throttle): still ahead, the booking goes;
    /// in the current window, that window gets the request back.
    pub fn unbook(&mut self, at: f64) {
        if let Some(w) = &mut self.quota {
            if at >= w.reset_at {
                w.booked = w.booked.saturating_sub(1);
            } else if at >= w.reset_at - w.span() {
                let limit = w.limit.unwrap_or(u32::MAX);
                w.remaining = w.remaining.saturating_add(1).min(limit);
            }
        }
    }

    /// Takes one request of the quota for a send at `now` that [`Pacer::admit`] let go.
    pub fn take(&mut self, now: f64) {
        self.roll(now);
        if let Some(w) = &mut self.quota {
            w.remaining = w.remaining.saturating_sub(1);
        }
    }

    /// Learns what a response at `now` said of the quota.
    pub fn learn(&mut self, quota: &Quota, now: f64) {
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
            booked: 0,
            peak: quota.remaining.saturating_add(1),
        };
        self.quota = Some(match self.quota {
            Some(w) => {
                let tolerance = fresh
                    .window_ms
                    .or(w.window_ms)
                    .map_or(SAME_WINDOW_MS, |ms| ms / 2.0);
                if (reset_at - w.reset_at).abs() < tolerance {
                    Window {
                        remaining: w.remaining.min(fresh.remaining),
                        reset_at: w.reset_at.min(reset_at),
                        limit: fresh.limit.or(w.limit),
                        window_ms: fresh.window_ms.or(w.window_ms),
                        booked: w.booked,
                        peak: w.peak.max(fresh.peak),
                    }
                } else if reset_at > w.reset_at {
                    // A later window than ours: its requests go to the sends booked first.
                    Window {
                        remaining: fresh.remaining.saturating_sub(w.booked),
                        booked: w.booked.saturating_sub(fresh.remaining),
                        peak: w.peak.max(fresh.peak),
                        ..fresh
                    }
                } else if fresh.remaining < w.remaining {
                    // An earlier reset than the window we assumed, and less left: the server's
                    // windows are not where we thought (it starts one at the first request
                    // after a reset, say). What it says now wins.
                    Window {
                        booked: w.booked,
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

    /// Forgets everything (`reset()`).
    pub fn reset(&mut self) {
        *self = Pacer::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const ANY: f64 = f64::INFINITY;

    fn quota(remaining: u32, reset_ms: f64) -> Quota {
        Quota {
            remaining,
            reset_ms,
            limit: None,
            window_ms: None,
        }
    }

    fn limited(remaining: u32, reset_ms: f64, limit: u32, window_ms: f64) -> Quota {
        Quota {
            remaining,
            reset_ms,
            limit: Some(limit),
            window_ms: Some(window_ms),
        }
    }

    #[test]
    fn a_fresh_origin_never_waits() {
        let mut p = Pacer::default();
        assert_eq!(p.admit(0.0, 0.0, false), Admit::Go);
        p.take(0.0);
        assert_eq!(p.remaining(0.0), None);
    }

    #[test]
    fn each_send_takes_one_and_none_left_waits_for_the_reset() {
        let mut p = Pacer::default();
        p.learn(&quota(2, 1_000.0), 0.0);
        assert_eq!(p.admit(10.0, ANY, false), Admit::Go);
        p.take(10.0);
        assert_eq!(p.remaining(10.0), Some(1));
        p.take(20.0);
        // The limit is unknown: wait for the reset, then ask again.
        assert_eq!(p.admit(30.0, ANY, false), Admit::Wait(970.0, Why::Quota));
        assert_eq!(p.wait(30.0), Some((970.0, Why::Quota)));
        assert_eq!(
            p.admit(30.0, 900.0, false),
            Admit::TooLong(970.0, Why::Quota)
        );
        assert_eq!(p.admit(1_000.0, ANY, false), Admit::Go);
    }

    #[test]
    fn without_a_stated_limit_the_next_window_holds_the_most_seen_left() {
        let mut p = Pacer::default();
        p.learn(&quota(4, 500.0), 0.0); // 5 at most before that answer
        p.learn(&quota(0, 500.0), 10.0);
        assert!(p.wait(100.0).is_some());
        // At the reset, not everyone at once: five, then a wait of a second or until an answer.
        for t in [600.0, 601.0, 602.0, 603.0, 604.0] {
            assert_eq!(p.admit(t, ANY, false), Admit::Go);
            p.take(t);
        }
        assert_eq!(p.admit(605.0, ANY, false), Admit::Wait(995.0, Why::Quota));
        // An answer of the server's new window says how much is really left.
        p.learn(&quota(40, 59_000.0), 650.0);
        assert_eq!(p.admit(651.0, ANY, false), Admit::Go);
        assert_eq!(p.remaining(651.0), Some(40));
    }

    #[test]
    fn calls_that_find_the_quota_spent_are_booked_in_order_into_the_next_windows() {
        let mut p = Pacer::default();
        p.learn(&limited(0, 1_000.0, 3, 1_000.0), 0.0);
        // Three sends fit the next window, the fourth the one after.
        for _ in 0..3 {
            assert_eq!(p.admit(0.0, ANY, false), Admit::Booked(1_000.0));
        }
        assert_eq!(p.admit(0.0, ANY, false), Admit::Booked(2_000.0));
        // Too long for this call: nothing booked for it.
        assert_eq!(
            p.admit(0.0, 1_500.0, false),
            Admit::TooLong(2_000.0, Why::Quota)
        );
        // At the reset the booked sends own the new window: a newcomer is booked behind them.
        assert_eq!(p.admit(1_000.0, ANY, false), Admit::Booked(1_000.0));
        assert_eq!(p.admit(1_000.0, ANY, false), Admit::Booked(1_000.0));
        assert_eq!(p.admit(1_000.0, ANY, false), Admit::Booked(2_000.0));
        // Far later: nothing booked is left, the new window starts at the send.
        assert_eq!(p.admit(50_000.0, ANY, false), Admit::Go);
        p.take(50_000.0);
        assert_eq!(p.remaining(50_000.0), Some(2));
    }

    #[test]
    fn a_limit_without_a_window_length_assumes_a_second() {
        let mut p = Pacer::default();
        p.learn(
            &Quota {
                remaining: 0,
                reset_ms: 300.0,
                limit: Some(1),
                window_ms: None,
            },
            0.0,
        );
        p.take(300.0);
        assert_eq!(p.wait(300.0), Some((SAME_WINDOW_MS, Why::Quota)));
        assert_eq!(p.admit(300.0, ANY, false), Admit::Booked(SAME_WINDOW_MS));
    }

    #[test]
    fn a_limit_of_zero_never_books() {
        let mut p = Pacer::default();
        p.learn(&limited(0, 1_000.0, 0, 1_000.0), 0.0);
        assert_eq!(p.admit(0.0, ANY, false), Admit::Wait(1_000.0, Why::Quota));
        assert_eq!(
            p.admit(1_000.0, ANY, false),
            Admit::Go,
            "forgotten at the reset"
        );
    }

    #[test]
    fn reports_of_one_window_keep_the_lower_remaining_and_earlier_reset() {
        let mut p = Pacer::default();
        p.learn(&quota(5, 1_000.0), 0.0);
        p.learn(&quota(7, 1_500.0), 100.0); // same window (within 1 s), later report says more
        assert_eq!(p.remaining(200.0), Some(5));
        p.learn(&quota(0, 900.0), 150.0);
        assert_eq!(p.wait(200.0), Some((800.0, Why::Quota)));
    }

    #[test]
    fn a_stale_report_is_ignored_and_a_later_window_replaces() {
        let mut p = Pacer::default();
        p.learn(&quota(0, 0.0), 0.0);
        assert_eq!(p.wait(0.0), None, "reset already past");
        p.learn(&quota(1, 1_000.0), 0.0);
        p.learn(&quota(9, 5_000.0), 10.0); // a new window
        assert_eq!(p.remaining(20.0), Some(9));
        p.learn(&quota(10, 100.0), 20.0); // an earlier reset, more left: an older report, ours kept
        assert_eq!(p.remaining(30.0), Some(9));
        p.learn(&quota(0, 100.0), 20.0); // an earlier reset, less left: the careful answer wins
        assert_eq!(p.wait(30.0), Some((90.0, Why::Quota)));
    }

    #[test]
    fn a_later_window_goes_first_to_the_sends_booked() {
        let mut p = Pacer::default();
        p.learn(&limited(0, 1_000.0, 10, 1_000.0), 0.0);
        for _ in 0..4 {
            p.admit(0.0, ANY, false);
        }
        // A report of a window later than ours (the server's windows are longer).
        p.learn(&limited(6, 3_000.0, 10, 1_000.0), 500.0);
        assert_eq!(p.remaining(500.0), Some(2));
    }

    #[test]
    fn a_booking_not_used_is_given_back() {
        let mut p = Pacer::default();
        p.learn(&limited(0, 1_000.0, 2, 1_000.0), 0.0);
        assert_eq!(p.admit(0.0, ANY, false), Admit::Booked(1_000.0));
        assert_eq!(p.admit(0.0, ANY, false), Admit::Booked(1_000.0));
        // The first caller aborts before its slot: a newcomer gets it.
        p.unbook(1_000.0);
        assert_eq!(p.admit(10.0, ANY, false), Admit::Booked(990.0));
        // In its window, a booked send refused by the breaker gives its request back.
        assert_eq!(p.admit(1_000.0, ANY, false), Admit::Booked(1_000.0));
        p.unbook(1_000.0);
        assert_eq!(p.admit(1_001.0, ANY, false), Admit::Go);
    }

    #[test]
    fn a_report_of_an_earlier_reset_with_less_left_wins_over_an_assumed_window() {
        let mut p = Pacer::default();
        p.learn(&limited(0, 5_000.0, 5, 10_000.0), 0.0);
        // The pacer assumes the next window is [5 000, 15 000) and lets sends go at 11 000...
        assert_eq!(p.admit(11_000.0, ANY, false), Admit::Go);
        p.take(11_000.0);
        // ...but the server's window runs to 16 000 and is spent.
        p.learn(&limited(0, 5_000.0, 5, 10_000.0), 11_000.0);
        assert_eq!(
            p.wait(11_000.0),
            Some((4_000.0, Why::Quota)),
            "15 000 assumed, server's 16 000 later: ours kept"
        );
        // A report whose reset comes before the assumed one, with less left, wins.
        let mut q = Pacer::default();
        q.learn(&limited(3, 5_000.0, 5, 10_000.0), 0.0);
        q.learn(&limited(0, 2_000.0, 5, 10_000.0), 10.0);
        assert_eq!(q.wait(10.0), Some((2_000.0, Why::Quota)));
    }

    #[test]
    fn a_hold_delays_every_send_until_it_ends() {
        let mut p = Pacer::default();
        p.hold(2_000.0);
        p.hold(1_000.0); // a shorter hold does not shorten it
        assert_eq!(
            p.admit(500.0, ANY, false),
            Admit::Wait(1_500.0, Why::RetryAfter)
        );
        assert_eq!(
            p.admit(500.0, 1_000.0, false),
            Admit::TooLong(1_500.0, Why::RetryAfter)
        );
        assert_eq!(p.admit(2_000.0, 0.0, false), Admit::Go);
        p.reset();
        assert_eq!(p, Pacer::default());
    }

    proptest! {
        /// However sends and reports of one window interleave, no more sends go out in it
        /// than the first report said were left (later reports may say more: a server
        /// does not count requests still on their way).
        #[test]
        fn never_more_sends_than_reported_left(
            ops in proptest::collection::vec((0u32..5, 0u32..500), 1..40),
            left in 0u32..10,
        ) {
            let reset = 10_000.0;
            let mut p = Pacer::default();
            p.learn(&quota(left, reset), 0.0);
            let (mut sent, mut now) = (0u32, 0.0);
            for (extra, dt) in ops {
                now += f64::from(dt);
                if now >= reset {
                    break;
                }
                if p.admit(now, f64::INFINITY, false) == Admit::Go {
                    p.take(now);
                    sent += 1;
                }
                p.learn(&quota(left.saturating_sub(sent) + extra, reset - now), now);
                prop_assert!(p.wait(now).is_none_or(|(ms, _)| ms.is_finite() && ms > 0.0));
            }
            prop_assert!(sent <= left);
        }

        /// With a known limit and window, booked and immediate sends together never put
        /// more than the limit into any window, and every booking lands on a window start.
        #[test]
        fn bookings_never_overfill_a_window(
            arrivals in proptest::collection::vec(0u32..300, 1..120),
            limit in 1u32..6,
        ) {
            let span = 1_000.0;
            let mut p = Pacer::default();
            p.learn(&limited(0, span, limit, span), 0.0);
            let mut per_window = std::collections::BTreeMap::<i64, u32>::new();
            let mut now = 0.0;
            for dt in arrivals {
                now += f64::from(dt);
                let at = match p.admit(now, f64::INFINITY, false) {
                    Admit::Go => {
                        p.take(now);
                        now
                    }
                    Admit::Booked(wait) => {
                        let at = now + wait;
                        prop_assert!((at / span).fract() == 0.0, "booked at {}", at);
                        at
                    }
                    other => return Err(TestCaseError::fail(format!("{other:?}"))),
                };
                *per_window.entry((at / span).floor() as i64).or_default() += 1;
            }
            for (window, n) in per_window {
                prop_assert!(n <= limit, "window {} got {} sends", window, n);
            }
        }
    }
}
