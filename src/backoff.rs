//! Backoff: how long to wait before a retry.
//!
//! The window grows as `base · 2^retry`, capped at `max`; the jitter decides where in the
//! window the wait falls. Full jitter is the default: Brooker's comparison (AWS, "Exponential
//! Backoff And Jitter", 2015) found it spreads competing clients best, for the least work.
//!
//! Pure functions: the random number comes in as a parameter, so tests pin it.

/// Where in the backoff window a wait falls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Jitter {
    /// Uniform in `[0, window)`.
    Full,
    /// `window/2` plus uniform in `[0, window/2)`.
    Equal,
    /// Uniform in `[base, previous·3)`, capped at `max`.
    Decorrelated,
    /// Exactly the window.
    None,
}

impl Jitter {
    /// Every mode, in the order of [`Jitter::NAMES`].
    pub const ALL: [Jitter; 4] = [
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
        Jitter::None,
    ];
    /// The JS names, written once.
    pub const NAMES: [&'static str; 4] = ["full", "equal", "decorrelated", "none"];

    /// The JS name (`"full"`, `"equal"`, `"decorrelated"`, `"none"`).
    pub fn as_str(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// The backoff window of retry number `retry` (0 for the first retry): `min(max, base·2^retry)`,
/// for non-negative `base` and `max`. Large `retry` values saturate at `max`.
pub fn window(retry: u32, base: f64, max: f64) -> f64 {
    // 2^1023 is the largest finite power of two: the product saturates to infinity, never NaN.
    let scale = 2f64.powi(retry.min(1023) as i32);
    (base * scale).min(max)
}

/// The wait before retry number `retry` (0 for the first), in ms. `previous` is the last wait
/// (`base` before the first retry; decorrelated jitter only) and `random` is uniform in `[0, 1)`
/// (anything else counts as 0).
pub fn delay(jitter: Jitter, retry: u32, base: f64, max: f64, previous: f64, random: f64) -> f64 {
    let r = if (0.0..1.0).contains(&random) {
        random
    } else {
        0.0
    };
    match jitter {
        Jitter::Full => window(retry, base, max) * r,
        Jitter::Equal => {
            let w = window(retry, base, max);
            let half = w / 2.0;
            below(half + half * r, w, half)
        }
        Jitter::Decorrelated => {
            let high = (previous * 3.0).min(f64::MAX);
            if high <= base {
                base
            } else {
                below(base + (high - base) * r, high, base).min(max)
            }
        }
        Jitter::None => window(retry, base, max),
    }
}

/// `value` kept under `limit` (a sum can round up onto its bound), but not under `floor`.
fn below(value: f64, limit: f64, floor: f64) -> f64 {
    if value < limit {
        value
    } else {
        limit.next_down().max(floor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const ALMOST_ONE: f64 = 1.0 - f64::EPSILON;

    #[test]
    fn window_doubles_from_base_and_is_capped() {
        assert_eq!(window(0, 100.0, 10_000.0), 100.0);
        assert_eq!(window(1, 100.0, 10_000.0), 200.0);
        assert_eq!(window(6, 100.0, 10_000.0), 6_400.0);
        assert_eq!(window(7, 100.0, 10_000.0), 10_000.0);
    }

    #[test]
    fn window_never_overflows() {
        assert_eq!(window(u32::MAX, 100.0, 10_000.0), 10_000.0);
        assert_eq!(window(2000, 1.0, 5.0), 5.0);
        assert_eq!(window(u32::MAX, 0.0, 10_000.0), 0.0);
        assert_eq!(window(u32::MAX, f64::MAX, f64::MAX), f64::MAX);
    }

    #[test]
    fn full_jitter_spans_zero_to_window() {
        assert_eq!(delay(Jitter::Full, 2, 100.0, 10_000.0, 0.0, 0.0), 0.0);
        assert_eq!(delay(Jitter::Full, 2, 100.0, 10_000.0, 0.0, 0.5), 200.0);
        assert!(delay(Jitter::Full, 2, 100.0, 10_000.0, 0.0, ALMOST_ONE) < 400.0);
    }

    #[test]
    fn equal_jitter_spans_half_to_window() {
        assert_eq!(delay(Jitter::Equal, 2, 100.0, 10_000.0, 0.0, 0.0), 200.0);
        assert_eq!(delay(Jitter::Equal, 2, 100.0, 10_000.0, 0.0, 0.5), 300.0);
        assert!(delay(Jitter::Equal, 2, 100.0, 10_000.0, 0.0, ALMOST_ONE) < 400.0);
    }

    #[test]
    fn decorrelated_jitter_spans_base_to_three_times_previous_capped() {
        assert_eq!(
            delay(Jitter::Decorrelated, 0, 100.0, 10_000.0, 100.0, 0.0),
            100.0
        );
        assert_eq!(
            delay(Jitter::Decorrelated, 0, 100.0, 10_000.0, 100.0, 0.5),
            200.0
        );
        assert_eq!(
            delay(Jitter::Decorrelated, 5, 100.0, 1_000.0, 900.0, 0.9),
            1_000.0
        );
    }

    #[test]
    fn decorrelated_with_a_small_previous_is_base() {
        assert_eq!(
            delay(Jitter::Decorrelated, 0, 100.0, 1_000.0, 30.0, 0.7),
            100.0
        );
        assert_eq!(
            delay(Jitter::Decorrelated, 0, 100.0, 1_000.0, 0.0, 0.7),
            100.0
        );
    }

    #[test]
    fn rounding_never_reaches_the_top_of_a_half_open_window() {
        // 1.5 + 1.5·(1 − 2⁻⁵³) rounds to 3.0 (a tie, to even) without the guard.
        let r = 1.0 - f64::EPSILON / 2.0;
        assert!(delay(Jitter::Equal, 0, 3.0, 3.0, 0.0, r) < 3.0);
        assert!(delay(Jitter::Decorrelated, 0, 1.5, 10.0, 1.0, r) < 3.0);
    }

    #[test]
    fn no_jitter_is_the_window() {
        assert_eq!(delay(Jitter::None, 3, 100.0, 10_000.0, 0.0, 0.3), 800.0);
    }

    #[test]
    fn random_outside_unit_interval_counts_as_zero() {
        for r in [1.0, -0.5, f64::NAN, 7.0] {
            assert_eq!(delay(Jitter::Full, 3, 100.0, 10_000.0, 0.0, r), 0.0);
        }
    }

    proptest! {
        #[test]
        fn every_delay_is_within_its_window(
            retry in any::<u32>(),
            base in 0u32..=100_000,
            extra in 0u32..=1_000_000,
            previous in 0u32..=2_000_000,
            random in 0.0f64..1.0,
        ) {
            let (base, max) = (f64::from(base), f64::from(base) + f64::from(extra));
            let w = window(retry, base, max);
            prop_assert!(w >= base.min(max) && w <= max);
            let full = delay(Jitter::Full, retry, base, max, 0.0, random);
            prop_assert!(full >= 0.0 && (full < w || w == 0.0));
            let equal = delay(Jitter::Equal, retry, base, max, 0.0, random);
            prop_assert!(equal >= w / 2.0 && (equal < w || w == 0.0));
            prop_assert_eq!(delay(Jitter::None, retry, base, max, 0.0, random), w);
            let previous = f64::from(previous);
            let dec = delay(Jitter::Decorrelated, retry, base, max, previous, random);
            prop_assert!(dec >= base && dec <= max);
            prop_assert!(dec < previous * 3.0 || dec == base);
        }
    }
}
