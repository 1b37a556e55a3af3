// Joined by scripts/join-js.mjs from src/share/share.js, src/outbox/outbox.js, src/outbox/outbox-store.js, src/outbox/outbox-replay.js, src/stale/stale.js, src/failover/failover.js, src/sse/events.js: edit those, then run it.
import { SHARE_VERSION, NOTE_KIND_HELLO, NOTE_KIND_HOLD, makeQueuedError, JUDGED_EXPIRED, REPLAY_STATUS_UNSENT, TOLD_NEXT_REPLAY, JUDGED_DELIVERED, JUDGED_WAIT, JUDGED_REFUSED, JUDGED_SEND, JUDGED_UNSENDABLE, REPLAY_STATUS_NO_ANSWER, REPLAY_STATUS_UNSENDABLE, TOLD_REPLAYED, TOLD_DELIVERED, TOLD_DEAD_LETTERED, TOLD_ROUND_ENDED, DEAD_N_EXPIRED, DEAD_N_INVALID } from "../errors.js";
import { callListener, discardBody, settleLater } from "./arguments.js";

// Shared origin health (policy `share`; the rules are in src/share/rules.rs, the protocol in
// src/share/note.rs; the shell's part in src/share/shell.rs).
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files).

// ---------------------------------------------------------------- shared origin health
// A client's notes about its origins go to the clients of the same share name in other tabs,
// iframes and workers of the site (worker_threads of one Node process; Deno's workers) over a
// BroadcastChannel, and theirs come back. A message is [version, kind, origin, time, rank]:
// an origin (never a path, query, header, body or key), a note's kind, a wall-clock time,
// a rank. Anything else is dropped here (isNote); the wasm checks the rest.

/**
 * Opens the channel of share `name`; `hear(kind, origin, monotonicMs, rank)` gets each
 * well-formed note of a peer. With `durableObject` (Cloudflare Workers), the channel is the
 * one the package's Workers entry makes over it (pkg-template/edge.js: the same messages,
 * the same methods). Undefined where there is no BroadcastChannel (Cloudflare Workers,
 * without `durableObject`): sharing then does nothing.
 */
function shareOpen(name, hear, durableObject) {
  const edge = durableObject && globalThis[Symbol.for("resilient-fetch.edge")];
  if (!edge && typeof BroadcastChannel !== "function") return undefined;
  let channel;
  try {
    channel = edge ? edge.channel(name, durableObject) : new BroadcastChannel(`resilient-fetch/${name}`);
  } catch {
    return undefined;
  }
  channel.onmessage = ({ data }) => {
    if (!isNote(data)) return;
    const [, kind, origin, at, rank] = data;
    hear(kind, origin, at - Date.now() + performance.now(), rank);
  };
  // Node: an open channel must not keep the process alive.
  channel.unref?.();
  return channel;
}

// ---- share rules: pkg-template/full/edge.js has a copy (scripts/codes.mjs).
/**
 * Whether `m` is a note as src/share/note.rs defines it: [SHARE_VERSION, kind, origin, time, rank],
 * a hello naming no origin ("") and every other kind exactly an origin (NOTE_KIND_HOLD is the
 * last kind).
 */
function isNote(m) {
  if (!Array.isArray(m) || m.length !== 5 || m[0] !== SHARE_VERSION) return false;
  const [, kind, origin, at, rank] = m;
  return Number.isInteger(kind) && kind >= NOTE_KIND_HELLO && kind <= NOTE_KIND_HOLD && Number.isFinite(at) &&
    Number.isInteger(rank) && rank >= 0 && rank <= 0xffffffff && typeof origin === "string" &&
    (kind === NOTE_KIND_HELLO ? origin === "" : isOrigin(origin));
}

/** Exactly an http(s) origin as the registry keys it (never a path, query or credentials). */
function isOrigin(origin) {
  if (origin.length > 2048) return false;
  try {
    const url = new URL(origin);
    return (url.protocol === "http:" || url.protocol === "https:") && url.origin === origin;
  } catch {
    return false;
  }
}
// ---- end of share rules

/** Sends a note; `at` is monotonic ms, sent as wall-clock ms. Never throws. */
function shareSend(channel, kind, origin, at, rank) {
  try {
    channel.postMessage([SHARE_VERSION, kind, origin, at + Date.now() - performance.now(), rank]);
  } catch { /* closed: sharing is a hint */ }
}

/** A call starts: a channel that refreshes its view in the background may (edge.js; it never throws). */
const sharePoke = (channel) => channel.poke?.();

function shareClose(channel) {
  channel.onmessage = null;
  channel.close();
}


// The outbox (policy `outbox`; the rules are in src/outbox/rules.rs): keeping a call.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files).

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


// The outbox's store: bounded calls to it, its entries, the built-in stores.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files).

/** `work` (a promise), bounded by STORE_MS: past it, a rejection saying `what` did not answer. */
function bounded(work, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = unref(setTimeout(() => reject(new Error(`${what} did not answer in ${STORE_MS} ms`)), STORE_MS));
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/**
 * `store[method](arg)` as a promise (a store, or `onReplay`, may be synchronous, or throw),
 * bounded by STORE_MS.
 */
function call(store, method, arg) {
  return bounded(new Promise((resolve) => resolve(store[method](arg))), `${method}()`);
}

/** Whether `e` is an entry (a store may hold other things: they are left alone). */
const isEntry = (e) => typeof e === "object" && e !== null && typeof e.id === "string" &&
  typeof e.origin === "string" && typeof e.url === "string";

// Per outbox name, the ids of this realm's entries that are not kept: a put() under way, or
// one whose call was told it is not kept but which may have landed (it answered after the
// call's deadline, or failed). No replay sends them; the latter are taken back.
const TAKEN = new Map();

/** The ids outbox `name` takes back. */
function taken(name) {
  if (!TAKEN.has(name)) TAKEN.set(name, new Set());
  return TAKEN.get(name);
}

/**
 * Deletes entry `id` if it is still to be taken back (in the name's keeping turn: a call kept
 * with its key since then keeps it). One that fails stays marked, and a replay tries again.
 */
async function takeBack(box, id) {
  if (!taken(box.name).has(id)) return;
  try {
    await call(box.store, "delete", id);
    taken(box.name).delete(id);
  } catch {
    if (!box.closed) later(box, ask(box, "tell", TOLD_NEXT_REPLAY, "", "", 0));
  }
}

/**
 * The stored entries, and how many the store could not read. list() may give a promise per
 * entry (one read each): one that rejects, or does not answer, costs that entry only.
 * Entries being taken back are not among them (they are taken back again).
 */
async function stored(box) {
  const all = await call(box.store, "list");
  if (!Array.isArray(all)) throw new TypeError("the store's list() must resolve with an array");
  const read = await Promise.allSettled(
    all.map((e) => (typeof e?.then === "function" ? bounded(e, "an entry of list()") : e)));
  const marked = taken(box.name), found = [];
  for (const { status, value } of read) {
    if (status !== "fulfilled" || !isEntry(value)) continue;
    if (!marked.has(value.id)) found.push(value);
    else inTurn(KEEPS, box.name, () => takeBack(box, value.id));
  }
  return [found, read.filter((r) => r.status === "rejected").length];
}

/** The stored entries. */
async function entries(box) {
  return (await stored(box))[0];
}

/** The entry `id`, if stored: the store's optional `get(id)`, else found in `list()`. */
async function find(box, id) {
  if (typeof box.store.get !== "function") return (await entries(box)).find((e) => e.id === id);
  const entry = await call(box.store, "get", id);
  return isEntry(entry) && entry.id === id ? entry : undefined;
}

/** How many entries are stored: the store's optional `count()`, else `list()`'s length. */
async function count(box) {
  if (typeof box.store.count !== "function") return (await entries(box)).length;
  const n = await call(box.store, "count");
  if (!Number.isInteger(n) || n < 0) throw new TypeError("the store's count() must resolve with a whole number");
  return n;
}


const memory = new Map();

/** The built-in store of outbox `name`: IndexedDB where there is one, else this realm's memory. */
function builtIn(name) {
  if (typeof indexedDB === "undefined") {
    if (!memory.has(name)) memory.set(name, new Map());
    const entries = memory.get(name);
    return {
      async put(entry) { entries.set(entry.id, structuredClone(entry)); },
      async delete(id) { entries.delete(id); },
      async list() { return [...entries.values()].map((e) => structuredClone(e)); },
      async get(id) { return entries.has(id) ? structuredClone(entries.get(id)) : undefined; },
      async count() { return entries.size; },
    };
  }
  let opened;
  const open = () => (opened ??= new Promise((resolve, reject) => {
    const request = indexedDB.open(`resilient-fetch-outbox/${name}`, 1);
    request.onupgradeneeded = () => request.result.createObjectStore("entries", { keyPath: "id" });
    request.onsuccess = () => {
      const db = request.result;
      // A newer version of the database (another tab's) waits for this one to close; a
      // database the browser closed (site data cleared) is opened again on next use.
      db.onversionchange = () => {
        db.close();
        opened = undefined;
      };
      db.onclose = () => { opened = undefined; };
      resolve(db);
    };
    request.onerror = () => reject(request.error);
  }).catch((e) => {
    opened = undefined;
    throw e;
  }));
  const run = (mode, work) => open().then((db) => new Promise((resolve, reject) => {
    const tx = db.transaction("entries", mode);
    const request = work(tx.objectStore("entries"));
    tx.oncomplete = () => resolve(request.result);
    tx.onerror = tx.onabort = () => reject(tx.error);
  }));
  return {
    put: (entry) => run("readwrite", (s) => s.put(entry)).then(() => {}),
    delete: (id) => run("readwrite", (s) => s.delete(id)).then(() => {}),
    list: () => run("readonly", (s) => s.getAll()),
    get: (id) => run("readonly", (s) => s.get(id)),
    count: () => run("readonly", (s) => s.count()),
  };
}


// The outbox's replays, one replayer per name, and what client.outbox may do.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files).

function exclusive(box, wait, work) {
  const { name } = box;
  if (TURNS.has(name) && !wait) return Promise.resolve(-1);
  const locks = globalThis.navigator?.locks;
  return inTurn(TURNS, name, () => (typeof locks?.request === "function"
    ? locks.request(`resilient-fetch-outbox/${name}`, wait ? {} : { ifAvailable: true }, (lock) => (lock ? work() : -1))
    : work()));
}

/**
 * Replays the waiting entries: resolves with `{ delivered, deadLettered, waiting }`. With
 * `wait` false, resolves with undefined at once when another replayer is at work (and tries
 * again on the timer).
 */
function outboxFlush(box, wait) {
  if (box.closed) return Promise.reject(CLOSED);
  return exclusive(box, wait, () => replayAll(box)).then((tally) => {
    if (tally !== -1) return tally;
    later(box, ask(box, "tell", TOLD_NEXT_REPLAY, "", "", 0));
    return undefined;
  });
}

/**
 * One replay: every origin's queue at once, each oldest first, stopping at an entry that must
 * wait. An entry the store could not read waits (the others go on); a list() that fails fails
 * the replay.
 */
async function replayAll(box) {
  const tally = { delivered: 0, deadLettered: 0, waiting: 0 };
  let ended = false;
  try {
    const [all, unreadable] = await stored(box).catch((e) => {
      throw new Error(`the outbox store's list() failed, nothing was replayed: ${e?.message ?? e}`, { cause: e });
    });
    tally.waiting += unreadable;
    await Promise.all(queues(all).map((queue) => replayQueue(box, queue, tally)));
    ended = true;
  } finally {
    // The next replay: soon after a failure, later while entries wait, none when all are done.
    if (!box.closed) later(box, ask(box, "tell", ended ? TOLD_ROUND_ENDED : TOLD_NEXT_REPLAY, "", "", tally.waiting));
  }
  return tally;
}

/** One origin's queue. */
async function replayQueue(box, queue, tally) {
  const { store } = box;
  for (let i = 0; i < queue.length; i++) {
    const entry = queue[i];
    const { id, origin } = entry;
    // Expired or to send; then delivered, wait, refused, or cannot be sent (JUDGED_).
    let verdict = judgeAge(box, entry);
    let status = REPLAY_STATUS_NO_ANSWER;
    if (verdict === JUDGED_SEND) {
      entry.attempts = (Number(entry.attempts) || 0) + 1;
      ask(box, "tell", TOLD_REPLAYED, origin, id, entry.attempts);
      status = await send(box, entry);
      verdict = status === REPLAY_STATUS_UNSENDABLE ? JUDGED_UNSENDABLE : ask(box, "judge", 0, status);
    }
    try {
      if (verdict === JUDGED_DELIVERED) {
        await call(store, "delete", id);
        tally.delivered++;
        ask(box, "tell", TOLD_DELIVERED, origin, id, status);
        continue;
      }
      if (verdict !== JUDGED_WAIT) {
        const [reason, n] = verdict === JUDGED_REFUSED ? ["status", status]
          : verdict === JUDGED_EXPIRED ? ["expired", DEAD_N_EXPIRED] : ["invalid", DEAD_N_INVALID];
        entry.deadLetter = { reason, at: Date.now(), ...(verdict === JUDGED_REFUSED ? { status } : {}) };
        await call(store, "put", entry);
        tally.deadLettered++;
        ask(box, "tell", TOLD_DEAD_LETTERED, origin, id, n);
        continue;
      }
      await call(store, "put", entry);
    } catch (e) {
      if (e === CLOSED) throw e;
      /* the store failed: the entry (still) waits */
    }
    tally.waiting += queue.length - i;
    return;
  }
}

/**
 * The waiting entries, one queue per origin (origins in the order of their oldest entry),
 * each oldest first: by the first attempt's time, then id.
 */
function queues(all) {
  const byOrigin = new Map();
  const at = (e) => Number(e.firstAttemptAt) || 0;
  const live = all.filter((e) => e.deadLetter == null)
    .sort((a, b) => at(a) - at(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (const e of live) {
    if (!byOrigin.has(e.origin)) byOrigin.set(e.origin, []);
    byOrigin.get(e.origin).push(e);
  }
  return [...byOrigin.values()];
}

/**
 * Sends an entry again (through `onReplay`, if given): its answer's status, REPLAY_STATUS_NO_ANSWER
 * (or `onReplay` failed: it waits), REPLAY_STATUS_UNSENDABLE if the stored request cannot be sent at all.
 */
async function send(box, entry) {
  let request;
  try {
    const { url, method, headers, body, credentials, redirect } = entry;
    request = new Request(url, { method, headers, body, credentials, redirect });
  } catch {
    return REPLAY_STATUS_UNSENDABLE;
  }
  try {
    if (typeof box.onReplay === "function") {
      // Bounded as a store call is: a hook that never answers must not hold the name's turn.
      request = await call(box, "onReplay", request);
      if (!(request instanceof Request)) return REPLAY_STATUS_UNSENDABLE;
    }
    const response = await ask(box, "send", request);
    discardBody(response);
    return response.status;
  } catch (e) {
    if (e === CLOSED) throw e;
    return REPLAY_STATUS_NO_ANSWER;
  }
}

/** The waiting entries (`dead` false) or the dead letters, as stored. */
async function outboxList(box, dead) {
  return (await entries(box)).filter((e) => (e.deadLetter != null) === dead);
}

/** Removes entry `id` (in the name's turn): false if there is none. */
function outboxDiscard(box, id) {
  return exclusive(box, true, async () => {
    if (!(await find(box, id))) return false;
    await call(box.store, "delete", id);
    return true;
  });
}

/** Makes entry `id` wait again (its age from now), in the name's turn, then replays: false if there is none. */
async function outboxRetry(box, id) {
  const found = await exclusive(box, true, async () => {
    const entry = await find(box, id);
    if (!entry) return false;
    delete entry.deadLetter;
    entry.firstAttemptAt = Date.now();
    await call(box.store, "put", entry);
    return true;
  });
  if (found) await outboxFlush(box, true);
  return found;
}


// Stale answers (policy `stale`; the rules are in src/stale/*.rs): the stores, reading the
// request's and the answer's headers, keeping a copy of an answer (a tee: the caller's reading
// is never delayed), and the answer served instead of a failure.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files).

// What a kept copy carries of its own, in one header: [sent, received, shared, vary, status,
// statusText, ...the answer's own header names and values]. The copy's other headers only let
// the Cache API keep it for its window (it honours Cache-Control); the answer's own come back
// when it is served.
const KEPT = "resilient-fetch-kept";
// The header a served answer carries: why it was served ("timeout", "breakerOpen", ...).
const MARKER = "resilient-fetch-stale";
// The bytes of a copy staleKeep made, for the memory store to keep as they are (at once: the
// answer is kept as soon as its copy is read).
const BYTES = Symbol("bytes");
// The Cache API keys its entries by request: a key is the query of a URL of no server.
const KEY_URL = "https://resilient-fetch.invalid/stale?key=";

/** A header list as one flat array: name, value, name, value. */
function flat(headers) {
  const out = [];
  for (const [name, value] of headers) out.push(name, value);
  return out;
}

/**
 * `work` (a promise), or undefined once `ms` pass first; never rejects. The timer of a lookup
 * (`awaited`: a call waits for it) keeps Node alive, a put's or a delete's does not.
 */
function settled(work, ms, awaited = false) {
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(resolve, Math.max(0, ms));
    if (!awaited && typeof timer === "object") timer.unref?.();
  });
  return Promise.race([work, late]).catch(() => undefined).finally(() => clearTimeout(timer));
}

/** `store[method](key, value)` as a promise (a store may be synchronous, or throw). */
function storeCall(store, method, key, value) {
  return new Promise((resolve) => resolve(store[method](key, value)));
}

/**
 * Whether this runtime's own store serves one user: a page's or a browser worker's (its Cache
 * API and memory are the user's). A Worker's cache serves every user, and a server's memory too.
 */
function privateRuntime() {
  const g = globalThis;
  if (typeof g.navigator === "object" && g.navigator?.userAgent === "Cloudflare-Workers") return false;
  return typeof g.document === "object" || typeof g.DedicatedWorkerGlobalScope === "function" ||
    typeof g.SharedWorkerGlobalScope === "function" || typeof g.ServiceWorkerGlobalScope === "function";
}

/**
 * The Cache API's `resilient-fetch` cache as a store; `memory` from the first time it cannot be
 * opened or used (workerd run locally without a cache service throws "No Cache was configured").
 */
function cacheStore(memory) {
  let opened;
  const cache = () => (opened ??= caches.open("resilient-fetch").catch(() => null));
  const request = (key) => new Request(KEY_URL + encodeURIComponent(key));
  const use = (method, work) => async (key, value) => {
    const c = await cache();
    if (c !== null) {
      try {
        return await work(c, request(key), value);
      } catch {
        opened = Promise.resolve(null);
      }
    }
    return memory[method](key, value);
  };
  return {
    get: use("get", async (c, r) => (await c.match(r)) ?? undefined),
    put: use("put", (c, r, response) => c.put(r, response)),
    delete: use("delete", (c, r) => c.delete(r)),
  };
}

/** A store in this realm's memory: at most `maxEntries` answers and `maxBytes` of bodies, the least recently used out first. */
function memoryStore(maxEntries, maxBytes) {
  const entries = new Map();
  let bytes = 0;
  const drop = (key) => {
    const e = entries.get(key);
    if (e === undefined) return;
    bytes -= e.body.byteLength;
    entries.delete(key);
  };
  return {
    async get(key) {
      const e = entries.get(key);
      if (e === undefined) return undefined;
      entries.delete(key);
      entries.set(key, e);
      const body = e.body.byteLength === 0 ? null : e.body.slice(0);
      return new Response(body, { status: e.status, statusText: e.statusText, headers: e.headers });
    },
    async put(key, response) {
      const body = response[BYTES] ?? (await response.arrayBuffer());
      drop(key);
      if (body.byteLength > maxBytes) return;
      const { status, statusText } = response;
      entries.set(key, { status, statusText, headers: [...response.headers], body });
      bytes += body.byteLength;
      for (const old of entries.keys()) {
        if (entries.size <= maxEntries && bytes <= maxBytes) break;
        drop(old);
      }
    },
    async delete(key) { drop(key); },
  };
}

/**
 * A client's store: `given` (an object with get, put and delete), else the Cache API where the
 * runtime has one, else memory; and whether the runtime's own store is shared (a given one is
 * taken to be: `stale.private` says otherwise).
 */
function staleOpen(given, maxEntries, maxBytes) {
  if (given !== undefined && given !== null) return [given, true];
  const memory = memoryStore(maxEntries, maxBytes);
  const store = typeof globalThis.caches?.open === "function" ? cacheStore(memory) : memory;
  return [store, !privateRuntime()];
}

/** What keeping and serving need of the request: [its URL, ...its header names and values]. */
function staleRequest(source, init) {
  const request = source instanceof Request ? source : undefined;
  const url = request?.url ?? new URL(String(source), globalThis.location?.href).href;
  const headers = init?.headers !== undefined ? new Headers(init.headers) : (request?.headers ?? []);
  return [url, ...flat(headers)];
}

/** What keeping needs of an answer: [its status, ...its header names and values]. */
function staleHeaders(response) {
  try {
    return [response.status, ...flat(response.headers)];
  } catch {
    return [0];
  }
}

/**
 * Keeps a copy of `response` under `key` (and, when its Vary names fields, `vary` under `base`:
 * a lookup finds the names there), its body read beside the caller's (a tee) up to `limit`
 * bytes: a larger one is not kept, and that branch is cancelled. `maxAgeS`: how long the Cache
 * API may keep it. Never awaited by the call; each store call bounded by `ms`.
 */
function staleKeep(store, response, key, base, vary, sent, shared, limit, maxAgeS, ms) {
  let copy;
  try {
    copy = response.clone();
  } catch {
    return;
  }
  const received = Date.now();
  (async () => {
    const chunks = [];
    let size = 0;
    if (copy.body !== null) {
      const reader = copy.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > limit) return reader.cancel().catch(() => {});
        chunks.push(value);
      }
    }
    const kept = (status, statusText, own) => new Headers({
      "cache-control": `max-age=${maxAgeS}`,
      [KEPT]: JSON.stringify([sent, received, shared, vary, status, statusText, ...own]),
    });
    const own = flat(copy.headers);
    const bytes = new Uint8Array(size);
    let at = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, at);
      at += chunk.byteLength;
    }
    const { status, statusText } = copy;
    const stored = new Response(size === 0 ? null : bytes, { headers: kept(status, statusText, own) });
    stored[BYTES] = bytes.buffer;
    await settled(storeCall(store, "put", key, stored), ms);
    if (base !== key) await settled(storeCall(store, "put", base, new Response(null, { headers: kept(0, "", []) })), ms);
  })().catch(() => {});
}

/**
 * The answer kept under `key`, within `ms`: [the stored copy, sent, received, shared, vary,
 * status, statusText, ...its own header names and values], or undefined (none, a store that
 * failed or did not answer, or not one of ours).
 */
async function staleGet(store, key, ms) {
  const found = await settled(storeCall(store, "get", key), ms, true);
  try {
    const meta = JSON.parse(found.headers.get(KEPT));
    return Array.isArray(meta) && meta.length >= 6 ? [found, ...meta] : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The answer `entry` (from staleGet) as served for `reason`: its status and own headers, its
 * `Age`, and the marker; what the call would have resolved with (`replaced`) has its body cancelled.
 */
function staleServe(entry, age, reason, replaced) {
  const [found, , , , , status, statusText, ...own] = entry;
  const headers = new Headers();
  for (let i = 0; i + 1 < own.length; i += 2) headers.append(own[i], own[i + 1]);
  headers.set("age", String(age));
  headers.set(MARKER, reason);
  if (replaced instanceof Response && !replaced.bodyUsed) replaced.body?.cancel().catch(() => {});
  const nullBody = [101, 103, 204, 205, 304].includes(status);
  return new Response(nullBody ? null : found.body, { status, statusText, headers });
}

/** Deletes what is kept under `keys` (a write made it out of date), each within `ms`; never awaited. */
function staleDelete(store, keys, ms) {
  for (const key of keys) settled(storeCall(store, "delete", key), ms);
}


// Failover (policy `failover`): an attempt's request sent to an alternate origin instead of the
// call's own, with the same path, query, method, headers (the idempotency key among them) and body.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files).
// What a Request is built with beside its URL, method, headers and body: copied when set.
const REQUEST_OPTIONS = ["mode", "credentials", "cache", "redirect", "referrer", "referrerPolicy", "integrity"];

/**
 * Reports to `settler` (the wasm's, src/wasm/settle.rs) under (slot, generation) what an attempt to `origin` sends instead of
 * `input`: for an absolute URL string, that URL at `origin`; for a Request, a Request of that URL
 * with the same method, headers, options and body (read from a clone when `replay`, so that the
 * Request can be cloned for each attempt; else its one stream, passed on). A failure (a body that
 * cannot be read) is reported as a rejection: the attempt's own error, not the origin's.
 */
function failoverTo(input, origin, replay, settler, slot, generation) {
  const at = (url) => {
    const u = new URL(url);
    return origin + u.pathname + u.search + u.hash;
  };
  try {
    if (typeof input === "string") return settler(slot, generation, true, at(input), 0, 0);
    const init = { method: input.method, headers: input.headers };
    for (const name of REQUEST_OPTIONS) {
      const value = input[name];
      if (value !== undefined && value !== "" && value !== "navigate") init[name] = value;
    }
    if (input.keepalive === true) init.keepalive = true;
    const url = at(input.url);
    if (input.body === null) return settler(slot, generation, true, new Request(url, init), 0, 0);
    if (!replay) return settler(slot, generation, true, new Request(url, { ...init, body: input.body, duplex: "half" }), 0, 0);
    input.clone().arrayBuffer().then((body) => settler(slot, generation, true, new Request(url, { ...init, body }), 0, 0),
      (error) => settler(slot, generation, false, error, 0, 0));
  } catch (error) {
    settler(slot, generation, false, error, 0, 0);
  }
}


// `client.events()` (policy `events`; the parser and the reconnect loop are in src/sse/, in Rust):
// the object JS gets, an EventTarget with EventSource's events, readyState and close(), that is
// also async-iterable, and the few reads of requests and responses the loop asks for.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files).

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


export { shareOpen, shareSend, sharePoke, shareClose, STORE_MS, outboxOpen, outboxClose, CLOSED, ask, later, unref, outboxKeep, KEEPS, TURNS, inTurn, judgeAge, bounded, call, taken, takeBack, stored, entries, find, count, builtIn, outboxFlush, outboxList, outboxDiscard, outboxRetry, staleOpen, staleRequest, staleHeaders, staleKeep, staleGet, staleServe, staleDelete, failoverTo, EventStream, eventsOpen, eventsEmit, eventsEnd, eventsConnect, eventsHead, eventsRead, eventsCancel, eventsError, eventsFailure };
