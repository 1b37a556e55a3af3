//! End-to-end calls through `engine::run` with a scripted transport and a fake clock, one
//! module per concern; the fakes and helpers they share are in `support/`.
//!
//! Virtual time: in `auto` mode a sleep jumps the clock to its end at once, so a call with
//! seconds of backoff runs in microseconds. In `manual` mode sleeps wait until the test
//! advances the clock; concurrent calls are then stepped by a small executor
//! (`support/pool.rs`: `LocalPool` cannot spawn without `futures-util`'s `LocalSpawnExt`,
//! which is not a dev-dependency), which polls a call only when its waker was used, so a
//! missed wake-up shows up as a call that never finishes.
//!
//! One test crate with modules, not a file per concern under `tests/`: each file there is a
//! crate of its own, which would compile and link `support/` again for every concern.
//!
//! It runs in both builds (`cargo test` is the lean one, `--features full` the full one): a
//! capability's own module, and a test that needs a capability, compile only with it.

#![cfg(not(target_arch = "wasm32"))]

mod support;

mod breaker;
mod bulkhead;
mod deadlines;
#[cfg(feature = "failover")]
mod failover;
#[cfg(feature = "hedge")]
mod hedging;
mod hooks;
mod offline;
#[cfg(feature = "pacing")]
mod pacing;
mod properties;
mod registry;
#[cfg(feature = "resume")]
mod resume;
mod retries;
// Read through the pacing events' helper (support's `paced_get`).
#[cfg(all(feature = "throttle", feature = "pacing"))]
mod throttle;
