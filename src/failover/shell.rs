//! The shell's part of failover (wasm only): an attempt's request sent to an alternate origin
//! (`failover.js`: the same path, query, method, headers and body; the call's key header is
//! among the headers), and the TypeScript declarations of the `failover` option, merged into
//! `Policy` (the full build's, or the lean build's `false` only).

use super::AlternateOrigins;
use crate::policy::Policy;
use wasm_bindgen::prelude::*;

#[cfg(feature = "failover")]
#[wasm_bindgen(module = "/js/joined/site.js")]
unsafe extern "C" {
    /// Reports to `settler` under (`slot`, `generation`) what an attempt to `origin` sends
    /// instead of `input` (an absolute URL string, or a `Request`; its body read first when
    /// `replay`).
    #[wasm_bindgen(js_name = failoverTo)]
    fn failover_to(
        input: &JsValue,
        origin: &str,
        replay: bool,
        settler: &JsValue,
        slot: u32,
        generation: u32,
    );
}

/// The URL origin of a call whose policy lists alternates for it (`failover`): where its
/// attempts may go is looked up there, whatever names the call (`breaker.key`). Of no size,
/// and never listed, without failover.
#[derive(Debug, Default)]
pub(crate) struct Listed(#[cfg(feature = "failover")] Option<String>);

impl Listed {
    /// `origin` (a call's URL's) if `policy` lists alternates for it.
    #[inline(always)]
    pub(crate) fn of(policy: &Policy, origin: &str) -> Self {
        #[cfg(feature = "failover")]
        {
            let listed = !super::alternates_of(policy, origin).is_empty();
            Listed(listed.then(|| origin.to_owned()))
        }
        #[cfg(not(feature = "failover"))]
        {
            let _ = (policy, origin);
            Listed()
        }
    }

    /// Whether the call has alternates.
    #[inline(always)]
    pub(crate) fn is_listed(&self) -> bool {
        #[cfg(feature = "failover")]
        return self.0.is_some();
        #[cfg(not(feature = "failover"))]
        false
    }

    /// The call's alternates in `policy` (none unless listed).
    #[inline(always)]
    pub(crate) fn alternates<'a>(&self, policy: &'a Policy) -> AlternateOrigins<'a> {
        #[cfg(feature = "failover")]
        if let Some(origin) = &self.0 {
            return super::alternates_of(policy, origin);
        }
        let _ = policy;
        AlternateOrigins::default()
    }
}

/// What an attempt to the alternate `to` sends instead of `input`: a URL string for the fast
/// path's string, a `Request` for a request (its body read first when `replay`, so that the
/// template it was cloned from stays whole); an error (a URL that does not parse, a body that
/// cannot be read) is the attempt's own, not the origin's. Made afresh for each such attempt:
/// it is the rare path, and what it makes is sent once.
#[cfg(feature = "failover")]
pub(crate) async fn at(
    input: &JsValue,
    to: super::Alternate<'_>,
    replay: bool,
) -> Result<Made, JsValue> {
    let settled = crate::wasm::settle::Settled::new();
    let (slot, generation) = settled.id();
    let settler = crate::wasm::settle::settler();
    failover_to(input, to.origin(), replay, &settler, slot, generation);
    settled.await.result.map(Made)
}

/// What an attempt to an alternate origin sends (see [`at`]); none can be made without
/// failover, so the shell's code that sends one is left out.
#[cfg(feature = "failover")]
pub(crate) struct Made(JsValue);

/// What an attempt to an alternate origin sends: none can be made in this build.
#[cfg(not(feature = "failover"))]
pub(crate) struct Made(std::convert::Infallible);

impl Made {
    /// The URL string or `Request` to send.
    pub(crate) fn value(&self) -> &JsValue {
        #[cfg(feature = "failover")]
        return &self.0;
        #[cfg(not(feature = "failover"))]
        match self.0 {}
    }
}

/// Without `failover` no attempt goes to another origin: no [`super::Alternate`] exists, so
/// this is never called. Not an `async fn`: its future is uninhabited too, so the attempt's own
/// future keeps no room, and the shell no code, for it.
#[cfg(not(feature = "failover"))]
pub(crate) fn at(_input: &JsValue, to: super::Alternate<'_>, _replay: bool) -> NoAlternate {
    to.absurd()
}

/// The request of an attempt to an alternate origin, never made in this build (no value).
#[cfg(not(feature = "failover"))]
pub(crate) struct NoAlternate(std::convert::Infallible);

#[cfg(not(feature = "failover"))]
impl std::future::Future for NoAlternate {
    type Output = Result<Made, JsValue>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        match self.0 {}
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
