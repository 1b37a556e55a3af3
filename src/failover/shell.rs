//! The shell's part of failover (wasm only): an attempt's request sent to an alternate origin
//! (`failover.js`: the same path, query, method, headers and body; the call's key header is
//! among the headers), and the TypeScript declarations of the `failover` option, merged into
//! `Policy` (the full build's, or the lean build's `false` only).

use wasm_bindgen::prelude::*;

#[cfg(feature = "failover")]
#[wasm_bindgen(module = "/js/joined/site.js")]
unsafe extern "C" {
    /// Reports to the settler under (`slot`, `generation`) what an attempt to `origin` sends
    /// instead of `input` (an absolute URL string, or a `Request`; its body read first when
    /// `replay`).
    #[wasm_bindgen(js_name = failoverTo)]
    fn failover_to(input: &JsValue, origin: &str, replay: bool, slot: u32, generation: u32);
}

/// What an attempt to the alternate `origin` sends instead of `input`: a URL string for the
/// fast path's string, a `Request` for a request (its body read first when `replay`, so that
/// it can be cloned per attempt); an error (a URL that does not parse, a body that cannot be
/// read) is the attempt's own, not the origin's.
pub(crate) async fn to_alternate(
    input: &JsValue,
    origin: &str,
    replay: bool,
) -> Result<JsValue, JsValue> {
    #[cfg(feature = "failover")]
    {
        let made = crate::wasm::settle::Settled::new();
        let (slot, generation) = made.id();
        failover_to(input, origin, replay, slot, generation);
        made.await
    }
    // Without `failover` no attempt goes to another origin: never called.
    #[cfg(not(feature = "failover"))]
    {
        let _ = (origin, replay);
        Ok(input.clone())
    }
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
