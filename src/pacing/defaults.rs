//! The `rateLimit` defaults, each written once ([`crate::policy::defaults`] holds them all),
//! in both builds (the lean one paces nothing: its stand-in policy cannot be made).

/// Rate-limit headers and origin-wide waits are honoured unless the policy says `rateLimit: false`.
pub const RATE_LIMIT_ENABLED: bool = true;
/// Longest a call waits for an origin's quota or `Retry-After` hold before it sends, in ms;
/// a longer wait rejects the call at once (JS `rateLimit.maxWaitMs`).
pub const RATE_LIMIT_MAX_WAIT_MS: u32 = 30_000;
