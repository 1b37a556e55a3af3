//! The wasm shell: JS options in, the global `fetch` out, JS errors back.
//! Compiled for `wasm32` only. Where each part lives:
//!
//! | part | file |
//! | --- | --- |
//! | JS globals (`Request`, `performance`), the error classes and the JS helpers | `bindings.rs`, `js/errors.js` |
//! | the caller's arguments, each attempt's send, coalescing, install(), CORS, onEvent calls | `js/arguments.js` |
//! | the caller's signal, the response's bounded body | `js/body.js` |
//! | `resilientFetch`, `ResilientClient`, the default client | `client.rs` |
//! | one call: request, key, signal, core loop, result | `call.rs` |
//! | one attempt over `fetch` with its `AbortController` and timer | `transport.rs` |
//! | awaiting an attempt's settlement without closures per await | `settle.rs` |
//! | the caller's `AbortSignal` | `abort.rs` |
//! | clock, randomness, sleep for the core | `env.rs` |
//! | origin health shared with peers (`share`) over a `BroadcastChannel`, or a Durable Object in Workers | `share.rs`, `js/site.js`, `pkg-template/edge.js` |
//! | the outbox (`outbox`): keeping a call, the replay, `client.outbox` | `outbox.rs`, `js/site.js` |
//! | policy objects into the core's input | `options.rs` |
//! | events to `onEvent`, and `stats()`, as JS objects (serde-wasm-bindgen) | `events.rs` |
//! | TypeScript declarations | `types.rs` |

/// The allocator: talc's wasm build, smaller than std's dlmalloc in the shipped wasm
/// (it grows the linear memory as dlmalloc does; nothing is ever given back, as with it).
#[global_allocator]
// SAFETY: the wasm module is single-threaded, which is what TalckWasm requires.
static ALLOCATOR: talc::TalckWasm = unsafe { talc::TalckWasm::new_global() };

mod abort;
mod bindings;
mod call;
mod client;
mod env;
mod events;
mod options;
mod outbox;
mod settle;
mod share;
mod transport;
mod types;

pub use client::{ResilientClient, memory_bytes, resilient_fetch};
pub use types::{FetchInit, FetchInput, PolicyArg};
