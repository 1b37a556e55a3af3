//! Pacing's part of the shell (wasm32 only): what a response's rate-limit headers say, read
//! into a [`Quota`] (one crossing to JS for them and the `Retry-After`, `limits_of`), and the
//! TypeScript declarations of `rateLimit`.

use super::Quota;
use wasm_bindgen::prelude::*;

/// What the rate-limit headers of a response say: `values` are `limits_of`'s, the
/// `Retry-After` first, then `RateLimit`, `RateLimit-Policy` and the split fields.
#[cfg(feature = "pacing")]
pub(crate) fn quota(values: &js_sys::Array) -> Option<Quota> {
    let [ratelimit, policy, remaining, reset, limit] =
        std::array::from_fn(|i| values.get(i as u32 + 1).as_string());
    let headers = super::rate_limit::Headers {
        ratelimit: ratelimit.as_deref(),
        policy: policy.as_deref(),
        remaining: remaining.as_deref(),
        reset: reset.as_deref(),
        limit: limit.as_deref(),
    };
    super::rate_limit::parse(&headers, js_sys::Date::now())
}

/// Nothing, without pacing (its headers are not read).
#[cfg(not(feature = "pacing"))]
#[inline(always)]
pub(crate) fn quota(_: &js_sys::Array) -> Option<Quota> {
    None
}

/// `rateLimit` in a build without `pacing`: `false` (off) only.
#[cfg(not(feature = "pacing"))]
#[wasm_bindgen(typescript_custom_section)]
const NO_PACING_TYPES: &str = r#"
export interface Policy {
  /** Not in this build: pacing by rate-limit headers is in resilient-fetch/full. `false` (off) is accepted. */
  rateLimit?: false;
}
"#;

/// The options of rate limits (feature `pacing`): merged into `Policy` in the builds that have it.
#[cfg(feature = "pacing")]
#[wasm_bindgen(typescript_custom_section)]
const PACING_TYPES: &str = r#"
export interface Policy {
  /**
   * Pacing by what origins say of their limits: the rate-limit headers (`RateLimit` and
   * `RateLimit-Policy` of the IETF draft, `RateLimit-Remaining`/`-Reset`, `X-RateLimit-*`) and a
   * `Retry-After` on a 429 or 503 hold the whole origin for every call of the client (either for at most
   * retry.maxRetryAfterMs; after a quota's capped wait one call asks first); a call waits
   * (within its deadline and maxWaitMs) or rejects at once with a RateLimitError without sending.
   * `false` turns it off. @default {} (on)
   */
  rateLimit?: boolean | RateLimitPolicy;
}

export interface RateLimitPolicy {
  /** Longest a call waits, in all, for its origin's quota or Retry-After hold, in ms; a longer wait rejects at once (0..=2147483647). @default 30000 */
  maxWaitMs?: number;
}
"#;
