//! `events` (feature `sse`): server-sent events.
