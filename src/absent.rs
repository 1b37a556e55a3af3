//! What a capability compiled out leaves to the code around it (the lean build, `Cargo.toml`'s
//! features): its types that cross into the mission's code, as uninhabited stand-ins. A value
//! of one cannot exist, so `Option<Ticket>` is always `None` and the code that would handle
//! one is typed, compiled, and gone from the wasm. With the capability in, they are its own.

/// A value no build can make: the type of what an absent capability would have given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Never {}

/// A send booked by the origin's pacing ([`crate::pacing`]).
#[cfg(feature = "pacing")]
pub use crate::pacing::Ticket;
/// A send booked by the origin's pacing: none without `pacing`.
#[cfg(not(feature = "pacing"))]
pub type Ticket = Never;

/// What an answer's rate-limit headers say ([`crate::rate_limit`]).
#[cfg(feature = "pacing")]
pub use crate::rate_limit::Quota;
/// What an answer's rate-limit headers say: nothing without `pacing`.
#[cfg(not(feature = "pacing"))]
pub type Quota = Never;

/// The notes an attempt's end has for the peers ([`crate::share`]).
#[cfg(feature = "share")]
pub type Notes = [Option<crate::share::Note>; 2];
/// The notes an attempt's end has for the peers: none without `share`.
#[cfg(not(feature = "share"))]
pub type Notes = [Never; 0];
