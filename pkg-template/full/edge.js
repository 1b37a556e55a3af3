// Cloudflare Workers only (imported by workerd.js, never by the browser entry): shared origin
// health and the outbox across every isolate of a Worker, over Durable Objects.
//
// - `share: { name, durableObject: env.RF_HEALTH }`: a client's notes (src/share.rs: the
//   messages [version, kind, origin, time, rank] that cross a BroadcastChannel in browsers)
//   go to the `OriginHealth` object of that name, and the object answers with the notes of
//   the other isolates since the last exchange. The client applies them with the same rules
//   as across tabs. No call waits for the object: exchanges run in the background
//   (`waitUntil`), one at a time per client, each with a stub made for it (Workers forbid
//   I/O objects across requests); an object that fails, hangs or cannot be reached leaves
//   the client as it would be without sharing.
// - `outbox: { name, store: durableOutbox(env.RF_OUTBOX) }`: the entries are kept in the
//   storage of the `DurableOutbox` object of that name, which replays them with the
//   package's own replay (a ResilientClient whose outbox is that storage), woken by its
//   alarm while entries wait: a kept write is delivered when the origin is back, even if no
//   request ever reaches an isolate again.
import { DurableObject, waitUntil } from "cloudflare:workers";
import { ResilientClient } from "./web/resilient_fetch.js";

const VERSION = 1;

// ---------------------------------------------------------------- shared origin health
/** How often, at most, a client refreshes its view while it calls and its origins are troubled, in ms. */
const REFRESH_MS = 250;
/** How long a client keeps refreshing after the last troubling note (a failure, an opening past its until, a hold). */
const QUIET_MS = 2_000;
/**
 * After this client tells a failure, it refreshes at once, then every FOLLOW_MS for
 * FOLLOW_FOR_MS (in the background, calls or not): the other isolates' failures of the same
 * moment reach it before its next call, so the fleet trips on its first few failures, not on
 * a few per isolate.
 */
const FOLLOW_MS = 10, FOLLOW_FOR_MS = 100;
/** An exchange that takes longer counts as failed, in ms (the object is slow or hangs). */
const EXCHANGE_MS = 2_000;
/** After a failed exchange, the next waits this long, doubling up to MAX_BACKOFF_MS. */
const BACKOFF_MS = 250, MAX_BACKOFF_MS = 30_000;
/**
 * One run of exchanges (started by a call, in its request's waitUntil) ends after this long,
 * in ms: what is left goes with a later call. A run the platform cut off (a request's
 * waitUntil has a limit) never settles: after STALE_MS another may start.
 */
const RUN_MS = 3_000, STALE_MS = 10_000;
/** How long a troubling note keeps the view refreshed at most, in ms (an "open for a day" does not). */
const MAX_TROUBLE_MS = 300_000;
/** Notes one client holds for the object at most (the oldest go first), and sends in one exchange. */
const MAX_QUEUE = 64;
/** Notes the object keeps (for the clients that have not heard them yet), and for how long, in ms. */
const MAX_RING = 256, RING_MS = 30_000;
/** Origins the object keeps, and how long one nobody spoke of is kept, in ms. */
const MAX_ORIGINS = 1_000, FORGET_MS = 10 * 60_000;

/** Whether `m` is a note as src/share.rs defines it: [VERSION, kind 0..5, origin, time, rank]. */
function isNote(m) {
  if (!Array.isArray(m) || m.length !== 5 || m[0] !== VERSION) return false;
  const [, kind, origin, at, rank] = m;
  return Number.isInteger(kind) && kind >= 0 && kind <= 5 && Number.isFinite(at) && Number.isInteger(rank) &&
    rank >= 0 && rank <= 0xffffffff && typeof origin === "string" && (kind === 0 ? origin === "" : isOrigin(origin));
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

/** `promise`, or a rejection after `ms`. */
function within(promise, ms) {
  let timer;
  const late = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error("too slow")), ms); });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * A client's channel to the `OriginHealth` object `name` of namespace `ns`, with the
 * methods site.js uses on a BroadcastChannel (postMessage, onmessage, close) and `poke`,
 * which the client calls as each of its calls starts. It holds plain data only.
 */
class EdgeChannel {
  constructor(name, ns) {
    this.name = name;
    this.ns = ns;
    this.onmessage = null;
    this.queue = [];
    this.cursor = 0;
    this.busy = false;
    this.run = 0; // the run of exchanges under way (a run that is not is abandoned)
    this.closed = false;
    this.last = -Infinity; // when the last exchange started (Date.now())
    this.notBefore = 0; // after failures: no exchange before then
    this.backoff = BACKOFF_MS;
    this.troubledUntil = 0;
    this.followUntil = 0;
  }

  /** A note of this client: sent in the next exchange, at once if none is under way. */
  postMessage(message) {
    if (this.closed) return;
    // While the object is left alone, an answer's note would be stale when it goes: dropped
    // (an opening, a closing or a hold says when, and waits).
    if ((message[1] === 1 || message[1] === 2) && this.notBefore !== 0 && Date.now() < this.notBefore) return;
    this.queue.push(message);
    if (this.queue.length > MAX_QUEUE) this.queue.shift();
    if (message[1] === 1) this.followUntil = Date.now() + FOLLOW_FOR_MS;
    this.heed(message);
    this.flush(false);
  }

  /** A call starts: refresh the view if it may be stale and the origins are troubled. */
  poke() {
    if (this.queue.length > 0) this.flush(true);
    else if (this.troubledUntil !== 0) {
      // Healthy origins (the common case) cost this one comparison.
      if (Date.now() < this.troubledUntil) this.flush(true);
      else this.troubledUntil = 0;
    }
  }

  close() {
    this.closed = true;
    this.queue.length = 0;
  }

  /** Notes that say an origin is troubled keep the view refreshed for a while. */
  heed([, kind, , at]) {
    if (kind === 1 || kind === 3 || kind === 5) {
      const now = Date.now();
      const until = Math.min(now + MAX_TROUBLE_MS, Math.max(now + QUIET_MS, kind === 1 ? 0 : at + QUIET_MS));
      this.troubledUntil = Math.max(this.troubledUntil, until);
    }
  }

  /** Starts an exchange in the background, unless one is under way or it is too soon. */
  flush(refresh) {
    if (this.closed) return;
    const now = Date.now();
    if ((this.busy && now - this.last < STALE_MS) || now < this.notBefore ||
        (refresh && this.queue.length === 0 && now - this.last < REFRESH_MS)) return;
    this.busy = true;
    this.last = now;
    // Outside a request (a client made in a module's global scope) there is no waitUntil
    // and no I/O: asked first, before a note leaves the queue, so the notes (the hello among
    // them) wait for the first call.
    let start;
    try {
      waitUntil(new Promise((resolve) => { start = resolve; }));
    } catch {
      this.busy = false;
      return;
    }
    start(this.exchange(++this.run));
  }

  /** Exchanges until nothing is left to send: the queued notes go, the others' notes come. */
  async exchange(run) {
    const started = Date.now();
    try {
      while (!this.closed && run === this.run) {
        this.last = Date.now();
        const notes = this.queue.splice(0, MAX_QUEUE);
        let answer;
        try {
          // A stub per exchange: none is kept across requests.
          const stub = this.ns.get(this.ns.idFromName(this.name));
          answer = await within(stub.exchange({ cursor: this.cursor, notes }), EXCHANGE_MS);
        } catch {
          if (run !== this.run) return;
          // Sharing is a hint: the notes are dropped, and the object left alone for a while.
          this.notBefore = Date.now() + this.backoff;
          this.backoff = Math.min(MAX_BACKOFF_MS, this.backoff * 2);
          return;
        }
        if (run !== this.run) return;
        this.backoff = BACKOFF_MS;
        this.notBefore = 0;
        if (answer && typeof answer === "object") {
          if (Number.isSafeInteger(answer.cursor) && answer.cursor >= 0) this.cursor = answer.cursor;
          for (const note of Array.isArray(answer.notes) ? answer.notes.slice(0, MAX_RING) : []) {
            if (this.closed) break;
            if (isNote(note)) this.heed(note);
            // site.js checks each message as it checks a BroadcastChannel's.
            try {
              this.onmessage?.({ data: note });
            } catch { /* a note that cannot be applied is dropped */ }
          }
        }
        if (Date.now() - started >= RUN_MS) return;
        if (this.queue.length === 0) {
          if (Date.now() >= this.followUntil) return;
          // At once after an exchange that told something (the peers that told at the same
          // moment are heard), then every FOLLOW_MS.
          if (notes.length === 0) await new Promise((resolve) => setTimeout(resolve, FOLLOW_MS));
        }
      }
    } finally {
      if (run === this.run) this.busy = false;
    }
  }
}

globalThis[Symbol.for("resilient-fetch.edge")] = Object.freeze({ channel: (name, ns) => new EdgeChannel(name, ns) });

/**
 * The Durable Object that carries a share name's notes between the isolates of a Worker
 * (bind it, and name it in `share: { name, durableObject }`). It keeps per origin only its
 * state (open until when, by which rank; held until when) and the recent notes (kind,
 * origin, time, rank), in memory: never a path, query, header, body or key. Junk and notes
 * of another version are dropped.
 */
export class OriginHealth extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.seq = 0;
    this.ring = []; // [seq, heard at, note]
    this.origins = new Map(); // origin -> { heard, open: [until, rank] | null, hold }, least recently heard first
  }

  /**
   * One client's exchange: `{ cursor, notes }` (the last seq it has seen, its notes since).
   * Answers `{ cursor, notes }`: the other clients' notes after its cursor, or, for a client
   * that starts (or fell behind), what is open and held now.
   */
  exchange(batch) {
    const now = Date.now();
    const cursor = Number.isSafeInteger(batch?.cursor) && batch.cursor >= 0 ? batch.cursor : 0;
    const given = Array.isArray(batch?.notes) ? batch.notes.slice(0, MAX_QUEUE) : [];
    this.forget(now);
    const oldest = this.ring.length > 0 ? this.ring[0][0] : this.seq + 1;
    // A client that starts, or whose cursor is from before the oldest note kept (or from
    // another life of this object), is told what is open and held; the others, the notes
    // they have not heard. Neither gets its own notes back.
    const behind = cursor === 0 || cursor + 1 < oldest || cursor > this.seq;
    const notes = behind || given.some((n) => isNote(n) && n[1] === 0) ? this.describe(now) : [];
    if (!behind) {
      for (const [seq, , note] of this.ring) if (seq > cursor) notes.push(note);
    }
    for (const note of given) {
      if (!isNote(note) || note[1] === 0) continue;
      const kept = [VERSION, note[1], note[2], note[3], note[4]];
      this.ring.push([++this.seq, now, kept]);
      this.remember(kept, now);
    }
    return { cursor: this.seq, notes };
  }

  /** A note's effect on the origin's state. */
  remember([, kind, origin, at, rank], now) {
    const state = this.origins.get(origin) ?? { heard: now, open: null, hold: 0 };
    this.origins.delete(origin);
    state.heard = now;
    if (kind === 3 && (state.open === null || at >= state.open[0] || state.open[0] <= now)) state.open = [at, rank];
    if (kind === 4) state.open = null;
    if (kind === 5) state.hold = Math.max(state.hold, at);
    this.origins.set(origin, state);
  }

  /** What is open and held now, as notes. */
  describe(now) {
    const notes = [];
    for (const [origin, { open, hold }] of this.origins) {
      if (open !== null && open[0] > now) notes.push([VERSION, 3, origin, open[0], open[1]]);
      if (hold > now) notes.push([VERSION, 5, origin, hold, 0]);
    }
    return notes;
  }

  /** Drops old notes and the origins nobody spoke of for FORGET_MS (and any beyond MAX_ORIGINS). */
  forget(now) {
    while (this.ring.length > MAX_RING || (this.ring.length > 0 && now - this.ring[0][1] > RING_MS)) this.ring.shift();
    for (const [origin, state] of this.origins) {
      if (this.origins.size <= MAX_ORIGINS && now - state.heard <= FORGET_MS) break;
      this.origins.delete(origin);
    }
  }
}

// ---------------------------------------------------------------- the outbox
/** Where an entry is kept in the object's storage. */
const ENTRY = "entry:";
/** The alarm's replay rounds: equal jitter over a window doubling from 1 s to 5 min (as the outbox's own timer). */
const FIRST_MS = 1_000, LAST_MS = 300_000;
// The first replay after a write is kept comes no sooner: an isolate whose call gave up on the
// put (it answered after the call's deadline) takes it back first.
const KEEP_GRACE_MS = 2_000;

/** How js/site.js asks a store whether it replays its entries on a schedule of its own. */
const ELSEWHERE = Symbol.for("resilient-fetch.outbox");

/**
 * An outbox store over Durable Object storage (`ctx.storage`): the entries under ENTRY. Its
 * replays are the object's alarm's: the outbox starts no timer of its own (a timer would keep
 * the object in memory, and billed, between replays).
 */
function storageStore(storage) {
  const store = {
    put: (entry) => storage.put(ENTRY + entry.id, entry),
    delete: async (id) => { await storage.delete(ENTRY + id); },
    list: async () => [...(await storage.list({ prefix: ENTRY })).values()],
    get: (id) => storage.get(ENTRY + id),
    count: async () => (await storage.list({ prefix: ENTRY })).size,
    [ELSEWHERE]: () => ({ store }),
  };
  return store;
}

/**
 * The Durable Object that keeps and replays the entries of an outbox name for every isolate
 * of a Worker (bind it, and give `outbox: { name, store: durableOutbox(env.RF_OUTBOX) }`).
 * One object per name: one replayer. It replays through a ResilientClient of its own, with
 * the package's replay (the same key, the same order per origin, the same dead letters);
 * a subclass may give that client's policy (`replayPolicy()`) and an `onReplay(request)`
 * that attaches fresh credentials (Authorization, Cookie and Proxy-Authorization are never
 * stored).
 */
export class DurableOutbox extends DurableObject {
  /** The policy of the client that replays (its `outbox` is this object's). */
  replayPolicy() {
    return {};
  }

  /** The outbox of `name`: made once per object (an object serves one name). */
  box(name) {
    if (this.client === undefined) {
      const policy = this.replayPolicy();
      const onReplay = typeof this.onReplay === "function" ? (request) => this.onReplay(request) : undefined;
      this.client = new ResilientClient({
        ...policy,
        outbox: { ...(typeof policy.outbox === "object" ? policy.outbox : {}), name, store: storageStore(this.ctx.storage), onReplay },
      });
      this.name = name;
    }
    return this.client.outbox;
  }

  /** Keeps (or rewrites) an entry, and makes sure a replay is coming. */
  async put(name, entry) {
    this.box(name);
    await this.ctx.storage.put({ [ENTRY + entry.id]: entry, name });
    if ((await this.ctx.storage.getAlarm()) === null) await this.arm(0);
  }

  async delete(name, id) {
    await this.ctx.storage.delete(ENTRY + id);
  }

  async list(name) {
    return storageStore(this.ctx.storage).list();
  }

  async get(name, id) {
    return this.ctx.storage.get(ENTRY + id);
  }

  async count(name) {
    return storageStore(this.ctx.storage).count();
  }

  /** `client.outbox` of an isolate: the object's. */
  entries(name, dead) {
    return dead ? this.box(name).deadLetters() : this.box(name).list();
  }

  async flush(name) {
    const tally = await this.box(name).flush();
    await this.after(tally);
    return tally;
  }

  async retry(name, id) {
    const found = await this.box(name).retry(id);
    if (found) await this.arm(0);
    return found;
  }

  discard(name, id) {
    return this.box(name).discard(id);
  }

  /** The alarm: a replay; another while entries wait, further apart each round. */
  async alarm() {
    const name = await this.ctx.storage.get("name");
    if (typeof name !== "string") return;
    let tally;
    try {
      tally = await this.box(name).flush();
    } catch {
      tally = { waiting: 1 };
    }
    await this.after(tally);
  }

  /** After a replay: the next alarm while entries wait (later each round), none once all are done. */
  async after(tally) {
    if (tally?.waiting > 0) await this.arm(((await this.ctx.storage.get("round")) ?? 0) + 1);
    else if (await this.kept()) await this.arm(0);
    else {
      await this.ctx.storage.delete("round");
      await this.ctx.storage.deleteAlarm();
    }
  }

  /** Whether an entry waits that the replay did not count (kept while it ran, or held). */
  async kept() {
    const entries = await this.ctx.storage.list({ prefix: ENTRY });
    return [...entries.values()].some((e) => e?.deadLetter == null);
  }

  /** The alarm for replay round `round` (0: the first, within a second). */
  async arm(round) {
    const window = Math.min(LAST_MS, FIRST_MS * 2 ** round);
    await this.ctx.storage.put("round", round);
    // Not before a write just kept may be replayed.
    const wait = Math.max(round === 0 ? KEEP_GRACE_MS : 0, window / 2 + Math.random() * (window / 2));
    await this.ctx.storage.setAlarm(Date.now() + wait);
  }
}

/** Keeps `work` alive past the request (Workers end a request's I/O with it); returns it. */
function background(work) {
  try {
    waitUntil(work);
  } catch { /* outside a request: it runs as far as the platform lets it */ }
  return work;
}

/**
 * An outbox store for `outbox.store` in a Worker: the entries live in the `DurableOutbox`
 * object of the outbox's name in namespace `ns` (`env.RF_OUTBOX`), which replays them; this
 * client keeps its calls there, and its `client.outbox` is the object's. Each operation makes
 * its own stub.
 */
export function durableOutbox(ns) {
  const at = (name) => ns.get(ns.idFromName(name));
  const unnamed = () => Promise.reject(new TypeError("durableOutbox(): give it as outbox.store"));
  return Object.freeze({
    // Used before the outbox is open (the policy check asks for these three).
    put: unnamed,
    delete: unnamed,
    list: unnamed,
    /** Called by the outbox of `name` (js/site.js): the store and the api it uses instead of its own. */
    [ELSEWHERE](name) {
      return {
        store: {
          put: (entry) => at(name).put(name, entry),
          // A take-back (a put the call gave up on) runs after the call settled: the request's
          // waitUntil keeps it alive.
          delete: (id) => background(at(name).delete(name, id)),
          list: () => at(name).list(name),
          get: (id) => at(name).get(name, id),
          count: () => at(name).count(name),
        },
        api: Object.freeze({
          list: () => at(name).entries(name, false),
          deadLetters: () => at(name).entries(name, true),
          flush: () => at(name).flush(name),
          retry: (id) => at(name).retry(name, id),
          discard: (id) => at(name).discard(name, id),
        }),
      };
    },
  });
}
