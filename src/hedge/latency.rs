//! What hedged reads are decided from: the origin's recent attempt latencies (a bounded
//! sample) and the delay they give, and when a hedge may go at all.
//!
//! - `delayMs: "auto"` is the origin's p95 over its last [`SAMPLES`] answered attempts,
//!   within `[minDelayMs, maxDelayMs]`; until [`MIN_SAMPLES`] are known it is `maxDelayMs`
//!   (a client that has not learnt an origin does not hedge it eagerly).
//! - A hedge is paid from the origin's retry budget, and none is sent while the budget is
//!   below half of its capacity (gRPC's retry throttling), so hedging cannot amplify an
//!   outage: a slow origin that is failing gets no extra load.

use super::section::{HedgeDelay, HedgePolicy};
use crate::vocab::Method;

/// Answered attempts the latency sample keeps per origin.
pub const SAMPLES: usize = 64;
/// Answered attempts needed before `"auto"` trusts the sample.
pub const MIN_SAMPLES: usize = 20;

/// An origin's recent attempt latencies: the last [`SAMPLES`] (empty, no memory, until the
/// origin is hedged).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Latency {
    samples: Vec<f32>,
    /// Where the next sample goes once the ring is full.
    next: usize,
}

impl Latency {
    /// Records an answered attempt's latency, in ms.
    pub fn record(&mut self, ms: f64) {
        let ms = ms.max(0.0) as f32;
        if self.samples.len() < SAMPLES {
            self.samples.push(ms);
        } else {
            self.samples[self.next] = ms;
            self.next = (self.next + 1) % SAMPLES;
        }
    }

    /// The 95th percentile of the sample (nearest rank), once it holds [`MIN_SAMPLES`]: at
    /// most the 4th largest of 64, so the largest few are kept in one pass (no sort).
    pub fn p95(&self) -> Option<f64> {
        let n = self.samples.len();
        if n < MIN_SAMPLES {
            return None;
        }
        // The nearest rank from the top: 1 is the largest.
        let from_top = n - ((n * 95).div_ceil(100) - 1);
        let mut top = [f32::NEG_INFINITY; TOP];
        for &ms in &self.samples {
            if ms > top[TOP - 1] {
                let mut i = TOP - 1;
                while i > 0 && top[i - 1] < ms {
                    top[i] = top[i - 1];
                    i -= 1;
                }
                top[i] = ms;
            }
        }
        Some(f64::from(top[from_top - 1]))
    }
}

/// The most samples above the p95 (of at most [`SAMPLES`]), plus one.
const TOP: usize = SAMPLES - (SAMPLES * 95).div_ceil(100) + 1;

/// The delay before a hedge, in ms, under `policy` for an origin of `latency`.
pub fn delay_ms(policy: &HedgePolicy, latency: &Latency) -> f64 {
    match policy.delay {
        HedgeDelay::Fixed(ms) => f64::from(ms),
        HedgeDelay::Auto => latency.p95().map_or(f64::from(policy.max_delay_ms), |p| {
            p.clamp(
                f64::from(policy.min_delay_ms),
                f64::from(policy.max_delay_ms),
            )
        }),
    }
}

/// Whether a budget with `tokens` of `capacity` may pay for a hedge: at least half full.
pub fn budget_allows(tokens: u32, capacity: u32) -> bool {
    u64::from(tokens) * 2 >= u64::from(capacity)
}

/// Whether a request may be hedged: a method [`Method::may_hedge`] allows, without a body.
pub fn may_hedge(method: &str, has_body: bool) -> bool {
    !has_body && Method(method).may_hedge()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn auto(min: u32, max: u32) -> HedgePolicy {
        HedgePolicy {
            delay: HedgeDelay::Auto,
            max_hedges: 1,
            min_delay_ms: min,
            max_delay_ms: max,
        }
    }

    #[test]
    fn auto_waits_for_a_sample_then_takes_the_p95_within_its_bounds() {
        let mut l = Latency::default();
        for _ in 0..MIN_SAMPLES - 1 {
            l.record(5.0);
        }
        assert_eq!(
            delay_ms(&auto(10, 2000), &l),
            2000.0,
            "not learnt yet: the longest delay"
        );
        l.record(5.0);
        assert_eq!(
            delay_ms(&auto(10, 2000), &l),
            10.0,
            "p95 5 ms, raised to minDelayMs"
        );
        assert_eq!(delay_ms(&auto(1, 2000), &l), 5.0);
        for _ in 0..SAMPLES {
            l.record(5000.0);
        }
        assert_eq!(
            delay_ms(&auto(1, 2000), &l),
            2000.0,
            "p95 5 s, capped at maxDelayMs"
        );
        let fixed = HedgePolicy {
            delay: HedgeDelay::Fixed(42),
            ..auto(10, 20)
        };
        assert_eq!(delay_ms(&fixed, &l), 42.0, "a fixed delay is not clamped");
    }

    #[test]
    fn p95_is_the_nearest_rank_of_the_last_samples_only() {
        let mut l = Latency::default();
        for ms in 1..=100 {
            l.record(f64::from(ms));
        }
        // The last 64: 37..=100; the 95th percentile by nearest rank: the 61st, 97.
        assert_eq!(l.p95(), Some(97.0));
        assert_eq!(l.samples.len(), SAMPLES, "bounded");
    }

    #[test]
    fn hedges_need_half_the_budget_and_a_bodiless_read() {
        assert!(budget_allows(250, 500) && !budget_allows(249, 500));
        assert!(may_hedge("GET", false) && may_hedge("head", false) && may_hedge("OPTIONS", false));
        assert!(
            !may_hedge("OPTIONS", true) && !may_hedge("POST", false) && !may_hedge("PUT", false)
        );
    }

    proptest! {
        #[test]
        fn p95_is_the_nearest_rank_of_the_sorted_sample(
            samples in proptest::collection::vec(0.0f64..1e6, 0..150),
        ) {
            let mut l = Latency::default();
            samples.iter().for_each(|&ms| l.record(ms));
            let mut kept: Vec<f32> = l.samples.clone();
            kept.sort_by(f32::total_cmp);
            let n = kept.len();
            let expected = (n >= MIN_SAMPLES).then(|| f64::from(kept[(n * 95).div_ceil(100) - 1]));
            prop_assert_eq!(l.p95(), expected);
        }

        #[test]
        fn the_auto_delay_stays_within_its_bounds(
            samples in proptest::collection::vec(0.0f64..1e7, 0..200),
            min in 0u32..5000, span in 0u32..5000,
        ) {
            let mut l = Latency::default();
            samples.iter().for_each(|&ms| l.record(ms));
            let p = auto(min, min + span);
            let d = delay_ms(&p, &l);
            prop_assert!(d >= f64::from(min) && d <= f64::from(min + span));
            prop_assert!(l.samples.len() <= SAMPLES);
        }
    }
}
