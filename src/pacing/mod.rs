//! Pacing: when an origin may be sent to next, from what it said of its limits.
//!
//! Two things make an origin wait, both kept per origin so that every call of a client
//! honours them (not only the call that was told):
//! - a **hold**: a `Retry-After` on a 429 or 503 says "not before then" for the whole
//!   origin, so other calls do not send into the same refusal;
//! - a **quota**: the rate-limit headers ([`crate::rate_limit`]) say how many requests are
//!   left until the window resets. Each send takes one; with none left, calls wait for the
//!   reset. When the reset comes and the window's limit is known, a fresh window is assumed
//!   (its length, if known, else [`SAME_WINDOW_MS`] until a response says when it resets);
//!   without a known limit the quota is forgotten and the next response tells again.
//!
//! Calls that find a quota with a known limit spent are booked into the windows ahead, first
//! come first: each holds a [`Ticket`], its place in the origin's queue. A booked call waits
//! until the next reset, not until its own window, and asks again there: when a booking ahead
//! of it was given back (its call was aborted, ran out of time), it has moved up and goes in
//! the freed place.
//!
//! A reset is a server's claim, and a spent quota holds calls back only as long as a
//! `Retry-After` hold may: for at most `retry.maxRetryAfterMs` (the `cap`) after the answer
//! that told it. When that ends before the reset, the window after it is not assumed: one
//! call goes to ask (a *probe*, as a breaker's half-open call) while the others wait for its
//! answer, asking again every [`SAME_WINDOW_MS`]. What its headers say is taken as it is (a
//! server still limited answers with a fresh far reset, and the origin gets one request per
//! cap); an answer without them forgets the quota; a probe that got no answer lets the next
//! call ask. A stale or wrong reset, a year ahead say, then costs a cap's wait, not a day of
//! refusals. A window with requests left is not touched: it ends at its reset, as told.
//!
//! Responses to requests sent before the window reset can arrive after it; a report whose
//! reset is already past is stale and ignored. Two reports of the same window (resets
//! within [`SAME_WINDOW_MS`], or within half the window when its length is known: whole-second
//! deltas round) keep the lower remaining and the earlier reset; a later reset is a new
//! window and is taken as it is.
//!
//! The folder holds all of it: the state and its rules (`pacer.rs`), the rate-limit headers'
//! parser ([`rate_limit`]), the `rateLimit` section of the policy (`section.rs`: its schema rows,
//! defaults and check), the shell's part (`shell.rs`: the headers read from a response, the
//! TypeScript declarations). It is always compiled: with the `pacing` feature the real thing,
//! without it the stand-ins of `off.rs` (the same names, none of which can do anything), so that
//! the shared code is written once and the lean build's optimizer removes its pacing part.

pub mod defaults;
#[cfg(feature = "pacing")]
mod pacer;
#[cfg(feature = "pacing")]
pub mod rate_limit;
#[cfg(feature = "pacing")]
mod section;

#[cfg(feature = "pacing")]
pub use pacer::{Admit, Pacer, SAME_WINDOW_MS, Ticket, Why};
#[cfg(feature = "pacing")]
pub use rate_limit::Quota;
#[cfg(feature = "pacing")]
pub(crate) use section::read;
#[cfg(feature = "pacing")]
pub use section::{FIELDS, RateLimitPolicy, default_policy};

#[cfg(feature = "pacing")]
mod stage;

#[cfg(not(feature = "pacing"))]
mod off;
#[cfg(not(feature = "pacing"))]
pub use off::*;

#[cfg(target_arch = "wasm32")]
pub(crate) mod shell;

/// Pacing's row of the build's capability table ([`crate::policy::CAPABILITIES`]): its
/// option, what it does (the lean build's error names it), whether this build has it.
pub const CAPABILITY: (&str, &str, bool) = (
    "rateLimit",
    "pacing by rate-limit headers",
    cfg!(feature = "pacing"),
);

#[cfg(all(test, feature = "pacing"))]
mod tests;
