//! Adaptive client-side throttling (the Cargo feature `throttle`), as Google's SRE book
//! describes it ("Handling Overload"): each client keeps, per origin and over a trailing
//! window, how many requests it wanted to send (`requests`, those it refused itself
//! included) and how many the origin accepted (`accepts`), and refuses a new request
//! locally with probability `max(0, (requests − k·accepts) / (requests + 1))`.
//!
//! While the origin accepts everything the probability is 0. As it rejects more, the client
//! sheds load before sending, so an overloaded backend spends less on requests it would
//! refuse anyway: with `k = 2` about two requests are sent per accepted one (one rejected
//! per accepted) however overloaded the origin is, and a few still go through to notice
//! the recovery. An attempt is accepted when it is not a
//! failure by the breaker's rule ([`crate::classify::judge`], or `breaker.isFailure`):
//! network errors, timeouts, 408, 429 and 5xx are not.
//!
//! Everything of the capability is in this folder:
//!
//! | file | what |
//! | --- | --- |
//! | `window.rs` | one origin's counts over the trailing window and the refusal's draw (`Throttle`) |
//! | `section.rs` | the policy's `throttle` section: `ThrottlePolicy`, its defaults, its schema rows, its check |
//! | `shell.rs` | the JS side (wasm32): the `ThrottledError` maker, the TypeScript declarations |
//! | `stage.rs` | its origin stage: refuses at the drawn probability, counts each judged end |
//! | `off.rs` | the build without the feature: the same names, standing for nothing |
//!
//! The module is compiled in every build. Without the feature the names the rest of the
//! crate uses are stand-ins (`off.rs`): [`ThrottlePolicy`] and [`Probability`]
//! are uninhabited, so `Policy::throttle` is always `None`, the `throttled` event and result
//! cannot be made, and the code that handles them is typed, compiled, and gone from the wasm.

/// The capability as the build's table names it ([`crate::policy::CAPABILITIES`]): its
/// top-level option, what it does (the lean build's error names it), and whether this
/// build has it.
pub const CAPABILITY: (&str, &str, bool) = (
    "throttle",
    "adaptive throttling",
    cfg!(feature = "throttle"),
);

/// The `throttle` defaults, each written once, in every build ([`crate::policy::defaults`] holds them all).
pub mod defaults {
    /// Adaptive client-side throttling is off unless the policy sets `throttle`.
    pub const THROTTLE_ENABLED: bool = false;
    /// How many requests per accepted one are sent before refusing locally (JS `throttle.k`).
    pub const THROTTLE_K: f64 = 2.0;
    /// The trailing window the throttle counts over, in ms (JS `throttle.windowMs`).
    pub const THROTTLE_WINDOW_MS: u32 = 120_000;
}

#[cfg(feature = "throttle")]
mod section;
#[cfg(feature = "throttle")]
mod window;
#[cfg(feature = "throttle")]
pub(crate) use section::throttle_policy;
#[cfg(feature = "throttle")]
pub use section::{FIELDS, ThrottlePolicy, default_policy};
#[cfg(feature = "throttle")]
pub use window::{BUCKETS, Throttle};

/// The probability a refusal was drawn against (`throttled` events).
#[cfg(feature = "throttle")]
pub type Probability = f64;

mod stage;

#[cfg(not(feature = "throttle"))]
mod off;
#[cfg(not(feature = "throttle"))]
pub use off::*;

#[cfg(target_arch = "wasm32")]
pub(crate) mod shell;

#[cfg(test)]
#[cfg(feature = "throttle")]
mod tests {
    use crate::events::Event;

    #[test]
    fn the_event_kind_is_the_js_name() {
        let event = Event::Throttled {
            origin: "o",
            probability: 0.5,
        };
        assert_eq!(event.kind(), "throttled");
    }
}
