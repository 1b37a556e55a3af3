//! What a capability compiled out leaves to the code around it (the lean build, `Cargo.toml`'s
//! features): its types that cross into the mission's code, as uninhabited stand-ins. A value
//! of one cannot exist, so `Option<Ticket>` is always `None` and the code that would handle
//! one is typed, compiled, and gone from the wasm. With the capability in, they are its own.

/// A value no build can make: the type of what an absent capability would have given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Never {}

/// A send booked by the origin's pacing, and what an answer's rate-limit headers say: the
/// folder's own (uninhabited without `pacing`).
pub use crate::pacing::{Quota, Ticket};

/// The notes an attempt's end has for the peers ([`crate::share`]).
#[cfg(feature = "share")]
pub type Notes = [Option<crate::share::Note>; 2];
/// The notes an attempt's end has for the peers: none without `share`.
#[cfg(not(feature = "share"))]
pub type Notes = [Never; 0];
