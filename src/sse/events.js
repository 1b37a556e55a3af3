// `client.events()` (policy `events`; the parser and the reconnect loop are in src/sse/, in Rust):
// the object JS gets, an EventTarget with EventSource's events, readyState and close(), that is
// also async-iterable, and the few reads of requests and responses the loop asks for.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files).
import { settleLater } from "../../js/send.js";

const SSE_CONNECTING = 0;
const SSE_OPEN = 1;
const SSE_CLOSED = 2;
/** What src/sse/shell.rs tells a stream (`eventsEmit`'s `kind`; 1: an event). */
const SSE_EMIT_OPEN = 0;
const SSE_EMIT_ERROR = 2;

// Set by EventStream's static block: they reach its private fields.
let eventsEmit;
let eventsEnd;

const SseTarget = typeof EventTarget === "function" ? EventTarget : class {};

// Whether the platform's dispatchEvent calls an `on<type>` property itself (workerd's does).
let sseCallsOn;
function sseDispatchCallsOn() {
  if (sseCallsOn === undefined) {
    const probe = new SseTarget();
    sseCallsOn = false;
    probe.onprobe = () => { sseCallsOn = true; };
    probe.dispatchEvent(new Event("probe"));
  }
  return sseCallsOn;
}

/** A DOM event of `type`, with a MessageEvent's fields for an event of the stream. */
function sseEvent(type, fields) {
  if (fields && typeof MessageEvent === "function") return new MessageEvent(type, fields);
  const event = new Event(type);
  if (fields) for (const [k, v] of Object.entries(fields)) Object.defineProperty(event, k, { value: v });
  return event;
}

/**
 * An event stream (`client.events()`, `resilientEvents()`): EventSource's events (`open`,
 * `message`, named events, `error` on each drop before a reconnect and at the end), `readyState`,
 * `close()`; iterated, `{ data, event, id, retry }` in order, ending at `close()` and throwing the
 * error that ended the stream. An iterator sees the events from its creation on; leaving a
 * `for await` loop closes the stream.
 */
class EventStream extends SseTarget {
  #stop;
  #iterators = new Set();
  #error;
  #origin;
  // Listeners added per event type: an event nobody listens to costs no DOM event.
  #listening = new Map();
  constructor(url, stop) {
    super();
    this.url = url;
    this.#origin = sseOrigin(url);
    this.readyState = SSE_CONNECTING;
    this.lastEventId = "";
    this.onopen = this.onmessage = this.onerror = null;
    this.#stop = stop;
  }

  /** Stops the stream at once: the connection is aborted, a wait for a reconnect ends. */
  close() {
    if (this.readyState === SSE_CLOSED) return;
    this.#stop.abort();
    eventsEnd(this, undefined);
  }

  addEventListener(type, listener, options) {
    this.#listening.set(type, (this.#listening.get(type) ?? 0) + 1);
    super.addEventListener(type, listener, options);
  }

  /** Dispatches `type` (with `fields`, a MessageEvent's) if anyone listens: a listener or on<type>. */
  #dispatch(type, fields) {
    const handler = ["open", "message", "error"].includes(type) ? this[`on${type}`] : null;
    if (typeof handler !== "function" && !this.#listening.get(type)) return;
    const event = sseEvent(type, fields);
    if (typeof handler === "function" && !sseDispatchCallsOn()) {
      try { handler.call(this, event); } catch (e) { queueMicrotask(() => { throw e; }); }
    }
    this.dispatchEvent(event);
  }

  static {
    // An event's `type` undefined: "message"; its `id` undefined: the last event ID, unchanged.
    eventsEmit = (stream, kind, data, type = "message", id = stream.lastEventId, retry) => {
      if (stream.readyState === SSE_CLOSED) return;
      if (kind === SSE_EMIT_OPEN) {
        stream.readyState = SSE_OPEN;
        stream.#dispatch("open");
      } else if (kind === SSE_EMIT_ERROR) {
        stream.readyState = SSE_CONNECTING;
        stream.#dispatch("error");
      } else {
        stream.lastEventId = id;
        const item = { data, event: type, id, retry: retry < 0 ? undefined : retry };
        for (const it of stream.#iterators) it.push(item);
        stream.#dispatch(type, { data, lastEventId: id, origin: stream.#origin });
      }
    };
    eventsEnd = (stream, error) => {
      if (stream.readyState === SSE_CLOSED) return;
      stream.readyState = SSE_CLOSED;
      stream.#error = error;
      for (const it of stream.#iterators) it.end();
      if (error !== undefined) stream.#dispatch("error");
    };
  }

  [Symbol.asyncIterator]() {
    const queue = [];
    let waiting = null;
    let thrown = false;
    const it = {
      push: (item) => (waiting ? (waiting.resolve({ value: item, done: false }), (waiting = null)) : queue.push(item)),
      end: () => {
        if (!waiting) return;
        const w = waiting;
        waiting = null;
        this.#iterators.delete(it);
        settle(w.resolve, w.reject);
      },
    };
    const settle = (resolve, reject) => {
      if (this.#error !== undefined && !thrown) {
        thrown = true;
        reject(this.#error);
      } else resolve({ value: undefined, done: true });
    };
    if (this.readyState !== SSE_CLOSED) this.#iterators.add(it);
    return {
      next: () => new Promise((resolve, reject) => {
        if (queue.length) resolve({ value: queue.shift(), done: false });
        else if (this.readyState === SSE_CLOSED) settle(resolve, reject);
        else waiting = { resolve, reject };
      }),
      return: () => {
        this.#iterators.delete(it);
        queue.length = 0;
        this.close();
        return Promise.resolve({ value: undefined, done: true });
      },
      [Symbol.asyncIterator]() { return this; },
    };
  }
}
for (const [name, value] of Object.entries({ CONNECTING: SSE_CONNECTING, OPEN: SSE_OPEN, CLOSED: SSE_CLOSED })) {
  Object.defineProperty(EventStream, name, { value });
  Object.defineProperty(EventStream.prototype, name, { value });
}

function sseOrigin(url) {
  try { return new URL(url).origin; } catch { return ""; }
}

/** A new stream of `input` (a URL or a Request); `stop` (an AbortController) is what close() aborts. */
function eventsOpen(input, stop) {
  return new EventStream(typeof input === "object" && input !== null && "url" in input ? String(input.url) : String(input), stop);
}

/**
 * One connection's input, init and policy: a Request is cloned (its body is sent again at each
 * reconnect), the headers are the caller's with `Accept`, `Cache-Control: no-store` and
 * `Last-Event-ID` (undefined: none), the signal is the stream's; the policy is the caller's with
 * one attempt (the loop in src/sse/shell.rs is the retry) and no `bodyTimeoutMs` (the idle rule
 * is the stream's).
 */
function eventsConnect(input, init, policy, lastEventId, signal) {
  const request = typeof Request === "function" && input instanceof Request;
  const headers = new Headers(init?.headers ?? (request ? input.headers : undefined));
  headers.set("accept", "text/event-stream");
  headers.set("cache-control", "no-store");
  if (lastEventId == null) headers.delete("last-event-id");
  else headers.set("last-event-id", lastEventId);
  const retry = policy?.retry;
  const once = retry === false ? false : { ...(typeof retry === "object" ? retry : {}), maxAttempts: 1 };
  return [request ? input.clone() : input, { ...init, headers, signal }, { ...policy, retry: once, bodyTimeoutMs: false }];
}

/** A response's status, its Content-Type (null: none) and a reader of its body (null: none). */
function eventsHead(response) {
  return [response.status, response.headers.get("content-type"), response.body ? response.body.getReader() : null];
}

/** Reports the next chunk of `reader` (a Uint8Array, or undefined at the end) to the settler's `slot`. */
function eventsRead(reader, slot, generation) {
  settleLater(reader.read(), slot, generation, (r) => (r.done ? undefined : r.value));
}

/** Lets a reader go (idle, or stopped): its stream is cancelled, its errors ignored. */
function eventsCancel(reader) {
  reader.cancel().catch(() => {});
}

/** The error a stream ends with, from src/sse/reconnect.rs's `Ended` (status 0: none). */
function eventsError(code, message, status) {
  const error = new Error(message);
  error.name = "EventStreamError";
  error.code = code;
  if (status) error.status = status;
  return error;
}

/** What a connection's error means to the loop: the ms to wait at least before reconnecting (an open breaker's or a rate limit's `retryAfterMs`, else 0); -1: stopped. */
function eventsFailure(error) {
  if (error?.name === "AbortError") return -1;
  return typeof error?.retryAfterMs === "number" ? error.retryAfterMs : 0;
}

export { EventStream, eventsOpen, eventsEmit, eventsEnd, eventsConnect, eventsHead, eventsRead, eventsCancel, eventsError, eventsFailure };
