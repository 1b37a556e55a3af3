//! The shell's part of failover (wasm only): an attempt's request sent to an alternate origin
//! (`failover.js`: the same path, query, method, headers and body; the call's key header is
//! among the headers), and the TypeScript declarations of the `failover` option, merged into
//! `Policy` (the full build's, or the lean build's `false` only).

use wasm_bindgen::prelude::*;

#[cfg(feature = "failover")]
#[wasm_bindgen(module = "/js/joined/site.js")]
unsafe extern "C" {
    /// `input` (an absolute URL string, or a `Request`) sent to `origin` instead: a URL string
    /// for a string, else a `Request` or a promise of one (its body read first when `replay`).
    #[wasm_bindgen(js_name = failoverTo)]
    fn failover_to(input: &JsValue, origin: &str, replay: bool) -> JsValue;
}

/// What an attempt to the alternate `origin` sends instead of `input`: a URL string for the
/// fast path's string, a `Request` (or a promise of one) for a request; what it throws (a
/// URL the platform will not parse) is the attempt's local error.
#[cfg(feature = "failover")]
pub(crate) fn to_alternate(input: &JsValue, origin: &str, replay: bool) -> JsValue {
    failover_to(input, origin, replay)
}

/// Without `failover` no attempt goes to another origin: never called.
#[cfg(not(feature = "failover"))]
pub(crate) fn to_alternate(input: &JsValue, _origin: &str, _replay: bool) -> JsValue {
    input.clone()
}

/// The `failover` option (feature `failover`): merged into `Policy` in the builds that have it.
#[cfg(feature = "failover")]
#[wasm_bindgen(typescript_custom_section)]
const FAILOVER_TYPES: &str = r#"
export interface Policy {
  /**
   * Alternate origins by primary origin (up to 64 primaries, 1..=8 alternates each; origins are
   * scheme://host[:port]), e.g. `{ "https://api.example.com": ["https://api-eu.example.com"] }`.
   * A call to a listed origin whose breaker is open goes to the first alternate whose breaker is
   * not, and a retry after a retryable failure goes to the next one; each attempt counts against
   * the call's attempts, deadline and budget, and each origin keeps its own breaker, budget and
   * pacing. The path, query, method, headers, body and idempotency key are the same. A call's
   * lists lie over its client's, primary by primary; `false` turns failover off.
   * @default false (none)
   */
  failover?: false | Record<string, string[]>;
}
"#;

/// `failover` in a build without `failover`: `false` (none) only.
#[cfg(not(feature = "failover"))]
#[wasm_bindgen(typescript_custom_section)]
const NO_FAILOVER_TYPES: &str = r#"
export interface Policy {
  /** Not in this build: failover origins is in resilient-fetch/full. `false` (none) is accepted. */
  failover?: false;
}
"#;
