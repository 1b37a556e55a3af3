//! One origin's counts over the trailing window, and the draw that refuses a request
//! ([`Throttle`]; the rule is in the folder's docs, [`crate::throttle`]).
//!
//! The window is [`BUCKETS`] buckets of `windowMs / BUCKETS` each: bounded memory per
//! origin, and counts leave the window a bucket at a time.

use super::section::ThrottlePolicy;

/// Buckets per window.
pub const BUCKETS: usize = 10;

/// One origin's counts over the trailing window.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Throttle {
    /// `(requests, accepts)` per bucket; `head` is the current one.
    buckets: [(u32, u32); BUCKETS],
    head: usize,
    /// When the current bucket started (monotonic ms).
    head_start: f64,
}

impl Throttle {
    /// Moves the window to `now`: buckets that ended are emptied.
    fn advance(&mut self, now: f64, policy: &ThrottlePolicy) {
        let span = f64::from(policy.window_ms) / BUCKETS as f64;
        if now - self.head_start >= f64::from(policy.window_ms) {
            self.buckets = Default::default();
            self.head_start = now;
            return;
        }
        while now - self.head_start >= span {
            self.head = (self.head + 1) % BUCKETS;
            self.buckets[self.head] = (0, 0);
            self.head_start += span;
        }
    }

    /// `(requests, accepts)` over the window at `now`.
    pub fn counts(&mut self, now: f64, policy: &ThrottlePolicy) -> (u32, u32) {
        self.advance(now, policy);
        self.buckets.iter().fold((0, 0), |(r, a), (br, ba)| {
            (r.saturating_add(*br), a.saturating_add(*ba))
        })
    }

    /// The probability of refusing a request now.
    pub fn reject_probability(&mut self, now: f64, policy: &ThrottlePolicy) -> f64 {
        let (requests, accepts) = self.counts(now, policy);
        let (requests, accepts) = (f64::from(requests), f64::from(accepts));
        ((requests - policy.k * accepts) / (requests + 1.0)).max(0.0)
    }

    /// Decides one request at `now`, drawing `random` (in `[0, 1)`) only when the probability
    /// is above 0: the probability it was refused at, or `None` to send it. A refused request
    /// counts as a request (the formula needs it to recover as accepts return).
    pub fn refuse(
        &mut self,
        now: f64,
        random: impl FnOnce() -> f64,
        policy: &ThrottlePolicy,
    ) -> Option<f64> {
        let probability = self.reject_probability(now, policy);
        if probability == 0.0 || random() >= probability {
            return None;
        }
        self.record(now, false, policy);
        Some(probability)
    }

    /// Counts a request that was sent and whether the origin accepted it.
    pub fn record(&mut self, now: f64, accepted: bool, policy: &ThrottlePolicy) {
        self.advance(now, policy);
        let bucket = &mut self.buckets[self.head];
        bucket.0 = bucket.0.saturating_add(1);
        bucket.1 = bucket.1.saturating_add(u32::from(accepted));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const P: ThrottlePolicy = ThrottlePolicy {
        k: 2.0,
        window_ms: 1_000,
    };

    #[test]
    fn accepting_everything_never_refuses() {
        let mut t = Throttle::default();
        for i in 0..100 {
            t.record(f64::from(i), true, &P);
        }
        assert_eq!(t.reject_probability(100.0, &P), 0.0);
        assert_eq!(
            t.refuse(100.0, || panic!("no draw at probability 0"), &P),
            None
        );
    }

    #[test]
    fn the_probability_is_the_books_formula() {
        let mut t = Throttle::default();
        // 10 requests, 2 accepted: (10 - 2*2) / 11.
        for i in 0..10 {
            t.record(f64::from(i), i < 2, &P);
        }
        let p = t.reject_probability(10.0, &P);
        assert!((p - 6.0 / 11.0).abs() < 1e-12, "{p}");
        assert_eq!(t.refuse(10.0, || 0.5, &P), Some(p));
        // The refusal counted as a request: (11 - 4) / 12.
        assert!((t.reject_probability(10.0, &P) - 7.0 / 12.0).abs() < 1e-12);
        assert_eq!(t.refuse(10.0, || 0.99, &P), None);
    }

    #[test]
    fn counts_leave_the_window_bucket_by_bucket() {
        let mut t = Throttle::default();
        t.record(0.0, false, &P);
        t.record(450.0, false, &P);
        assert_eq!(t.counts(999.0, &P), (2, 0));
        assert_eq!(t.counts(1_000.0, &P), (1, 0), "the first bucket left");
        assert_eq!(t.counts(1_500.0, &P), (0, 0));
        t.record(9_000.0, true, &P);
        assert_eq!(
            t.counts(9_000.0, &P),
            (1, 1),
            "after a long gap the window starts anew"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        /// An origin that can take only a share of the offered load (it accepts up to
        /// `capacity` requests a second and refuses the rest): once the window has filled,
        /// the client sends about k requests per accepted one, however small the share.
        /// Without throttling it would send 1 / share per accepted one (up to 20).
        #[test]
        fn sends_per_accept_stays_near_k(share in 0.05f64..0.5, seed in 0u64..1000) {
            let policy = ThrottlePolicy { k: 2.0, window_ms: 10_000 };
            let mut t = Throttle::default();
            let mut x = seed;
            let mut next = || {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (x >> 11) as f64 / (1u64 << 53) as f64
            };
            // 200 requests a second offered, for 60 s; counted after the first window.
            let capacity = (200.0 * share).ceil() as u32;
            let (mut sent, mut accepted, mut this_second) = (0u32, 0u32, 0u32);
            for i in 0..12_000u32 {
                let now = f64::from(i * 5);
                if i % 200 == 0 {
                    this_second = 0;
                }
                let p = t.reject_probability(now, &policy);
                prop_assert!((0.0..1.0).contains(&p));
                if t.refuse(now, &mut next, &policy).is_some() {
                    continue;
                }
                let ok = this_second < capacity;
                this_second += u32::from(ok);
                t.record(now, ok, &policy);
                if now >= 10_000.0 {
                    sent += 1;
                    accepted += u32::from(ok);
                }
            }
            let per_accept = f64::from(sent) / f64::from(accepted.max(1));
            prop_assert!(per_accept < 2.0 * 1.2, "{per_accept} sent per accepted");
            prop_assert!(per_accept > 1.0);
        }
    }
}
