// The outbox (policy `outbox`; the rules are in src/outbox/rules.rs): keeping a call.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files).
import { callListener } from "../../js/hooks.js";
import { bounded, call, taken, takeBack, find, count, builtIn } from "./outbox-store.js";
import { outboxFlush, outboxList, outboxDiscard, outboxRetry } from "./outbox-replay.js";
import { makeQueuedError, JUDGED_EXPIRED, REPLAY_STATUS_UNSENT, TOLD_NEXT_REPLAY } from "../../js/errors.js";

// ---------------------------------------------------------------- the outbox
// Its rules are the core's (src/outbox/rules.rs), asked through `core` (made in src/outbox/shell.rs,
// which documents its codes): here a request is copied into an entry before its call settles,
// and entries are replayed first in, first out per origin, by one replayer per name (in this
// realm always, across the site's tabs and workers with Web Locks where there are), on
// `online` and on a timer that never keeps Node or Deno alive. Every change to a name's
// entries after they are kept (replay, retry, discard) runs in that same turn, so none
// undoes another. The built-in stores are IndexedDB in browsers and their workers, memory
// elsewhere.

/** Headers never written to a store: credentials are attached afresh at replay (`onReplay`). */
const NOT_STORED = ["authorization", "cookie", "proxy-authorization"];
/** How long a store may take to answer, in ms: a store that never answers must not hold the lock. */
const STORE_MS = 30_000;

/**
 * The outbox `name` of a client: `store` (undefined: the built-in one), the caller's
 * `onReplay`, and `core`: `judge(firstAttemptAt, status)`, `tell(kind, origin, id, n)` and
 * `send(request)`. A replay comes soon (what an earlier page or process left), on `online`,
 * and on the core's timer. `box.api` is what `client.outbox` is.
 */
function outboxOpen(name, store, onReplay, core) {
  // A store whose entries are replayed on another schedule (the Workers entry's: durableOutbox,
  // whose object replays, and that object's own store, replayed on its alarm) says so: the
  // outbox then starts no replay of its own, and uses the store (and `client.outbox`) it gives.
  const elsewhere = store?.[Symbol.for("resilient-fetch.outbox")]?.(name);
  const box = { name, store: elsewhere?.store ?? store ?? builtIn(name), onReplay, core, timer: undefined, closed: false,
    offline: () => {}, remote: elsewhere !== undefined };
  box.wake = () => {
    if (box.closed) return;
    clearTimeout(box.timer);
    box.timer = undefined;
    // A replay that failed (its store, most likely) is tried again later.
    outboxFlush(box, false).catch(() => {
      if (!box.closed) later(box, ask(box, "tell", TOLD_NEXT_REPLAY, "", "", 0));
    });
  };
  if (typeof globalThis.addEventListener === "function" && !box.remote) {
    globalThis.addEventListener("online", box.wake);
    box.offline = () => globalThis.removeEventListener("online", box.wake);
  }
  later(box, 0);
  box.api = elsewhere?.api ?? Object.freeze({
    list: () => outboxList(box, false),
    deadLetters: () => outboxList(box, true),
    flush: () => outboxFlush(box, true),
    retry: (id) => outboxRetry(box, id),
    discard: (id) => outboxDiscard(box, id),
  });
  return box;
}

/** Stops the outbox's timer and listener: its client is gone (and `core` with it). */
function outboxClose(box) {
  box.closed = true;
  box.offline();
  clearTimeout(box.timer);
}

/** The freed client's outbox stops where it is: what is stored stays for the next client. */
const CLOSED = new TypeError("resilientFetch: this outbox's client was freed; make a new one");

/** `core[fn](...args)`, unless the client is gone. */
function ask(box, fn, ...args) {
  if (box.closed) throw CLOSED;
  return box.core[fn](...args);
}

/** A replay in `ms` (none if negative, or one is due already); never keeps Node or Deno alive. */
function later(box, ms) {
  if (box.timer !== undefined || box.closed || box.remote || !(ms >= 0)) return;
  try {
    box.timer = setTimeout(box.wake, ms);
  } catch {
    // Cloudflare Workers allow no timer in a module's global scope, where a client may be
    // made: the replay then comes with the first kept call or flush().
    return;
  }
  unref(box.timer);
}

/** A timer that never keeps Node or Deno alive. */
function unref(timer) {
  if (typeof timer === "object") timer.unref?.();
  else globalThis.Deno?.unrefTimer?.(timer);
  return timer;
}

/**
 * Keeps a call's request, then settles the call: with a QueuedError once it is stored
 * (`event` to `listener` first), else as it would have settled (`value`, an error when
 * `failed`), the error saying why it was not kept (`notQueued`). `keep`'s slots are the KEEP_
 * codes (src/wasm/codes.rs `Keep`): maxEntries, source, init, key, origin, maxBodyBytes, stream,
 * reason, order, attempts, until, totalTimeoutMs (`order`: the call's place, taken when it started; `until`: when
 * keeping it must be done; both in `performance.now()` ms). Keeps of one outbox name go one
 * at a time in a realm, so `maxEntries` holds. A keep not done by `until` settles the call
 * as not kept, and a put() of it that lands later is taken back.
 */
function outboxKeep(box, keep, value, failed, listener, event) {
  // In the order of the KEEP_ slots.
  const [, , , key, origin, , , reason, , , until, totalTimeoutMs] = keep;
  // Whichever comes first holds: the entry is stored (`kept`), or the time is up (`up`).
  const time = { kept: false, up: false,
    why: `its store did not keep it by the call's deadline (totalTimeoutMs: ${totalTimeoutMs})` };
  let timer;
  const due = new Promise((resolve) => {
    // The call's own deadline: like its attempts' timers, it keeps the process alive.
    timer = setTimeout(() => {
      if (time.kept) return;
      time.up = true;
      resolve(time.why);
    }, until - performance.now());
  });
  const kept = inTurn(KEEPS, box.name, () => (time.up ? time.why : store(box, keep, time)));
  return Promise.race([kept, due]).finally(() => clearTimeout(timer)).then((why) => {
    if (why === undefined) {
      if (listener) callListener(listener, event);
      if (!box.closed) later(box, ask(box, "tell", TOLD_NEXT_REPLAY, "", "", 0));
      throw makeQueuedError(key, key, reason, failed ? value : undefined, failed ? undefined : value, origin);
    }
    if (!failed) return value;
    try {
      value.notQueued = why;
    } catch { /* not an object, or frozen */ }
    throw value;
  });
}

// Per outbox name, the last of this realm's keeps, and of its replays, retries and discards.
const KEEPS = new Map(), TURNS = new Map();

/**
 * Runs `work()` once what `chains` holds for `name` has settled, however it settled, and
 * holds its own place there until it settles: one at a time per name in this realm.
 */
function inTurn(chains, name, work) {
  const mine = (chains.get(name) ?? Promise.resolve()).then(work, work);
  const settled = mine.catch(() => {}).then(() => {
    if (chains.get(name) === settled) chains.delete(name);
  });
  chains.set(name, settled);
  return mine;
}

/** Whether two bodies (ArrayBuffer or null) hold the same bytes. */
function sameBody(a, b) {
  if (a === null || b === null || a === undefined || b === undefined) return (a ?? null) === (b ?? null);
  if (a.byteLength !== b.byteLength) return false;
  const x = new Uint8Array(a), y = new Uint8Array(b);
  return x.every((byte, i) => byte === y[i]);
}

// performance.now() to the wall clock: Date.now() - performance.now(), read again when it has
// moved by more than 20 ms (a device that slept: browsers stop performance.now() then; a
// clock set), not on the millisecond a Date.now() read moves it by.
let OFFSET = NaN;

/** The wall-clock time of a call's place `order` (performance.now() ms) as its firstAttemptAt. */
function firstAttemptAt(order) {
  const offset = Date.now() - performance.now();
  if (!(Math.abs(offset - OFFSET) <= 20)) OFFSET = offset;
  return order + OFFSET;
}

/** The core's word on `entry` before it is sent: JUDGED_EXPIRED or JUDGED_SEND. */
function judgeAge(box, entry) {
  return ask(box, "judge", Number(entry.firstAttemptAt) || 0, REPLAY_STATUS_UNSENT);
}

/** Whether `entry` is older than its outbox keeps entries (false once the client is freed). */
function expired(box, entry) {
  try {
    return judgeAge(box, entry) === JUDGED_EXPIRED;
  } catch {
    return false;
  }
}

/**
 * Stores the entry `keep` describes: undefined, or why it cannot be kept. Once `time.up` (the
 * call settled as not kept), nothing more is stored, and a put() that lands is taken back.
 */
async function store(box, keep, time) {
  // In the order of the KEEP_ slots.
  const [maxEntries, source, init, key, origin, maxBodyBytes, stream, reason, order, attempts] = keep;
  try {
    const entry = await copy(source, init, key, origin, maxBodyBytes, stream, reason, firstAttemptAt(order), attempts);
    if (typeof entry === "string") return entry;
    const same = await find(box, key);
    // The same key is the same request (as the draft has it), or nothing is kept: one entry per key.
    if (same && (same.origin !== origin || same.url !== entry.url || same.method !== entry.method ||
        !sameBody(same.body, entry.body))) {
      return `another kept request (${same.method} ${same.url}) has the same idempotency key and another payload`;
    }
    // A dead letter stays until retry(id) or discard(id): a new call with its key does not revive it.
    if (same?.deadLetter != null) {
      return `its idempotency key's request is a dead letter (${same.id}): retry(id) or discard(id) it`;
    }
    // The same request kept again (a caller's own retry) keeps its place and its count, unless
    // that place has expired (the new call is then the first of a new life).
    if (same && !expired(box, same)) {
      entry.firstAttemptAt = same.firstAttemptAt;
      entry.attempts = (Number(same.attempts) || 0) + attempts;
    }
    if (!same && (await count(box)) >= maxEntries) return `the outbox is full (outbox.maxEntries: ${maxEntries})`;
    if (time.up) return time.why;
    // No replay sends it before its call is told it is kept (the same request kept before
    // stays as it is: its call was told so).
    if (!same) taken(box.name).add(key);
    const put = new Promise((resolve) => resolve(box.store.put(entry)));
    try {
      await bounded(put, "put()");
    } catch (e) {
      // A put that failed, or has not answered, may land still: once it settles it is taken
      // back, so that nothing the caller was told is not kept is replayed.
      if (!same) put.catch(() => {}).then(() => inTurn(KEEPS, box.name, () => takeBack(box, key)));
      throw e;
    }
    // It landed after the call settled as not kept: taken back.
    if (time.up) {
      if (!same) await takeBack(box, key);
      return time.why;
    }
    time.kept = true;
    // Kept now, whatever an earlier call with its key was told.
    taken(box.name).delete(key);
    return undefined;
  } catch (e) {
    return `its store failed: ${e?.message ?? e}`;
  }
}

/** The entry that keeps a request, or a string saying why it cannot be kept. */
async function copy(source, init, key, origin, maxBodyBytes, stream, reason, firstAttemptAt, attempts) {
  if (stream) return "its body is a stream, which cannot be stored";
  let request;
  try {
    request = new Request(source instanceof Request ? source.clone() : source, init);
  } catch (e) {
    return `its request cannot be copied (${e?.message ?? e})`;
  }
  const body = request.body === null ? null : await request.arrayBuffer();
  if (body !== null && body.byteLength > maxBodyBytes) {
    return `its body (${body.byteLength} bytes) is larger than outbox.maxBodyBytes (${maxBodyBytes})`;
  }
  return {
    id: key,
    origin,
    url: request.url,
    method: request.method,
    headers: [...request.headers].filter(([name]) => !NOT_STORED.includes(name)),
    body,
    credentials: request.credentials,
    redirect: request.redirect,
    idempotencyKey: key,
    firstAttemptAt,
    attempts,
    reason,
  };
}

/**
 * Runs `work()` as the only one changing outbox `name`'s entries (a replay, a retry, a
 * discard): after the one at work in this realm, and under the name's Web Lock where there
 * is one. With `wait` false, resolves with -1 at once when another is at work.
 */

export { STORE_MS, outboxOpen, outboxClose, CLOSED, ask, later, unref, outboxKeep, KEEPS, TURNS, inTurn, judgeAge };
