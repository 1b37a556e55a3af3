//! `rateLimit`: pacing by an origin's rate-limit headers and origin-wide `Retry-After` holds, and
//! the longest a call waits for them before it sends (see [`crate::pacing`]).

use crate::policy::reader::{Check, Rows};
use crate::policy::value::Map;

/// The `rateLimit` defaults, each written once ([`crate::policy::defaults`] holds them all).
pub mod defaults {
    /// Rate-limit headers and origin-wide waits are honoured unless the policy says `rateLimit: false`.
    pub const RATE_LIMIT_ENABLED: bool = true;
    /// Longest a call waits for an origin's quota or `Retry-After` hold before it sends, in ms;
    /// a longer wait rejects the call at once (JS `rateLimit.maxWaitMs`).
    pub const RATE_LIMIT_MAX_WAIT_MS: u32 = 30_000;
}

/// Pacing settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RateLimitPolicy {
    /// Longest a call waits for its origin before sending, in ms.
    pub max_wait_ms: u32,
}

impl Default for RateLimitPolicy {
    fn default() -> Self {
        RateLimitPolicy {
            max_wait_ms: defaults::RATE_LIMIT_MAX_WAIT_MS,
        }
    }
}

pub(in crate::policy) fn rate_limit_policy<R: Rows>(
    c: &mut Check<R>,
    map: &Map,
) -> RateLimitPolicy {
    let o = c.object(map, "rateLimit");
    RateLimitPolicy {
        max_wait_ms: c.int(&o, "maxWaitMs"),
    }
}
