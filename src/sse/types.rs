//! The TypeScript declarations of `events`, sections of the package's (`src/wasm/types.rs`):
//! its options (in a build without it, `events: false` only) and the stream `client.events()`
//! returns. tests/core_ts_defaults.rs reads this file with the others.

use wasm_bindgen::prelude::*;

/// `events` in a build without `sse`: `false` (off) only.
#[cfg(not(feature = "sse"))]
#[wasm_bindgen(typescript_custom_section)]
const NO_EVENTS_TYPES: &str = r#"
export interface Policy {
  /** Not in this build: server-sent events that reconnect is in resilient-fetch/full. `false` (off) is accepted. */
  events?: false;
}
"#;

/// The options of event streams (feature `sse`) and the stream's types.
#[cfg(feature = "sse")]
#[wasm_bindgen(typescript_custom_section)]
const EVENTS_TYPES: &str = r#"
export interface Policy {
  /**
   * How a stream of client.events() reconnects (plain calls ignore it): after a drop, an idle gap or
   * a status retry.retryOn lists, with full jitter over retry.baseDelayMs (the server's retry: field
   * when it sent one) up to retry.maxDelayMs, sending Last-Event-ID; false: never. @default {}
   */
  events?: boolean | EventsPolicy;
}

export interface EventsPolicy {
  /** A stream silent longer than this (ms; comments and heartbeats count) is reconnected (1000..=2147483647), or false: never. @default 45000 */
  idleMs?: number | false;
  /** Reconnects in a row that bring no event at most, then the stream ends (0..=1000). @default 10 */
  maxReconnects?: number;
}

/** One event of a stream: its data lines joined, its type, the last event ID, its retry field. */
export interface ServerSentEvent {
  data: string;
  /** The event's type ("message" unless an event: field named one). */
  event: string;
  /** The last event ID ("" for none): what Last-Event-ID carries on a reconnect. */
  id: string;
  /** The reconnection time this event's retry: field set, in ms. */
  retry?: number;
}

/** The event a stream dispatches for each event it reads (a MessageEvent where the platform has one). */
export interface ServerSentMessageEvent extends Event {
  readonly data: string;
  readonly lastEventId: string;
  readonly origin: string;
}

/**
 * A server-sent event stream (client.events(), resilientEvents()): EventSource's events (open, message,
 * named events as MessageEvents; error on each drop before a reconnect, and at the end), readyState and
 * close(); iterated, its events in order, ending at close() and throwing what ended the stream (an
 * EventStreamError with a code: "no-content", "status", "not-event-stream", "exhausted", "no-reconnect", "budget"; or the signal's
 * reason). Leaving a for await loop closes it.
 */
export interface EventStream extends EventTarget, AsyncIterable<ServerSentEvent> {
  readonly url: string;
  /** 0 connecting, 1 open, 2 closed. */
  readonly readyState: 0 | 1 | 2;
  readonly lastEventId: string;
  onopen: ((event: Event) => void) | null;
  onmessage: ((event: ServerSentMessageEvent) => void) | null;
  onerror: ((event: Event) => void) | null;
  /** Stops the stream at once: the connection is aborted, a wait for a reconnect ends. */
  close(): void;
  readonly CONNECTING: 0;
  readonly OPEN: 1;
  readonly CLOSED: 2;
}
"#;
