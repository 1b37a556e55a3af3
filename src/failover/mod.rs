//! `failover`: backup origins, tried when an origin's breaker is open or an attempt to it
//! fails (issue #41; Cargo feature `failover`, JS option `failover`).
//!
//! A call to a listed origin (its primary) whose breaker is open goes to the first alternate
//! whose breaker is not, and a retry after a retryable failure goes to the next one; the path,
//! query, method, headers, body and `Idempotency-Key` stay the same. Each attempt has its own
//! origin: the engine picks it ([`Route`]) and asks, records and tells that origin's registry
//! entry (breaker, budget, pacing, throttle); the call's bulkhead stays its primary's. A
//! strategy of the call, everything of it is here:
//!
//! | concern | file |
//! | --- | --- |
//! | which origin each attempt goes to | `route.rs` |
//! | origins as text: checked, normalised; a URL given another origin | `url.rs` |
//! | the policy section `failover`: types, schema row, check | `section.rs` |
//! | an attempt's request sent to another origin (the shell's part) | `shell.rs`, `failover.js` |
//! | the TypeScript declarations of the option | `shell.rs` |
//! | the lean build's stand-ins: a route of one origin, a policy that cannot be made | `off.rs` |
//!
//! The engine and the shell are written once against the names below; without the feature
//! they are `off.rs`'s, and a call's route is its one origin.

#[cfg(not(feature = "failover"))]
mod off;
#[cfg(feature = "failover")]
mod route;
#[cfg(feature = "failover")]
pub mod section;
#[cfg(target_arch = "wasm32")]
pub(crate) mod shell;
#[cfg(feature = "failover")]
mod url;

#[cfg(not(feature = "failover"))]
pub use off::*;
#[cfg(feature = "failover")]
pub use route::{Alternate, AlternateOrigins, At, Route};
#[cfg(feature = "failover")]
pub use section::{Alternates, CAPABILITY, FIELDS, FailoverPolicy, MAX_ALTERNATES, MAX_PRIMARIES};
#[cfg(feature = "failover")]
pub(crate) use section::{initial, read};
#[cfg(feature = "failover")]
pub use url::{NotOrigin, origin, origin_of, with_origin};

/// Whether this build has failover: without it no attempt goes to another origin, and the
/// shell's code for one is left out.
pub const BUILT: bool = cfg!(feature = "failover");

/// The alternates `policy` lists for a call to `origin` (the URL's origin, as the platform
/// serialises it): none when it lists none, or has no `failover`.
pub fn alternates_of<'a>(policy: &'a crate::policy::Policy, origin: &str) -> AlternateOrigins<'a> {
    match &policy.failover {
        Some(failover) => failover.alternates(origin),
        None => AlternateOrigins::default(),
    }
}

#[cfg(all(test, feature = "failover"))]
mod tests;
