//! `events` (the `sse` feature): server-sent events that reconnect as EventSource does, over
//! this package's fetch. The pure core: the WHATWG HTML event stream parser, fed byte chunks
//! split anywhere, and the reconnect rules as pure functions. The shell runs the reconnect
//! loop, its timers and aborts, each reconnect an attempt through breaker, budget and pacing.
//!
//! | concern | file |
//! | --- | --- |
//! | the event stream parser: lines, fields, events, the last event ID, `retry` | `parser.rs` |
//! | which answers open, end or retry a stream; the wait before reconnect k; `Last-Event-ID`; the idle rule | `reconnect.rs` |
//! | the policy section `events: true \| false \| { idleMs, maxReconnects }` | `section.rs` |
//!
//! Compiled only with the `sse` feature: the lean build holds nothing of it. The feature is
//! not called `events`: `crate::events` is the module of `onEvent`'s events.

#[cfg(feature = "sse")]
mod parser;
#[cfg(feature = "sse")]
mod reconnect;
#[cfg(feature = "sse")]
pub mod section;
#[cfg(all(test, feature = "sse"))]
mod tests;

#[cfg(feature = "sse")]
pub use parser::{Event, Item, Parser};
#[cfg(feature = "sse")]
pub use reconnect::{
    Answer, Ended, answer, idle_deadline_ms, is_event_stream, is_idle, last_event_id_header,
    may_reconnect, next_reconnect, reconnect_delay_ms,
};
#[cfg(feature = "sse")]
pub use section::{EventsPolicy, events_policy};
