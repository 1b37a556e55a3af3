//! `throttle`: adaptive client-side throttling, how many requests per accepted one are sent
//! before the client refuses locally, over which window (see [`crate::throttle`]).

use crate::policy::reader::{Check, Rows};
use crate::policy::value::{Map, Value};

/// The `throttle` defaults, each written once ([`crate::policy::defaults`] holds them all).
pub mod defaults {
    /// Adaptive client-side throttling is off unless the policy sets `throttle`.
    pub const THROTTLE_ENABLED: bool = false;
    /// How many requests per accepted one are sent before refusing locally (JS `throttle.k`).
    pub const THROTTLE_K: f64 = 2.0;
    /// The trailing window the throttle counts over, in ms (JS `throttle.windowMs`).
    pub const THROTTLE_WINDOW_MS: u32 = 120_000;
}

/// Adaptive throttling settings.
#[derive(Clone, Debug, PartialEq)]
pub struct ThrottlePolicy {
    /// Requests sent per accepted one before the client refuses locally (at least 1).
    pub k: f64,
    /// The trailing window counted over, in ms.
    pub window_ms: u32,
}

impl Default for ThrottlePolicy {
    fn default() -> Self {
        ThrottlePolicy {
            k: defaults::THROTTLE_K,
            window_ms: defaults::THROTTLE_WINDOW_MS,
        }
    }
}

pub(in crate::policy) fn throttle_policy<R: Rows>(c: &mut Check<R>, map: &Map) -> ThrottlePolicy {
    let o = c.object(map, "throttle");
    let k = match o.get("k") {
        None => defaults::THROTTLE_K,
        Some(Value::Number(n)) if (1.0..=100.0).contains(n) => *n,
        Some(other) => {
            c.fail(
                "throttle.k".to_owned(),
                "a number in 1..=100",
                other,
                matches!(other, Value::Number(_)),
            );
            defaults::THROTTLE_K
        }
    };
    ThrottlePolicy {
        k,
        window_ms: c.int(&o, "windowMs"),
    }
}
