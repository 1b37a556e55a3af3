//! The outbox (policy `outbox`, Cargo feature `outbox`): a keyed write that ended without a
//! definite answer is kept, and delivered later with the same idempotency key, exactly once as
//! far as the server honours the key (draft-ietf-httpapi-idempotency-key-header).
//!
//! The rules, decided from facts alone (the shell stores, sends and listens; `rules.rs`):
//! - `keep`: which ends of a call are kept: no answer (network error, timeout), nothing
//!   sent (breaker open, bulkhead full, rate limit, throttling, deadline), or a transient
//!   status (408, 429, 5xx) the call's attempts, budget or deadline could not get past.
//!   An abort is the caller's decision, and a caller's bad argument is not the server's:
//!   neither is kept.
//! - `Replay::of`: what a replay's answer does to its entry: 2xx/3xx delivered; 409 (the
//!   server still processes the key), 408, 429 and 5xx wait for the next replay; any other
//!   4xx (422: the key was used with another payload) is a dead letter.
//! - The replay order is first in, first out per origin (by the first attempt's time, then
//!   id), and an entry that must wait holds back the later ones of its origin: that is data
//!   structure, not decision, and sorting is free in JS (std's sort is 4 KB of wasm), so
//!   `outbox-replay.js` orders the entries.
//! - `expired`: an entry older than `maxAgeMs` is a dead letter, never sent again (the
//!   server may have forgotten its key).
//! - `next_flush_ms`: when waiting entries are tried again: equal jitter over a window
//!   doubling from 1 s to 5 min, so the clients of a site that came back do not all
//!   replay in the same second.
//! - `keep_until`: how long keeping a call may take: until its deadline (a store that
//!   does not answer must not hold the call past it), and at least `KEEP_MIN_MS`.
//!
//! Everything of the outbox is in this folder:
//!
//! | concern | file |
//! | --- | --- |
//! | the rules above | `rules.rs` |
//! | its part of the policy: settings, defaults, schema rows, check | `section.rs` |
//! | what its events for `onEvent` carry of their own (the entry's id) | `events.rs` |
//! | the shell's part (wasm32): keeping a call, the replay, `client.outbox`, the events in JS | `shell.rs` |
//! | its TypeScript declarations (wasm32) | `types.rs` |
//! | the JS (joined into `js/joined/site.js` by scripts/join-js.mjs) | `outbox.js`, `outbox-store.js`, `outbox-replay.js` |
//! | what a build without `outbox` has instead: uninhabited and empty stand-ins | `off.rs` |
//!
//! The code around it names the same items in both builds; without the feature they are the
//! stand-ins of `off.rs` (no policy has an outbox, no client opens one), so that code is
//! typed, compiled, and gone from the lean wasm.

use crate::vocab::OutcomeKind;

/// Whether this build has the outbox (`Cargo.toml`'s feature `outbox`).
pub const BUILT: bool = cfg!(feature = "outbox");

/// How a call ended, as far as the outbox cares (the shell tells it so in both builds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// It resolved with a response of this status.
    Answered(u16),
    /// Its last attempt ended without a response, this way.
    Failed(OutcomeKind),
    /// Nothing was sent: the breaker was open.
    ShortCircuited,
    /// Nothing was sent: the bulkhead was full.
    BulkheadFull,
    /// Nothing was sent: the rate limit's wait was too long.
    RateLimited,
    /// Nothing was sent: throttled.
    Throttled,
    /// The deadline ran out before an attempt could start.
    Deadline,
    /// The caller aborted.
    Aborted,
}

#[cfg(feature = "outbox")]
mod events;
#[cfg(feature = "outbox")]
mod rules;
#[cfg(feature = "outbox")]
mod section;
#[cfg(all(feature = "outbox", target_arch = "wasm32"))]
mod shell;
#[cfg(target_arch = "wasm32")]
mod types;

#[cfg(feature = "outbox")]
pub use events::EntryId;
#[cfg(feature = "outbox")]
pub use rules::*;
#[cfg(feature = "outbox")]
pub(crate) use section::check;
#[cfg(feature = "outbox")]
pub use section::{CLIENT_ONLY, FIELDS, OutboxPolicy, defaults};
#[cfg(all(feature = "outbox", target_arch = "wasm32"))]
pub use shell::{Held, Host, Keepable, Outbox};

#[cfg(not(feature = "outbox"))]
mod off;
#[cfg(not(feature = "outbox"))]
pub use off::*;
