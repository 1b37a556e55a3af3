//! The wasm shell: JS options in, the global `fetch` out, JS errors back.
//! Compiled for `wasm32` only. Where each part lives:
//!
//! | part | file |
//! | --- | --- |
//! | JS globals (`Request`, `performance`), the error classes and the JS helpers | `bindings.rs`, `js/errors.js` |
//! | the codes that cross to JS, each a `#[repr]` enum; their JS table in `js/errors.js` (`scripts/codes.mjs`) | `codes.rs` |
//! | the caller's arguments brought in, two crossings whatever they hold | `arguments.rs` |
//! | the caller's arguments; each attempt's send; calls that send through themselves; install(); where keys may go (CORS); the caller's functions; the policy argument; coalescing | `js/request.js`, `js/send.js`, `js/chain.js`, `js/install.js`, `js/cors.js`, `js/hooks.js`, `js/policy-arg.js`, `src/coalesce/coalesce.js`, joined into `js/joined/arguments.js` (`scripts/join-js.mjs`) |
//! | the caller's signal, the response's bounded body | `js/body.js` |
//! | `resilientFetch`, `ResilientClient`, the default client | `client.rs` |
//! | what a client owns (made by `client.rs`, used by its calls) | `state.rs` |
//! | one call: request, signal, core loop | `call.rs` |
//! | the policy a call runs under | `resolve.rs` |
//! | a call's idempotency key | `key.rs` |
//! | a call's result as `fetch` gives it (response or error), its end as the outbox sees it | `ended.rs` |
//! | one attempt over `fetch` with its `AbortController` and timer | `transport.rs` |
//! | awaiting an attempt's settlement without closures per await (with its status and time); a call's promise, made and settled by JS | `settle.rs` |
//! | the caller's `AbortSignal` | `abort.rs` |
//! | clock, randomness, sleep for the core | `env.rs` |
//! | origin health shared with peers (`share`) over a `BroadcastChannel`, or a Durable Object in Workers | `src/share/shell.rs`, `src/share/share.js`, `pkg-template/full/edge.js` |
//! | the outbox (`outbox`): keeping a call, the replay, `client.outbox` | its folder: `src/outbox/shell.rs`, `outbox.js`, `outbox-store.js`, `outbox-replay.js` (with `src/share/share.js`, joined into `js/joined/site.js`) |
//! | policy objects into the core's input | `options.rs` |
//! | events to `onEvent`, and `stats()`, as JS objects (serde-wasm-bindgen) | `events.rs` |
//! | TypeScript declarations: the options; the events and stats; the outbox's | `types.rs`, `types/events.rs`; `src/outbox/types.rs` |
//! | a capability's own shell part (its error makers, its options' declarations, pacing's header reading) | its folder's `shell.rs` (`src/pacing/shell.rs`, `src/throttle/shell.rs`, ...) |

/// The allocator: talc's wasm build, smaller than std's dlmalloc in the shipped wasm
/// (it grows the linear memory as dlmalloc does; nothing is ever given back, as with it).
#[global_allocator]
// SAFETY: the wasm module is single-threaded, which is what TalckWasm requires.
static ALLOCATOR: talc::TalckWasm = unsafe { talc::TalckWasm::new_global() };

pub(crate) mod abort;
pub(crate) mod arguments;
pub(crate) mod bindings;
pub(crate) mod call;
pub(crate) mod client;
pub(crate) mod codes;
pub(crate) mod ended;
pub(crate) mod env;
pub(crate) mod events;
mod key;
mod options;
pub(crate) mod resolve;
pub(crate) mod settle;
pub(crate) mod state;
pub(crate) mod transport;
mod types;

pub use client::{ResilientClient, memory_bytes, resilient_fetch};
pub use types::{FetchInit, FetchInput, PolicyArg};
