//! `rateLimit`: pacing by an origin's rate-limit headers and origin-wide `Retry-After` holds, and
//! the longest a call waits for them before it sends (see [`crate::pacing`]). Its rows of the
//! policy's schema ([`FIELDS`]), its defaults, its settings and their check.

use crate::policy::field::{Field, Kind, MAX_MS, Scope};
use crate::policy::reader::{Check, Object, Rows};
use crate::policy::value::Map;

use super::defaults;

/// Its rows of the policy's schema ([`crate::policy::schema::FIELDS`]), the object first.
pub const FIELDS: &[Field] = &[
    Field {
        path: "rateLimit",
        kind: Kind::Feature {
            on: defaults::RATE_LIMIT_ENABLED,
        },
        scope: Scope::Both,
        range_text: None,
    },
    Field {
        path: "rateLimit.maxWaitMs",
        kind: Kind::Int {
            min: 0,
            max: MAX_MS,
            default: defaults::RATE_LIMIT_MAX_WAIT_MS,
        },
        scope: Scope::Both,
        range_text: None,
    },
];

/// Pacing settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RateLimitPolicy {
    /// Longest a call waits for its origin before sending, in ms.
    pub max_wait_ms: u32,
}

impl RateLimitPolicy {
    /// Longest a call waits for its origin before sending, in ms.
    pub fn max_wait(&self) -> u32 {
        self.max_wait_ms
    }
}

impl Default for RateLimitPolicy {
    fn default() -> Self {
        RateLimitPolicy {
            max_wait_ms: defaults::RATE_LIMIT_MAX_WAIT_MS,
        }
    }
}

/// The settings a policy without `rateLimit` has: on, with the defaults.
pub fn default_policy() -> Option<RateLimitPolicy> {
    defaults::RATE_LIMIT_ENABLED.then(RateLimitPolicy::default)
}

/// The `rateLimit` of the policy object `o`, checked (`None`: off).
pub(crate) fn read<R: Rows>(c: &mut Check<R>, o: &Object) -> Option<RateLimitPolicy> {
    c.feature(o, "rateLimit").map(|m| rate_limit_policy(c, m))
}

fn rate_limit_policy<R: Rows>(c: &mut Check<R>, map: &Map) -> RateLimitPolicy {
    let o = c.object(map, "rateLimit");
    RateLimitPolicy {
        max_wait_ms: c.int(&o, "maxWaitMs"),
    }
}
