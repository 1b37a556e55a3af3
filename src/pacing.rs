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

/// One origin's pacing state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pacer {
    /// No send before this time (monotonic ms); 0 when there is no hold.
    not_before: f64,
    quota: Option<Window>,
}

impl Pacer {
    /// How long a send must wait at `now`, and why; `None` when it may go.
    pub fn wait(&self, now: f64) -> Option<(f64, Why)> {
        if self.not_before > now {
            return Some((self.not_before - now, Why::RetryAfter));
        }
        match self.quota {
            Some(w) if w.remaining == 0 && w.reset_at > now => Some((w.reset_at - now, Why::Quota)),
            _ => None,
        }
    }

    /// Takes one request of the quota for a send at `now` (call after [`Pacer::wait`]
    /// said it may go). Rolls the window over when its reset has come.
    pub fn take(&mut self, now: f64) {
        let Some(w) = &mut self.quota else {
            return;
        };
        if w.reset_at <= now {
            match w.limit {
                Some(limit) => {
                    // Without a known length the next reset is taken as a second away,
                    // until a response says when it is.
                    let span = w.window_ms.unwrap_or(SAME_WINDOW_MS);
                    // Windows missed entirely are skipped: the new one starts now at the latest.
                    w.reset_at = if w.reset_at + span > now {
                        w.reset_at + span
                    } else {
                        now + span
                    };
                    w.remaining = limit;
                }
                None => {
                    self.quota = None;
                    return;
                }
            }
        }
        w.remaining = w.remaining.saturating_sub(1);
    }

    /// Learns what a response at `now` said of the quota.
    pub fn learn(&mut self, quota: &Quota, now: f64) {
        let reset_at = now + quota.reset_ms;
        if reset_at <= now {
            return; // stale: that window is over
        }
        let fresh = Window {
            remaining: quota.remaining,
            reset_at,
            limit: quota.limit,
            window_ms: quota.window_ms,
        };
        self.quota = Some(match self.quota {
            Some(w) if w.reset_at > now => {
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
                    }
                } else if reset_at > w.reset_at {
                    fresh
                } else {
                    // An earlier reset than the window we know: an older report. Keep ours.
                    w
                }
            }
            _ => fresh,
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

    fn quota(remaining: u32, reset_ms: f64) -> Quota {
        Quota {
            remaining,
            reset_ms,
            limit: None,
            window_ms: None,
        }
    }

    #[test]
    fn a_fresh_origin_never_waits() {
        let mut p = Pacer::default();
        assert_eq!(p.wait(0.0), None);
        p.take(0.0);
        assert_eq!(p.remaining(0.0), None);
    }

    #[test]
    fn each_send_takes_one_and_none_left_waits_for_the_reset() {
        let mut p = Pacer::default();
        p.learn(&quota(2, 1_000.0), 0.0);
        assert_eq!(p.wait(10.0), None);
        p.take(10.0);
        assert_eq!(p.remaining(10.0), Some(1));
        p.take(20.0);
        assert_eq!(p.wait(30.0), Some((970.0, Why::Quota)));
        assert_eq!(p.wait(1_000.0), None);
    }

    #[test]
    fn without_a_limit_the_quota_is_forgotten_at_the_reset() {
        let mut p = Pacer::default();
        p.learn(&quota(0, 500.0), 0.0);
        assert!(p.wait(100.0).is_some());
        p.take(600.0);
        assert_eq!(p.remaining(600.0), None);
        assert_eq!(p.wait(600.0), None);
    }

    #[test]
    fn with_a_limit_and_window_the_next_window_is_assumed() {
        let mut p = Pacer::default();
        p.learn(
            &Quota {
                remaining: 0,
                reset_ms: 1_000.0,
                limit: Some(3),
                window_ms: Some(1_000.0),
            },
            0.0,
        );
        assert_eq!(p.wait(0.0), Some((1_000.0, Why::Quota)));
        for t in [1_000.0, 1_001.0, 1_002.0] {
            assert_eq!(p.wait(t), None);
            p.take(t);
        }
        assert_eq!(p.wait(1_003.0), Some((997.0, Why::Quota)));
        // Far later: the new window starts at the send, not at a window long gone.
        p.take(10_000.0);
        assert_eq!(p.remaining(10_000.0), Some(2));
        p.take(10_001.0);
        p.take(10_002.0);
        assert_eq!(p.wait(10_003.0), Some((997.0, Why::Quota)));
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
        p.learn(&quota(0, 100.0), 20.0); // older report, earlier reset: kept ours
        assert_eq!(p.remaining(30.0), Some(9));
    }

    #[test]
    fn a_hold_delays_every_send_until_it_ends() {
        let mut p = Pacer::default();
        p.hold(2_000.0);
        p.hold(1_000.0); // a shorter hold does not shorten it
        assert_eq!(p.wait(500.0), Some((1_500.0, Why::RetryAfter)));
        assert_eq!(p.wait(2_000.0), None);
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
                if p.wait(now).is_none() {
                    p.take(now);
                    sent += 1;
                }
                p.learn(&quota(left.saturating_sub(sent) + extra, reset - now), now);
                prop_assert!(p.wait(now).is_none_or(|(ms, _)| ms.is_finite() && ms > 0.0));
            }
            prop_assert!(sent <= left);
        }
    }
}
