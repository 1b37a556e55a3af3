// The Cloudflare Workers entry (workerd.js, the "workerd" condition): everything index.d.ts
// declares, and the Durable Objects that share origin health and keep the outbox across the
// isolates of a Worker (bind them in the Worker's configuration; see the README).
export * from "./index.js";
export { default } from "./index.js";
import type { OutboxStore, OutboxFlush, OutboxEntry, Policy } from "./index.js";

/**
 * The Durable Object behind `share: { name, durableObject }`: it carries a share name's notes
 * (origins, states, times and ranks) between isolates, in memory. Export it from the Worker's
 * main module and bind its namespace (e.g. `RF_HEALTH`).
 */
export declare class OriginHealth {
  constructor(ctx: unknown, env: unknown);
  /** One client's exchange: its notes since `cursor`, answered with the others'. */
  exchange(batch: { cursor: number; notes: unknown[] }): { cursor: number; notes: unknown[] };
}

/**
 * The Durable Object behind `outbox: { name, store: durableOutbox(env.RF_OUTBOX) }`: it keeps
 * an outbox name's entries in its storage and replays them on its alarm. A subclass may give
 * the replaying client's policy (`replayPolicy()`) and `onReplay(request)` (fresh credentials).
 */
export declare class DurableOutbox {
  constructor(ctx: unknown, env: unknown);
  /** The policy of the client that replays (its `outbox` is this object's). */
  replayPolicy(): Policy;
  /** Called with each request before it is replayed; returns the request to send. */
  onReplay?(request: Request): Request | Promise<Request>;
  alarm(): Promise<void>;
  flush(name: string): Promise<OutboxFlush>;
  entries(name: string, dead: boolean): Promise<OutboxEntry[]>;
}

/** An `outbox.store` whose entries live in the `DurableOutbox` object of the outbox's name in `namespace`. */
export declare function durableOutbox(namespace: { idFromName(name: string): unknown; get(id: any): any }): OutboxStore;
