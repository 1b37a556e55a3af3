// What a client keeps with the rest of its site (its other tabs, iframes and workers, and the
// page after a reload), in two parts:
// - shared origin health (policy `share`; the rules are in src/share.rs): notes to the clients
//   of the same share name over a BroadcastChannel;
// - the outbox (policy `outbox`; the rules are in src/outbox.rs): its I/O.
// Both in one module: wasm-bindgen-test-runner stalls loading a fifth snippet module.
// Keep the single `export { ... }` line last (see arguments.js).
import { callListener, discardBody, originKey } from "./arguments.js";
import { makeQueuedError } from "./errors.js";

// ---------------------------------------------------------------- shared origin health
// A client's notes about its origins go to the clients of the same share name in other tabs,
// iframes and workers of the site (worker_threads of one Node process; Deno's workers) over a
// BroadcastChannel, and theirs come back. A message is [version, kind, origin, time, rank]:
// an origin (never a path, query, header, body or key), a note's kind, a wall-clock time,
// a rank. Anything else is dropped here; the wasm checks the rest.
const VERSION = 1;

/**
 * Opens the channel of share `name`; `hear(kind, origin, monotonicMs, rank)` gets each
 * well-formed note of a peer. Undefined where there is no BroadcastChannel (Cloudflare
 * Workers): sharing then does nothing.
 */
function shareOpen(name, hear) {
  if (typeof BroadcastChannel !== "function") return undefined;
  let channel;
  try {
    channel = new BroadcastChannel(`resilient-fetch/${name}`);
  } catch {
    return undefined;
  }
  channel.onmessage = ({ data }) => {
    if (!Array.isArray(data) || data.length !== 5 || data[0] !== VERSION) return;
    const [, kind, origin, at, rank] = data;
    if (!Number.isInteger(kind) || kind < 0 || typeof at !== "number" || !Number.isInteger(rank) ||
        rank < 0 || rank > 0xffffffff || typeof origin !== "string" || !isOrigin(origin)) return;
    hear(kind, origin, at - Date.now() + performance.now(), rank);
  };
  // Node: an open channel must not keep the process alive.
  channel.unref?.();
  return channel;
}

/** "" (a hello names no origin), or exactly an origin as the registry keys it. */
function isOrigin(origin) {
  if (origin === "") return true;
  try {
    return origin.length <= 2048 && originKey(origin) === origin;
  } catch {
    return false;
  }
}

/** Sends a note; `at` is monotonic ms, sent as wall-clock ms. Never throws. */
function shareSend(channel, kind, origin, at, rank) {
  try {
    channel.postMessage([VERSION, kind, origin, at + Date.now() - performance.now(), rank]);
  } catch { /* closed: sharing is a hint */ }
}

function shareClose(channel) {
  channel.onmessage = null;
  channel.close();
}

// ---------------------------------------------------------------- the outbox
// Its rules are the core's (src/outbox.rs), asked through `core` (made in src/wasm/outbox.rs):
// here a request is copied into an entry before its call settles, the entries are replayed
// first in, first out per origin, by one replayer per name (in this realm always, across the
// site's tabs and workers with Web Locks where there are), on `online` and on a timer that
// never keeps Node alive; the built-in stores are IndexedDB in browsers and their workers,
// memory elsewhere.
/** Headers never written to a store: credentials are attached afresh at replay (`onReplay`). */
const NOT_STORED = ["authorization", "cookie", "proxy-authorization"];

/**
 * The outbox `name` of a client: `store` (undefined: the built-in one), the caller's
 * `onReplay`, and `core`: `judge(firstAttemptAt, status)`,
 * `tell(kind, origin, id, n)` and `send(request)` (see src/wasm/outbox.rs). A replay comes
 * soon (what an earlier page or process left), on `online`, and on the core's timer.
 */
function outboxOpen(name, store, onReplay, core) {
  const box = { name, store: store ?? builtIn(name), onReplay, core, timer: undefined, offline: () => {} };
  box.wake = () => {
    box.timer = undefined;
    outboxFlush(box, false);
  };
  if (typeof globalThis.addEventListener === "function") {
    globalThis.addEventListener("online", box.wake);
    box.offline = () => globalThis.removeEventListener("online", box.wake);
  }
  later(box, 0);
  // What `client.outbox` is.
  box.api = Object.freeze({
    list: () => outboxList(box, false),
    deadLetters: () => outboxList(box, true),
    flush: () => outboxFlush(box, true),
    retry: (id) => outboxRetry(box, id),
    discard: (id) => outboxDiscard(box, id),
  });
  return box;
}

/** Stops the outbox's timer and listener (its client is gone). */
function outboxClose(box) {
  box.offline();
  clearTimeout(box.timer);
  box.closed = true;
}

/** A replay in `ms` (none if negative, or one is due already); never keeps Node alive. */
function later(box, ms) {
  if (box.timer !== undefined || box.closed || ms < 0) return;
  box.timer = setTimeout(box.wake, ms);
  box.timer?.unref?.();
}

/** `store[method](arg)` as a promise (a store may be synchronous, or throw). */
function call(store, method, arg) {
  try {
    return Promise.resolve(store[method](arg));
  } catch (e) {
    return Promise.reject(e);
  }
}

/**
 * Keeps a call's request, then settles the call: with a QueuedError once it is stored
 * (`event` to `listener` first), else as it would have settled (`value`, an error when
 * `failed`), the error saying why it was not kept (`notQueued`). `keep` is
 * [maxEntries, source, init, key, origin, maxBodyBytes, stream, reason, firstAttemptAt, attempts].
 */
async function outboxKeep(box, keep, value, failed, listener, event) {
  const [maxEntries, source, init, key, origin, maxBodyBytes, stream, reason, firstAttemptAt, attempts] = keep;
  let why;
  try {
    const entry = await copy(source, init, key, origin, maxBodyBytes, stream, reason, firstAttemptAt, attempts);
    why = typeof entry === "string" ? entry : undefined;
    if (why === undefined) {
      const held = await call(box.store, "list");
      if (held.length >= maxEntries && !held.some((e) => e?.id === key)) {
        why = `the outbox is full (outbox.maxEntries: ${maxEntries})`;
      } else {
        await call(box.store, "put", entry);
      }
    }
  } catch (e) {
    why = `its store failed: ${e?.message ?? e}`;
  }
  if (why === undefined) {
    if (listener) callListener(listener, event);
    later(box, box.core.tell(3, "", "", 1));
    throw makeQueuedError(key, key, reason, failed ? value : undefined, failed ? undefined : value, origin);
  }
  if (!failed) return value;
  try {
    value.notQueued = why;
  } catch { /* not an object, or frozen */ }
  throw value;
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

/** A stored entry (anything else in a store is left alone). */
function isEntry(e) {
  return typeof e === "object" && e !== null && typeof e.id === "string" && typeof e.origin === "string" &&
    typeof e.url === "string";
}

const replaying = new Map();

/**
 * Replays the waiting entries as the only replayer of the outbox's name: resolves with
 * `{ delivered, deadLettered, waiting }`. With `wait` false, resolves with undefined at
 * once when another replayer is at work (and tries again on the core's timer).
 */
function outboxFlush(box, wait) {
  if (box.closed) return Promise.reject(new TypeError("resilientFetch: this outbox's client was freed; make a new one"));
  const { name } = box;
  const before = replaying.get(name);
  let run;
  if (before && !wait) {
    run = Promise.resolve(-1);
  } else {
    const locks = globalThis.navigator?.locks;
    const replay = () => (typeof locks?.request === "function"
      ? locks.request(`resilient-fetch-outbox/${name}`, wait ? {} : { ifAvailable: true }, (lock) => (lock ? replayAll(box) : -1))
      : replayAll(box));
    run = (before ?? Promise.resolve()).then(replay, replay);
    const settled = run.catch(() => {}).then(() => {
      if (replaying.get(name) === settled) replaying.delete(name);
    });
    replaying.set(name, settled);
  }
  return run.then((tally) => {
    if (tally !== -1) return tally;
    later(box, box.core.tell(3, "", "", -1));
    return undefined;
  });
}

/** One replay: every origin's queue at once, each oldest first, stopping at an entry that must wait. */
async function replayAll(box) {
  const { store, core } = box;
  const tally = { delivered: 0, deadLettered: 0, waiting: 0 };
  await Promise.all(queues(await call(store, "list")).map(async (queue) => {
    for (let i = 0; i < queue.length; i++) {
      const entry = queue[i];
      const { id, origin } = entry;
      // 3: expired, 4: to send; then 0: delivered, 1: wait, 2: refused.
      let verdict = core.judge(Number(entry.firstAttemptAt) || 0, -2);
      let status = -1;
      if (verdict === 4) {
        entry.attempts = (Number(entry.attempts) || 0) + 1;
        core.tell(0, origin, id, entry.attempts);
        status = await send(box, entry);
        verdict = core.judge(0, status);
      }
      try {
        if (verdict === 0) {
          await call(store, "delete", id);
          tally.delivered++;
          core.tell(1, origin, id, status);
          continue;
        }
        if (verdict !== 1) {
          entry.deadLetter = verdict === 2 ? { reason: "status", status, at: Date.now() } : { reason: "expired", at: Date.now() };
          await call(store, "put", entry);
          tally.deadLettered++;
          core.tell(2, origin, id, verdict === 2 ? status : -1);
          continue;
        }
        await call(store, "put", entry);
      } catch { /* the store failed: the entry (still) waits */ }
      tally.waiting += queue.length - i;
      return;
    }
  }));
  later(box, core.tell(3, "", "", tally.waiting));
  return tally;
}

/**
 * The waiting entries, one queue per origin (origins in the order of their oldest entry),
 * each oldest first: by the first attempt's time, then id.
 */
function queues(entries) {
  const byOrigin = new Map();
  const at = (e) => Number(e.firstAttemptAt) || 0;
  const live = entries.filter((e) => isEntry(e) && e.deadLetter == null)
    .sort((a, b) => at(a) - at(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (const e of live) {
    if (!byOrigin.has(e.origin)) byOrigin.set(e.origin, []);
    byOrigin.get(e.origin).push(e);
  }
  return [...byOrigin.values()];
}

/** Sends an entry again (through `onReplay`, if given): its answer's status, or -1. */
async function send(box, entry) {
  try {
    const { url, method, headers, body, credentials, redirect } = entry;
    let request = new Request(url, { method, headers, body, credentials, redirect });
    if (typeof box.onReplay === "function") {
      request = await box.onReplay(request);
      if (!(request instanceof Request)) return -1;
    }
    const response = await box.core.send(request);
    discardBody(response);
    return response.status;
  } catch {
    return -1;
  }
}

/** The waiting entries (`dead` false) or the dead letters, as stored. */
async function outboxList(box, dead) {
  return (await call(box.store, "list")).filter((e) => isEntry(e) && (e.deadLetter != null) === dead);
}

/** The entry `id`, if stored. */
async function find(box, id) {
  return (await call(box.store, "list")).find((e) => isEntry(e) && e.id === id);
}

/** Removes entry `id`: false if there is none. */
async function outboxDiscard(box, id) {
  if (!(await find(box, id))) return false;
  await call(box.store, "delete", id);
  return true;
}

/** Makes entry `id` wait again (its age from now), then replays: false if there is none. */
async function outboxRetry(box, id) {
  const entry = await find(box, id);
  if (!entry) return false;
  delete entry.deadLetter;
  entry.firstAttemptAt = Date.now();
  await call(box.store, "put", entry);
  await outboxFlush(box, true);
  return true;
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
    };
  }
  let opened;
  const open = () => (opened ??= new Promise((resolve, reject) => {
    const request = indexedDB.open(`resilient-fetch-outbox/${name}`, 1);
    request.onupgradeneeded = () => request.result.createObjectStore("entries", { keyPath: "id" });
    request.onsuccess = () => {
      // A newer version of the database (another tab's) waits for this one to close.
      request.result.onversionchange = () => {
        request.result.close();
        opened = undefined;
      };
      resolve(request.result);
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
  };
}

export { shareOpen, shareSend, shareClose, outboxOpen, outboxClose, outboxKeep };
