//! Hedged reads (Cargo feature `hedge`, JS option `hedge`): when a read's attempt has not
//! answered after the hedge delay, another is sent beside it (Dean and Barroso, "The Tail at
//! Scale"; Polly's hedging strategy; gRPC's A6). Everything of the capability is here:
//!
//! | concern | file |
//! | --- | --- |
//! | the origin's latency sample, the delay it gives, when a hedge may go | `latency.rs` |
//! | the policy section: `HedgePolicy`, its defaults, its schema rows, its check | `section.rs` |
//! | the hedged race, a call strategy the engine's loop runs for a hedged read | `race.rs` |
//! | the bulkhead slots hedges hold (youngest last; a call may take one back) | `slots.rs` |
//! | the TypeScript declarations of the option (the shell's part) | `shell.rs` |
//! | the lean build's stand-ins: the same names, uninhabited or always off | `off.rs` |
//!
//! The shared code (the policy, the engine, the events, the bulkhead) is written once against
//! the names below; without the feature they are [`off`]'s, and the optimizer removes what
//! would handle them.

#[cfg(feature = "hedge")]
mod latency;
#[cfg(not(feature = "hedge"))]
mod off;
#[cfg(feature = "hedge")]
mod race;
#[cfg(feature = "hedge")]
mod section;
#[cfg(target_arch = "wasm32")]
mod shell;
#[cfg(feature = "hedge")]
mod slots;
#[cfg(feature = "hedge")]
mod stage;
#[cfg(all(test, feature = "hedge"))]
mod tests;

#[cfg(feature = "hedge")]
pub use latency::{Latency, MIN_SAMPLES, SAMPLES, budget_allows, delay_ms, may_hedge};
#[cfg(not(feature = "hedge"))]
pub use off::*;
#[cfg(feature = "hedge")]
pub use race::Sent;
#[cfg(feature = "hedge")]
pub(crate) use race::send;
#[cfg(feature = "hedge")]
pub use section::{CAPABILITY, FIELDS, HedgeDelay, HedgePolicy, defaults};
#[cfg(feature = "hedge")]
pub(crate) use section::{initial, read};
#[cfg(feature = "hedge")]
pub use slots::{Held, Slot};
