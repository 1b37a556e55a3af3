//! The outbox's TypeScript declarations, sections of the package's (`src/wasm/types.rs`):
//! its options (in a build without it, `outbox: false` only), and `client.outbox`'s types (its
//! entries, its store and a flush; in both builds). tests/core_ts_defaults.rs reads this file with that one.

use wasm_bindgen::prelude::*;

/// `outbox` in a build without `outbox`: `false` (off) only.
#[cfg(not(feature = "outbox"))]
#[wasm_bindgen(typescript_custom_section)]
const NO_OUTBOX_TYPES: &str = r#"
export interface Policy {
  /** Not in this build: the outbox is in resilient-fetch/full. `false` (off) is accepted. */
  outbox?: false;
}
"#;

/// The options of the outbox (feature `outbox`): merged into `Policy` in the builds that have it.
#[cfg(feature = "outbox")]
#[wasm_bindgen(typescript_custom_section)]
const POLICY_TYPES: &str = r#"
export interface Policy {
  /**
   * Client only. A call with an idempotency key that ends without a definite answer (network
   * error, timeout, open breaker, full bulkhead, rate limit, throttling, deadline, or a 408/429/5xx
   * its attempts could not get past) is stored before it settles, rejects with a QueuedError, and
   * is delivered later with the same key (client.outbox). @default false (off)
   */
  outbox?: boolean | OutboxPolicy;
}

export interface OutboxPolicy {
  /** The outbox's name: the store and the replayer are per name (a name of 1 to 64 characters). @default "default" */
  name?: string;
  /** Entries kept at most, dead letters included (1..=100000). @default 1000 */
  maxEntries?: number;
  /** Age at which an entry becomes a dead letter, in ms from its first attempt (1000..=2147483647). @default 86400000 (a day) */
  maxAgeMs?: number;
  /** The largest body kept, in bytes (0..=67108864). @default 1048576 */
  maxBodyBytes?: number;
  /** Where entries are kept. Default: IndexedDB in browsers and their workers, memory elsewhere. */
  store?: OutboxStore;
  /** Called with each request before it is replayed; returns the request to send (e.g. with a fresh Authorization). */
  onReplay?: (request: Request) => Request | Promise<Request>;
}
"#;

/// `client.outbox`'s types, in both builds' declarations (the entry types name them).
#[wasm_bindgen(typescript_custom_section)]
const CLIENT_TYPES: &str = r#"
/** `client.outbox`: what the outbox holds, and what may be done to it. */
export interface Outbox {
  /** The entries waiting to be delivered, as stored. */
  list(): Promise<OutboxEntry[]>;
  /** The entries that will not be sent again (each with its `deadLetter`). */
  deadLetters(): Promise<OutboxEntry[]>;
  /** Replays the waiting entries now (after another replayer at work, if any). Rejects once the client is freed. */
  flush(): Promise<OutboxFlush>;
  /** Makes entry `id` (a dead letter, or one waiting) wait again with its age counted from now, then replays; false if there is none. */
  retry(id: string): Promise<boolean>;
  /** Removes entry `id` (waiting or dead); false if there is none. */
  discard(id: string): Promise<boolean>;
}

/** A store of outbox entries: a file, Deno KV, a Durable Object's storage... */
export interface OutboxStore {
  put(entry: OutboxEntry): void | Promise<void>;
  delete(id: string): void | Promise<void>;
  /**
   * Every entry. An item may be a promise of one (a read per entry): one that rejects costs
   * that entry only (it waits), and undefined is no entry (gone since the store listed it).
   */
  list(): (OutboxEntry | Promise<OutboxEntry | undefined>)[] | Promise<(OutboxEntry | Promise<OutboxEntry | undefined>)[]>;
  /** Optional: the entry `id` (undefined if none), so that keeping a call need not list every entry. */
  get?(id: string): OutboxEntry | undefined | Promise<OutboxEntry | undefined>;
  /** Optional: how many entries are stored, so that keeping a call need not list every entry. */
  count?(): number | Promise<number>;
}

/** A kept request, as stored (never with Authorization, Cookie or Proxy-Authorization). */
export interface OutboxEntry {
  /** The entry's id (its idempotency key). */
  id: string;
  origin: string;
  url: string;
  method: string;
  headers: [string, string][];
  body: ArrayBuffer | null;
  credentials: "omit" | "same-origin" | "include";
  redirect: "follow" | "error" | "manual";
  idempotencyKey: string;
  /** When the call first tried, in ms since the epoch. */
  firstAttemptAt: number;
  /** Attempts so far, replays included. */
  attempts: number;
  /** Why it was kept. */
  reason: OutboxReason;
  /** Set once it will not be sent again: a final refusal (status), too old (expired), or unsendable (invalid). */
  deadLetter?: { reason: "status" | "expired" | "invalid"; status?: number; at: number };
}

/** Why a call was kept in the outbox. */
export type OutboxReason =
  | "network" | "timeout" | "status" | "breakerOpen" | "bulkheadFull" | "rateLimited" | "throttled" | "deadline";

/** What a replay did. */
export interface OutboxFlush {
  delivered: number;
  deadLettered: number;
  waiting: number;
}
"#;
