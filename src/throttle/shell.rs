//! The JS side of throttling (wasm32): the `ThrottledError` a call the throttle refused
//! rejects with (the class is in js/errors.js, with the package's others), and the
//! TypeScript declarations of the `throttle` option, the lean build's (`false` only) or
//! the full one's.

use wasm_bindgen::prelude::*;

use super::Probability;

#[cfg(feature = "throttle")]
#[wasm_bindgen(module = "/js/errors.js")]
unsafe extern "C" {
    /// A `ThrottledError` for `origin`.
    #[wasm_bindgen(js_name = makeThrottledError)]
    fn make_throttled_error(origin: &str) -> JsValue;
}

/// The error a call the throttle refused rejects with, for `origin`.
#[cfg(feature = "throttle")]
pub fn throttled_error(_: Probability, origin: &str) -> JsValue {
    make_throttled_error(origin)
}

/// The error a call the throttle refused rejects with: none without throttling.
#[cfg(not(feature = "throttle"))]
#[inline(always)]
pub fn throttled_error(probability: Probability, _: &str) -> JsValue {
    match probability {}
}

/// `throttle` in a build without `throttle`: `false` (off) only.
#[cfg(not(feature = "throttle"))]
#[wasm_bindgen(typescript_custom_section)]
const NO_THROTTLE_TYPES: &str = r#"
export interface Policy {
  /** Not in this build: adaptive throttling is in resilient-fetch/full. `false` (off) is accepted. */
  throttle?: false;
}
"#;

/// The options of throttling (feature `throttle`): merged into `Policy` in the builds that have it.
#[cfg(feature = "throttle")]
#[wasm_bindgen(typescript_custom_section)]
const THROTTLE_TYPES: &str = r#"
export interface Policy {
  /**
   * Adaptive client-side throttling (Google SRE book, "Handling Overload"): per origin, refuse a
   * request locally (ThrottledError, nothing sent) with probability
   * max(0, (requests - k * accepts) / (requests + 1)) over the last windowMs. @default false (off)
   */
  throttle?: boolean | ThrottlePolicy;
}

export interface ThrottlePolicy {
  /** Requests sent per accepted one before refusing locally; lower sheds more (1..=100, fractions allowed). @default 2 */
  k?: number;
  /** The trailing window counted over, in ms (1000..=2147483647). @default 120000 */
  windowMs?: number;
}
"#;
