//! `throttle`, the policy's section: how many requests per accepted one are sent before the
//! client refuses locally, over which window (see [`crate::throttle`]): its type, its
//! rows of the schema and its check ([`crate::policy`] gathers them; the defaults are the
//! folder's, in every build).

use crate::policy::field::{Field, Kind, MAX_MS, bounded, field, int};
use crate::policy::reader::{Check, Object, Rows};
use crate::policy::value::Value;

use super::defaults;

/// The section's rows of the schema ([`crate::policy::schema::FIELDS`]), the object first.
pub const FIELDS: &[Field] = &[
    field(
        "throttle",
        Kind::Feature {
            on: defaults::THROTTLE_ENABLED,
        },
    ),
    bounded("throttle.k", Kind::Factor, "1..=100"),
    int(
        "throttle.windowMs",
        1_000,
        MAX_MS,
        defaults::THROTTLE_WINDOW_MS,
    ),
];

/// Adaptive throttling settings.
#[derive(Clone, Copy, Debug, PartialEq)]
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

/// The throttle of a policy without `throttle`: off unless the default turns it on.
pub fn default_policy() -> Option<ThrottlePolicy> {
    defaults::THROTTLE_ENABLED.then(ThrottlePolicy::default)
}

/// The `throttle` field of the policy object `o`, checked: `None` when it is off.
pub(crate) fn throttle_policy<R: Rows>(c: &mut Check<R>, o: &Object) -> Option<ThrottlePolicy> {
    let map = c.feature(o, "throttle")?;
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
    Some(ThrottlePolicy {
        k,
        window_ms: c.int(&o, "windowMs"),
    })
}
