//! The TypeScript declarations of `client.outbox`: its entries, its store and a flush.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const OUTBOX_TYPES: &str = r#"
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
