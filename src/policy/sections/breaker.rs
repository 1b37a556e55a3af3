//! `breaker`: when an origin's circuit opens (its mode, as given or from the fields given; the
//! failure rate; a window that can reach `minimumCalls`), how long it stays open, and its trials.

use crate::policy::field::MAX_MS;
use crate::policy::messages::{int_range, push_number, type_name};
use crate::policy::reader::{Check, Object, Rows};
use crate::policy::value::{Map, Value};
use crate::policy::{PolicyError, PolicyErrorKind};

/// Most calls a failure-rate window holds (count windows are at most 1000 by policy; a time
/// window keeps its last 1000 calls).
pub const MAX_WINDOW_CALLS: usize = 1000;

/// Longest key, in characters, that `breaker.key` may name a call's breaker by.
pub const MAX_KEY_CHARS: usize = 256;

/// What `breaker.key` returned, checked: a string of 1 to [`MAX_KEY_CHARS`] characters names
/// the call's breaker, budget and stats entry (as an origin does without it; the registry's
/// `maxOrigins` bounds how many are kept). Anything else is a `TypeError` (a string of the wrong
/// length a `RangeError`) naming the field and the range.
pub fn check_key(got: &Value) -> Result<(), PolicyError> {
    let (right_type, fits) = match got {
        Value::String(s) => (true, (1..=MAX_KEY_CHARS).contains(&s.chars().count())),
        _ => (false, false),
    };
    if fits {
        return Ok(());
    }
    let mut message = String::from("breaker.key must return a string of 1 to 256 characters (got ");
    match got {
        Value::String(s) => {
            let n = s.chars().count();
            push_number(&mut message, n as f64);
            message.push_str(if n == 1 {
                " character)"
            } else {
                " characters)"
            });
        }
        other => {
            message.push_str(type_name(other));
            message.push(')');
        }
    }
    Err(PolicyError {
        path: "breaker.key".to_owned(),
        message,
        kind: if right_type {
            PolicyErrorKind::Range
        } else {
            PolicyErrorKind::Type
        },
    })
}

/// The `breaker` defaults, each written once ([`crate::policy::defaults`] holds them all).
pub mod defaults {
    use super::{BreakerMode, WindowType};

    /// The circuit breaker is on unless the policy says `breaker: false`.
    pub const BREAKER_ENABLED: bool = true;
    /// When the breaker trips (JS `breaker.mode`), unless the policy names only the
    /// other mode's fields (`failureThreshold` alone means "consecutive").
    pub const BREAKER_MODE: BreakerMode = BreakerMode::FailureRate;
    /// Consecutive failures that open the breaker (JS `breaker.failureThreshold`).
    pub const FAILURE_THRESHOLD: u32 = 5;
    /// How long an open breaker rejects calls, in ms (JS `breaker.cooldownMs`).
    pub const COOLDOWN_MS: u32 = 5_000;
    /// Concurrent trial calls while half-open (JS `breaker.halfOpenMaxCalls`).
    pub const HALF_OPEN_MAX_CALLS: u32 = 1;
    /// Failure share of the window that opens the breaker (JS `breaker.failureRateThreshold`).
    pub const FAILURE_RATE_THRESHOLD: f64 = 0.5;
    /// Calls the window must hold before the rate counts (JS `breaker.minimumCalls`).
    pub const MINIMUM_CALLS: u32 = 10;
    /// What the failure-rate window spans (JS `breaker.windowType`).
    pub const WINDOW_TYPE: WindowType = WindowType::Time;
    /// Calls in a count window (JS `breaker.windowSize`).
    pub const WINDOW_SIZE: u32 = 20;
    /// Span of a time window in ms (JS `breaker.windowMs`).
    pub const WINDOW_MS: u32 = 30_000;
    /// Slow share of the window that opens the breaker, once `slowCallMs` is given (JS
    /// `breaker.slowCallRateThreshold`; resilience4j's default too).
    pub const SLOW_CALL_RATE_THRESHOLD: f64 = 1.0;
}

/// When a closed breaker opens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BreakerMode {
    /// After `failure_threshold` failures in a row.
    Consecutive,
    /// When the failure share of a window reaches `failure_rate_threshold`.
    FailureRate,
}

impl BreakerMode {
    /// Every mode, in the order of [`BreakerMode::NAMES`].
    pub const ALL: [BreakerMode; 2] = [BreakerMode::Consecutive, BreakerMode::FailureRate];
    /// The JS names, written once.
    pub const NAMES: [&'static str; 2] = ["consecutive", "failure-rate"];

    /// The JS name.
    pub fn as_str(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// What a failure-rate window spans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowType {
    /// The last `window_size` calls.
    Count,
    /// The calls of the last `window_ms` milliseconds.
    Time,
}

impl WindowType {
    /// Every kind, in the order of [`WindowType::NAMES`].
    pub const ALL: [WindowType; 2] = [WindowType::Count, WindowType::Time];
    /// The JS names, written once.
    pub const NAMES: [&'static str; 2] = ["count", "time"];

    /// The JS name.
    pub fn as_str(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// Circuit breaker settings.
#[derive(Clone, Debug, PartialEq)]
pub struct BreakerPolicy {
    /// When a closed breaker opens.
    pub trip: TripRule,
    /// How long it stays open, in ms.
    pub cooldown_ms: u32,
    /// The longest a reopening's cooldown grows to, in ms (at least `cooldown_ms`; equal: it
    /// never grows).
    pub max_cooldown_ms: u32,
    /// Concurrent trial calls while half-open.
    pub half_open_max_calls: u32,
}

impl BreakerPolicy {
    /// The slow-call rule's duration, when it is on (failure-rate mode, `slowCallMs` given).
    pub fn slow_call_ms(&self) -> Option<u32> {
        match self.trip {
            TripRule::FailureRate { slow, .. } => slow.map(|s| s.ms),
            TripRule::Consecutive { .. } => None,
        }
    }

    /// The mode its trip rule is.
    pub fn mode(&self) -> BreakerMode {
        match self.trip {
            TripRule::Consecutive { .. } => BreakerMode::Consecutive,
            TripRule::FailureRate { .. } => BreakerMode::FailureRate,
        }
    }
}

/// When a closed breaker opens: each rule with only its own settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TripRule {
    /// After this many failures in a row.
    Consecutive {
        /// Failures in a row that open it.
        failure_threshold: u32,
    },
    /// When the failure share of the window reaches `threshold`, once the window holds
    /// `minimum_calls` calls (at most what the window can hold).
    FailureRate {
        /// Failure share that opens it, in (0, 1].
        threshold: f64,
        /// Calls the window must hold before the rate counts.
        minimum_calls: u32,
        /// What the window spans.
        window: Window,
        /// The slow-call rule, when `slowCallMs` is given.
        slow: Option<SlowCalls>,
    },
}

/// The slow-call rule of a failure-rate breaker (resilience4j's): an attempt whose answer took
/// longer than `ms` is slow, and the breaker opens when the slow share of the window reaches
/// `threshold` (once it holds `minimum_calls`), whether the slow calls failed or not.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SlowCalls {
    /// Longer than this (ms) is slow.
    pub ms: u32,
    /// Slow share that opens it, in (0, 1].
    pub threshold: f64,
}

/// What a failure-rate window spans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    /// The last this many calls.
    Count(u32),
    /// The calls of the last this many ms (at most [`MAX_WINDOW_CALLS`]).
    Time(u32),
}

impl Default for BreakerPolicy {
    fn default() -> Self {
        let trip = match defaults::BREAKER_MODE {
            BreakerMode::Consecutive => TripRule::Consecutive {
                failure_threshold: defaults::FAILURE_THRESHOLD,
            },
            BreakerMode::FailureRate => TripRule::FailureRate {
                threshold: defaults::FAILURE_RATE_THRESHOLD,
                minimum_calls: defaults::MINIMUM_CALLS,
                window: match defaults::WINDOW_TYPE {
                    WindowType::Count => Window::Count(defaults::WINDOW_SIZE),
                    WindowType::Time => Window::Time(defaults::WINDOW_MS),
                },
                slow: None,
            },
        };
        BreakerPolicy {
            trip,
            cooldown_ms: defaults::COOLDOWN_MS,
            max_cooldown_ms: defaults::COOLDOWN_MS,
            half_open_max_calls: defaults::HALF_OPEN_MAX_CALLS,
        }
    }
}

pub(in crate::policy) fn breaker_policy<R: Rows>(c: &mut Check<R>, map: &Map) -> BreakerPolicy {
    let o = c.object(map, "breaker");
    let trip = match breaker_mode(c, &o) {
        BreakerMode::Consecutive => TripRule::Consecutive {
            failure_threshold: c.int(&o, "failureThreshold"),
        },
        BreakerMode::FailureRate => {
            let window_type = c
                .choice(&o, "windowType")
                .map_or(defaults::WINDOW_TYPE, |i| WindowType::ALL[i]);
            // Both spans are checked whichever is used, as every field given is.
            let (size, ms) = (c.int(&o, "windowSize"), c.int(&o, "windowMs"));
            let window = match window_type {
                WindowType::Count => Window::Count(size),
                WindowType::Time => Window::Time(ms),
            };
            let minimum_calls = c.int(&o, "minimumCalls");
            TripRule::FailureRate {
                threshold: rate_value(
                    c,
                    &o,
                    "failureRateThreshold",
                    defaults::FAILURE_RATE_THRESHOLD,
                ),
                minimum_calls: reachable_minimum_calls(c, minimum_calls, window),
                window,
                slow: slow_calls(c, &o),
            }
        }
    };
    let cooldown_ms = c.int(&o, "cooldownMs");
    let max_cooldown_ms = c.opt_int(&o, "maxCooldownMs").unwrap_or(cooldown_ms);
    if max_cooldown_ms < cooldown_ms {
        c.fail(
            "breaker.maxCooldownMs".to_owned(),
            &int_range("breaker.cooldownMs", cooldown_ms, "", MAX_MS),
            &Value::Number(max_cooldown_ms.into()),
            true,
        );
    }
    BreakerPolicy {
        trip,
        cooldown_ms,
        max_cooldown_ms,
        half_open_max_calls: c.int(&o, "halfOpenMaxCalls"),
    }
}

/// The slow-call rule: `slowCallMs` turns it on; its threshold without it is an error (it
/// would change nothing).
fn slow_calls<R: Rows>(c: &mut Check<R>, o: &Object) -> Option<SlowCalls> {
    let ms = c.opt_int(o, "slowCallMs");
    let threshold = rate_value(
        c,
        o,
        "slowCallRateThreshold",
        defaults::SLOW_CALL_RATE_THRESHOLD,
    );
    if let (None, Some(given)) = (o.get("slowCallMs"), o.get("slowCallRateThreshold")) {
        c.fail(
            "breaker.slowCallRateThreshold".to_owned(),
            "given with breaker.slowCallMs",
            given,
            false,
        );
    }
    ms.map(|ms| SlowCalls { ms, threshold })
}

/// The fields only the failure-rate mode reads.
const RATE_FIELDS: [&str; 7] = [
    "failureRateThreshold",
    "minimumCalls",
    "windowType",
    "windowSize",
    "windowMs",
    "slowCallMs",
    "slowCallRateThreshold",
];

/// The breaker's mode: as given; else the mode whose fields the policy names
/// (`failureThreshold` alone keeps its meaning: consecutive failures); else the default.
/// A field of the other mode is an error naming it, never silently ignored.
fn breaker_mode<R: Rows>(c: &mut Check<R>, o: &Object) -> BreakerMode {
    let given = c
        .choice(o, "mode")
        .map(|i| [BreakerMode::Consecutive, BreakerMode::FailureRate][i]);
    let threshold = o.get("failureThreshold");
    let rate_field = RATE_FIELDS.iter().find_map(|k| o.get(k).map(|v| (*k, v)));
    let mode = given.unwrap_or(match (threshold, rate_field) {
        (Some(_), _) => BreakerMode::Consecutive,
        (None, Some(_)) => BreakerMode::FailureRate,
        _ => defaults::BREAKER_MODE,
    });
    let stray = match mode {
        BreakerMode::Consecutive => rate_field,
        BreakerMode::FailureRate => threshold.map(|v| ("failureThreshold", v)),
    };
    if let Some((key, value)) = stray {
        let (expected, other) = match mode {
            BreakerMode::Consecutive => ("\"failure-rate\"", "\"consecutive\""),
            BreakerMode::FailureRate => ("\"consecutive\"", "\"failure-rate\""),
        };
        let mut message = String::from("a field of the ");
        message.push_str(expected);
        message.push_str(" mode only, absent when the breaker's mode is ");
        message.push_str(other);
        c.fail(o.path(key), &message, value, false);
    }
    mode
}

/// The window must be able to hold `minimumCalls` calls, or the breaker could never open:
/// a count window holds its size, a time window at most [`MAX_WINDOW_CALLS`].
fn reachable_minimum_calls<R: Rows>(c: &mut Check<R>, minimum_calls: u32, window: Window) -> u32 {
    let (most, expected) = match window {
        Window::Count(size) => (size as usize, int_range("", 1, "breaker.windowSize", size)),
        Window::Time(_) => {
            let mut expected = int_range("", 1, "", MAX_WINDOW_CALLS as u32);
            expected.push_str(" when breaker.windowType is \"time\"");
            (MAX_WINDOW_CALLS, expected)
        }
    };
    if minimum_calls as usize > most {
        c.fail(
            "breaker.minimumCalls".to_owned(),
            &expected,
            &Value::Number(minimum_calls.into()),
            true,
        );
    }
    minimum_calls
}

/// The rate field `key` of `o`: a number in (0, 1], `default` when absent.
fn rate_value<R: Rows>(c: &mut Check<R>, o: &Object, key: &str, default: f64) -> f64 {
    match o.get(key) {
        None => default,
        Some(Value::Number(n)) if *n > 0.0 && *n <= 1.0 => *n,
        Some(other) => {
            c.fail(
                o.path(key),
                "a number greater than 0 and at most 1",
                other,
                matches!(other, Value::Number(_)),
            );
            default
        }
    }
}

#[cfg(test)]
mod tests;
