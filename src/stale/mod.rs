//! `stale`: the last good answer served when the origin fails (RFC 5861 `stale-if-error`).
//!
//! A GET's (or HEAD's) answer that a store may keep is kept under its key; when a later call
//! for the same key fails (a network error, a timeout, the breaker open, throttled,
//! rate-limited, the budget spent, the deadline, or a retryable status after its retries), a
//! kept answer within its window is served instead, with an `Age`. The rules are plain Rust,
//! time a parameter; the shell's part (wasm32) keeps and serves by them, its JS does the I/O.
//!
//! | concern | file |
//! | --- | --- |
//! | `Cache-Control` directives, request and response | `cache_control.rs` |
//! | which answers are kept, which writes make them out of date; the key (method, URL, `Vary`) | `keep.rs` |
//! | a kept answer's age and window; whether it may be served for a failure | `serve.rs` |
//! | an in-memory store's rules: bounded LRU by entries and bytes (the shell's memory store is `stale.js`'s, a JS `Map` in the same order, holding the bytes where they are) | `lru.rs` |
//! | the policy section `stale`: types, defaults, rows, check | `section.rs` |
//! | the shell's part (wasm32): the store, keeping an answer, serving one | `shell.rs` |
//! | the JS (joined into `js/joined/site.js`): stores, the tee, the served response | `stale.js` |
//! | the TypeScript declarations of the option (wasm32) | `types.rs` |
//! | the lean build's stand-ins: the same names, uninhabited or off | `off.rs` |
//!
//! The shared code (the policy, the call) names the items below in both builds; without the
//! feature they are [`off`]'s, and the optimizer removes what would handle them.

#[cfg(feature = "stale")]
mod cache_control;
#[cfg(feature = "stale")]
mod keep;
#[cfg(feature = "stale")]
mod lru;
#[cfg(feature = "stale")]
pub mod section;
#[cfg(feature = "stale")]
mod serve;

#[cfg(feature = "stale")]
pub use cache_control::{CacheControl, MAX_DELTA_SECONDS};
#[cfg(feature = "stale")]
pub use keep::{
    Headers, KEPT_STATUSES, NotKept, Request, Response, base_key, field, invalidates, key, lines,
    may_keep, vary_names,
};
#[cfg(feature = "stale")]
pub use lru::{Lru, Put};
#[cfg(feature = "stale")]
pub use section::{CAPABILITY, CLIENT_ONLY, FIELDS, StalePolicy, defaults};
#[cfg(feature = "stale")]
pub(crate) use section::{initial, read};
#[cfg(all(feature = "stale", target_arch = "wasm32"))]
mod shell;
#[cfg(all(feature = "stale", target_arch = "wasm32"))]
pub use shell::{Held, Lookup, Store, serves};
#[cfg(not(feature = "stale"))]
mod off;
#[cfg(target_arch = "wasm32")]
mod types;
#[cfg(not(feature = "stale"))]
pub use off::*;
#[cfg(feature = "stale")]
pub use serve::{Failure, Kept, Refused, Served, Told, servable, window_ms};

#[cfg(all(test, feature = "stale"))]
mod tests;
