// The outbox's store: bounded calls to it, its entries, the built-in stores.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files).
import { STORE_MS, ask, later, unref, KEEPS, inTurn } from "./outbox.js";
import { TOLD_NEXT_REPLAY } from "../../js/errors.js";

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

export { bounded, call, taken, takeBack, stored, entries, find, count, builtIn };
