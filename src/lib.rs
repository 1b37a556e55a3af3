//! resilient-fetch: a drop-in `fetch` that fails well.
//!
//! The crate is a functional **core** and a thin **shell**.
//!
//! The core is plain Rust with no JS types; time and randomness come in as
//! parameters, so every rule is tested natively with `cargo test`.
//! Where each concern lives:
//!
//! | concern | module |
//! | --- | --- |
//! | policy: one schema of every field, defaults, decoding, merging, validation | [`policy`] |
//! | the retry loop, `Env` and `Transport` traits, the caller's hooks; an attempt's end | [`engine`] (`mod.rs`, `attempt.rs`) |
//! | what follows an attempt, decided from facts alone | [`engine::decide()`] (`engine/decide.rs`) |
//! | outcome classification, method safety | [`classify`] |
//! | backoff windows and jitter | [`backoff`] |
//! | `Retry-After` parsing (seconds, HTTP dates) | [`retry_after`] |
//! | per-origin pacing (`pacing`): quota left, origin-wide waits; the rate-limit headers (`RateLimit`, `RateLimit-Policy`, `X-RateLimit-*`) parsing; `rateLimit` | [`pacing`] (`pacer.rs`, [`pacing::rate_limit`], `section.rs`, `shell.rs`) |
//! | adaptive client-side throttling (SRE book) | [`throttle`] |
//! | hedged reads (`hedge`): latency sample, delay, when one may go, the hedged race, its policy section, the slots hedges hold; the lean build's stand-ins | [`hedge`] (a folder) |
//! | coalesced reads (`coalesce`): its policy section, its shell part, its JS; the lean build's stand-ins | [`coalesce`] |
//! | circuit breaker state machine | [`breaker`] |
//! | retry budget (token bucket) | [`budget`] |
//! | bulkhead (concurrency limit, FIFO queue, the slots hedges may hold and give up) | [`bulkhead`] |
//! | one origin's state and counters; its stages, listed once in admission order | [`origin`] |
//! | the stage an origin's part answers admission and hears an end through (check, take, heard, reset) | [`stage`] |
//! | the origins kept, LRU bound, stats | [`registry`] |
//! | the registry's loans; updates that find it lent, queued until the loan ends | [`owner`] |
//! | origin health shared between clients (`share`): notes and what they do | [`share`] |
//! | idempotency keys, UUID v4 | [`idempotency`] |
//! | the outbox (`outbox`): which calls are kept, what a replay's answer does, order and timing; its policy, events, shell part and JS (a folder) | [`outbox`] |
//! | CSPRNG bytes drawn in batches | [`entropy`] |
//! | events for `onEvent` | [`events`] |
//! | failover origins (`failover`): where each attempt goes, the policy section, an attempt's request made for another origin (its shell part and JS); the lean build's stand-ins (a folder) | [`failover`] |
//! | stale answers (`stale`): which answers are kept, when one is served, the stores (its shell part and JS); the lean build's stand-ins (a folder) | [`stale`] |
//! | resumed downloads (`resume`): ranges and validators, a broken body asked for again as an attempt of its call (its shell part and JS); the lean build's stand-ins (a folder) | [`resume`] |
//! | server-sent events that reconnect (`events`, feature `sse`): the parser, the reconnect rules, its policy section, the loop and `client.events()` (shell), its JS; the lean build's stand-ins | [`sse`] (a folder) |
//! | the shared words: outcomes, verdicts, reasons, breaker states, method rules (a leaf) | [`vocab`] |
//!
//! The shell (`src/wasm/`, compiled for `wasm32` only) turns JS options into a
//! core policy, calls the global `fetch` (or the caller's), owns `AbortController`s
//! and timers, keys each call by the origin the platform's URL parser gives, and maps
//! outcomes back to `Response`s and JS errors.

pub mod backoff;
pub mod breaker;
pub mod budget;
pub mod bulkhead;
pub mod classify;
pub mod coalesce;
pub mod engine;
pub mod entropy;
pub mod events;
pub mod failover;
pub mod hedge;
pub mod idempotency;
pub mod origin;
pub mod outbox;
pub mod owner;
pub mod pacing;
pub mod policy;
pub mod registry;
pub mod resume;
pub mod retry_after;
pub mod share;
pub mod sse;
pub mod stage;
pub mod stale;
pub mod throttle;
pub mod vocab;

/// The rate-limit headers' parser, where it was before it moved into [`pacing`].
pub use pacing::rate_limit;

#[cfg(target_arch = "wasm32")]
mod wasm;
#[cfg(target_arch = "wasm32")]
pub use wasm::{FetchInit, FetchInput, PolicyArg, ResilientClient, memory_bytes, resilient_fetch};
