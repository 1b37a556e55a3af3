//! `events` (the `sse` feature): server-sent events that reconnect as EventSource does, over
//! this package's fetch. The core: the WHATWG HTML event stream parser, fed byte chunks split
//! anywhere, and the reconnect rules as pure functions. The shell runs the reconnect loop, its
//! timers and aborts, each connection a call through the client (breaker, budget, pacing,
//! bulkhead, hooks, `onEvent`).
//!
//! | concern | file |
//! | --- | --- |
//! | the event stream parser: lines, fields, events, the last event ID, `retry` | `parser.rs` |
//! | which answers open, end or retry a stream; the wait before reconnect k; `Last-Event-ID`; the idle rule | `reconnect.rs` |
//! | the policy section `events: true \| false \| { idleMs, maxReconnects }`: defaults, schema rows, check | `section.rs` |
//! | the shell's part (wasm32): `client.events()`, `resilientEvents`, the reconnect loop; the TypeScript declarations | `shell.rs`, `types.rs` |
//! | the stream object JS gets (an `EventTarget`, async-iterable; joined into `js/joined/site.js`) | `events.js` |
//! | what a build without `sse` has instead: uninhabited and empty stand-ins | `off.rs` |
//!
//! The feature is not called `events`: `crate::events` is the module of `onEvent`'s events.

#[cfg(not(feature = "sse"))]
mod off;
#[cfg(feature = "sse")]
mod parser;
#[cfg(feature = "sse")]
mod reconnect;
#[cfg(feature = "sse")]
mod section;
#[cfg(all(feature = "sse", target_arch = "wasm32"))]
mod shell;
#[cfg(all(test, feature = "sse"))]
mod tests;
#[cfg(target_arch = "wasm32")]
mod types;

#[cfg(not(feature = "sse"))]
pub use off::*;
#[cfg(feature = "sse")]
pub use parser::{Event, Item, Parser};
#[cfg(feature = "sse")]
pub use reconnect::{
    Answer, Ended, answer, idle_deadline_ms, is_event_stream, is_idle, last_event_id_header,
    may_reconnect, next_reconnect, reconnect_delay_ms,
};
#[cfg(feature = "sse")]
pub use section::{CAPABILITY, EventsPolicy, FIELDS, defaults};
#[cfg(feature = "sse")]
pub(crate) use section::{initial, read};
