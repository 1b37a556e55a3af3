//! Coalescing (Cargo feature and policy option `coalesce`): a GET or HEAD identical to one in
//! flight on the same client joins it instead of being sent again, and resolves with its own
//! copy of the response.
//!
//! Always compiled: with the feature, the real parts; without it (the lean build), `off.rs`'s
//! stand-ins of the same names, which the code around uses alike and the optimizer removes.
//!
//! | part | file |
//! | --- | --- |
//! | its policy section: default, type, schema row, check | `section.rs` |
//! | the shell's part (wasm32): a call's flight, joining it, the TypeScript declarations | `shell.rs` |
//! | what makes two calls the same request; joining a flight | `coalesce.js`, joined into `js/joined/arguments.js` (`scripts/join-js.mjs`) |
//! | the lean build's stand-ins | `off.rs` |

#[cfg(feature = "coalesce")]
mod section;
#[cfg(feature = "coalesce")]
pub use section::*;
#[cfg(all(feature = "coalesce", target_arch = "wasm32"))]
pub(crate) mod shell;

#[cfg(not(feature = "coalesce"))]
mod off;
#[cfg(not(feature = "coalesce"))]
pub use off::*;

/// The `coalesce` default, written once ([`crate::policy::defaults`] holds them all); in every
/// build (without the capability, off is all there is).
pub mod defaults {
    /// Identical GETs and HEADs in flight on one client are sent once (JS `coalesce`).
    pub const COALESCE: bool = false;
}

/// Its entry in [`crate::policy::CAPABILITIES`]: the option, what it does, whether this build
/// has it.
pub const CAPABILITY: (&str, &str, bool) =
    ("coalesce", "coalesced reads", cfg!(feature = "coalesce"));
