//! `failover`: backup origins, tried when an origin's breaker is open or an attempt to it
//! fails (issue #41).
//!
//! A call to a listed origin (its primary) whose breaker is open goes to the first alternate
//! whose breaker is not, and a retry after a retryable failure goes to the next one; the path,
//! query, method, headers, body and `Idempotency-Key` stay the same. This folder is the pure
//! part: the policy section, the rule that picks each attempt's origin, and the rewriting of a
//! URL's origin; the engine asks them and sends.
//!
//! | concern | file |
//! | --- | --- |
//! | which origin each attempt goes to | `route.rs` |
//! | origins as text: checked, normalised; a URL given another origin | `url.rs` |
//! | the policy section `failover`: types, check | `section.rs` |
//!
//! Everything here is of the `failover` feature: the lean build compiles none of it.

#[cfg(feature = "failover")]
mod route;
#[cfg(feature = "failover")]
pub mod section;
#[cfg(feature = "failover")]
mod url;

#[cfg(feature = "failover")]
pub use route::Route;
#[cfg(feature = "failover")]
pub use section::{Alternates, FailoverPolicy, MAX_ALTERNATES, MAX_PRIMARIES};
#[cfg(feature = "failover")]
pub use url::{NotOrigin, origin, origin_of, with_origin};

#[cfg(all(test, feature = "failover"))]
mod tests;
