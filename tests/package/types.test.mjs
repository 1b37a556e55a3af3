// The TypeScript declarations, as a TypeScript user meets them: a strict
// program using the installed package must compile, and misuse must not.
import test from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { compileTs as compile, full, fullOnly, linkTools } from "./helpers.mjs";

// @cloudflare/workers-types, installed in tools/ (scripts/toolchain.sh).
const WORKERS_TYPES = path.join(process.env.RF_TOOLS_DIR, "node_modules", "@cloudflare", "workers-types");

// Run against both builds (tests/package/run.mjs): the programs that use a capability, against
// the full one only.
test("a strict TypeScript program using the whole API compiles", fullOnly(), () => {
  const r = compile("ok", `
import { resilientFetch, ResilientClient, TimeoutError, CircuitOpenError, BulkheadFullError, RateLimitError, ThrottledError,
  QueuedError, type Policy, type ResilienceEvent, type ClientStats, type BreakerState, type RateLimitPolicy,
  type ThrottlePolicy, type HedgePolicy, type OutboxPolicy, type OutboxStore, type OutboxEntry, type OutboxReason,
  type OutboxFlush, type Outbox }
  from "resilient-fetch";

const policy: Policy = {
  timeoutMs: 5000, totalTimeoutMs: 20000,
  retry: { maxAttempts: 4, baseDelayMs: 50, maxDelayMs: 2000, jitter: "decorrelated", retryOn: [503], maxRetryAfterMs: 10000 },
  breaker: { mode: "failure-rate", failureRateThreshold: 0.5, minimumCalls: 10, windowType: "time", windowMs: 10000, cooldownMs: 5000, halfOpenMaxCalls: 2 },
  retryBudget: { capacity: 100, retryCost: 5, timeoutRetryCost: 10, noRetryIncrement: 1 },
  bulkhead: { maxConcurrent: 4, maxQueue: 8 },
  rateLimit: { maxWaitMs: 5000 } satisfies RateLimitPolicy, throttle: { k: 1.5, windowMs: 60000 } satisfies ThrottlePolicy,
  idempotencyKey: true, idempotencyHeader: "Idempotency-Key", maxOrigins: 100,
  hedge: { delayMs: "auto", maxHedges: 2, minDelayMs: 5, maxDelayMs: 500 } satisfies HedgePolicy, coalesce: true,
  failover: { "https://api.example.com": ["https://api-eu.example.com"] },
  onEvent: (e: ResilienceEvent) => {
    const t: string = e.type;
    if (e.type === "hedge") { const n: number = e.attempt + e.delayMs; void n; }
    void t;
  },
};
const sharing = new ResilientClient({ share: "api", hedge: { delayMs: 20 } });
void sharing;
const held = new Map<string, OutboxEntry>();
const store: OutboxStore = {
  put: (e) => { held.set(e.id, e); },
  delete: async (id) => { held.delete(id); },
  list: () => [...held.values()],
};
// list() may give a promise per entry (a read each), some of them of no entry.
const readEach: OutboxStore = { ...store, list: async () => [...held.keys()].map(async (id) => held.get(id)) };
void readEach;
const outboxPolicy: OutboxPolicy = { name: "orders", store, maxEntries: 10, maxAgeMs: 60000, maxBodyBytes: 1024,
  onReplay: async (request: Request) => request };
const writer = new ResilientClient({ outbox: outboxPolicy, onEvent: (e) => {
  if (e.type === "queued") { const why: OutboxReason = e.reason; const id: string = e.id + e.idempotencyKey; void why; void id; }
  if (e.type === "replayed") { const n: number = e.attempt; void n; }
  if (e.type === "delivered") { const n: number = e.status; void n; }
  if (e.type === "deadLettered") { const why: "status" | "expired" | "invalid" = e.reason; const s: number | undefined = e.status; void why; void s; }
} });
async function outbox(): Promise<number> {
  const box: Outbox | undefined = writer.outbox;
  if (!box) return 0;
  const waiting: OutboxEntry[] = await box.list();
  const dead: OutboxEntry[] = await box.deadLetters();
  const tally: OutboxFlush = await box.flush();
  const again: boolean = (await box.retry(dead[0]?.id ?? "")) || (await box.discard("x"));
  try { await writer.fetch("http://127.0.0.1/orders", { method: "POST", body: "{}" }); } catch (e) {
    if (e instanceof QueuedError) {
      const id: string = e.id + e.idempotencyKey; const why: OutboxReason = e.reason;
      const last: Response | undefined = e.response; void id; void why; void last;
    } else if (e instanceof TimeoutError || e instanceof CircuitOpenError) {
      const why: string | undefined = e.notQueued; void why;
    }
  }
  const first = waiting[0];
  const size: number = (first?.body?.byteLength ?? 0) + (first?.headers.length ?? 0) + (first?.firstAttemptAt ?? 0)
    + (first?.deadLetter?.status ?? 0);
  return size + tally.delivered + tally.deadLettered + tally.waiting + Number(again);
}
void outbox;
async function main(): Promise<number> {
  const res: Response = await resilientFetch(new URL("http://127.0.0.1/x"), { method: "POST" }, policy);
  const client = new ResilientClient({ retry: false, breaker: false });
  const r2: Response = await client.fetch("http://127.0.0.1/y");
  const state: BreakerState = client.breakerState("http://127.0.0.1");
  const stats: ClientStats = client.stats();
  const n: number = stats["http://127.0.0.1"]?.attempts ?? 0;
  client.reset();
  try { await resilientFetch("x"); } catch (e) {
    if (e instanceof CircuitOpenError) { const ms: number = e.retryAfterMs; const o: string = e.origin; void ms; void o; }
    if (e instanceof TimeoutError) { const ms: number = e.timeoutMs; void ms; }
    if (e instanceof BulkheadFullError) { const o: string = e.origin; void o; }
    if (e instanceof RateLimitError) { const ms: number = e.retryAfterMs; const why: "quota" | "retryAfter" = e.reason; void ms; void why; }
    if (e instanceof ThrottledError) { const o: string = e.origin; void o; }
  }
  const s = stats["http://127.0.0.1"];
  const pace: number = (s?.waitMs ?? 0) + (s?.quotaRemaining ?? 0) + (s?.rateLimited ?? 0) + (s?.throttled ?? 0)
    + (s?.hedges ?? 0) + (s?.hedgeWins ?? 0);
  return res.status + r2.status + n + state.length + pace;
}
void main;
`);
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

test("misuse is a type error", () => {
  const r = compile("bad", `
import { resilientFetch } from "resilient-fetch";
void resilientFetch("http://127.0.0.1", {}, { retry: { jitter: "random" } });
`);
  assert.notEqual(r.status, 0, "an unknown jitter kind compiled");
  assert.match(r.stdout + r.stderr, /TS2322.*"random"/);
});

test("CommonJS TypeScript (require) sees what require returns: the API, no default export", () => {
  const ok = compile("cts-ok", `
import rf = require("resilient-fetch");
const client: rf.ResilientClient = new rf.ResilientClient({ retry: { maxAttempts: 2 } });
async function main(): Promise<number> {
  try {
    return (await rf.resilientFetch("http://127.0.0.1/x")).status + Object.keys(client.stats()).length;
  } catch (e) {
    return e instanceof rf.TimeoutError ? e.timeoutMs : e instanceof rf.CircuitOpenError ? e.retryAfterMs : 0;
  }
}
const p: rf.Policy = { timeoutMs: 1000 };
void main; void p; void rf.memoryBytes();
`, "main.cts");
  assert.equal(ok.status, 0, ok.stdout + ok.stderr);
  // node.cjs has no default export and no initSync: the CommonJS types must not offer them.
  const bad = compile("cts-bad", `
import rf = require("resilient-fetch");
void rf.default;
`, "main.cts");
  assert.notEqual(bad.status, 0, "rf.default type-checked under require");
  assert.match(bad.stdout + bad.stderr, /TS2339.*default/);
});

/** A program a user writes in any setup: the whole API, events narrowed by type. */
const EVERYWHERE = `
import { resilientFetch, ResilientClient, install, uninstall, type ResilienceEvent, type AttemptContext }
  from "resilient-fetch";
const seen: string[] = [];
const onEvent = (e: ResilienceEvent) => {
  seen.push(String(e.attempt ?? ""));
  if (e.type === "retry") { const ms: number = e.delayMs; const why: "status" | "network" | "timeout" | "shouldRetry" = e.reason; void ms; void why; }
  if (e.type === "breakerTransition") { const to: string = e.to; void to; }
  if (e.type === "giveUp") { const n: number = e.attempts; void n; }
  if (e.type === "rateLimitWait") { const ms: number = e.delayMs; const why: "quota" | "retryAfter" = e.reason; void ms; void why; }
  if (e.type === "throttled") { const p: number = e.probability; void p; }
};
const client = new ResilientClient({
  onEvent,
  fetch: (input, init) => fetch(input, init),
  retry: { shouldRetry: async (ctx: AttemptContext) => ctx.response?.status === 409 || undefined },
  breaker: { isFailure: ({ url }) => (url.includes("/reports/") ? false : undefined) },
});
async function main(): Promise<number> {
  const res: Response = await client.fetch(new URL("http://127.0.0.1/x"), { method: "POST", body: "{}" });
  const other: Response = await resilientFetch("http://127.0.0.1/y");
  const installed: ResilientClient = install({ timeoutMs: 1000 });
  const back: boolean = uninstall();
  return res.status + other.status + Object.keys(installed.stats()).length + Number(back);
}
void main;
`;

test("the declarations compile with Node's types alone (no DOM lib), strict, skipLibCheck off", () => {
  const r = compile("node-types", EVERYWHERE, "main.ts", { lib: ["es2022"], types: ["node"] });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

test("the declarations compile with Cloudflare's workers types (no DOM lib)", () => {
  // As a Worker's tsconfig has it: the package's globals (Request, Response, fetch, ...).
  const r = compile("workers-types", EVERYWHERE, "main.ts", { lib: ["es2022"], types: [] },
    [path.join(WORKERS_TYPES, "index.d.ts")]);
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

test("in a Worker (the workerd condition): the Durable Objects, share over one and an outbox store over another", fullOnly(), () => {
  const r = compile("workerd-entry", `
import { ResilientClient, OriginHealth, DurableOutbox, durableOutbox, type SharePolicy } from "resilient-fetch";
export { OriginHealth, DurableOutbox };
declare const env: { RF_HEALTH: DurableObjectNamespace; RF_OUTBOX: DurableObjectNamespace };
const share: SharePolicy = { name: "api", durableObject: env.RF_HEALTH };
export const api = new ResilientClient({ share, outbox: { name: "orders", store: durableOutbox(env.RF_OUTBOX) } });
export class Orders extends DurableOutbox {
  override replayPolicy() { return { retry: { maxAttempts: 2 } }; }
  override onReplay(request: Request) { return request; }
}
`, "main.ts", { lib: ["es2022"], types: [], customConditions: ["workerd"] }, [path.join(WORKERS_TYPES, "index.d.ts")]);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  // Elsewhere (no workerd condition) the Durable Objects are not declared: they are not there.
  const elsewhere = compile("no-workerd-entry", `import { OriginHealth } from "resilient-fetch";\nvoid OriginHealth;\n`);
  assert.notEqual(elsewhere.status, 0, "OriginHealth declared outside the Workers entry");
});

test("an event's fields are narrowed by its type: a retry's delayMs is a number, a success has none", () => {
  const ok = compile("events-dom", EVERYWHERE);
  assert.equal(ok.status, 0, ok.stdout + ok.stderr);
  const bad = compile("events-bad", `
import type { ResilienceEvent } from "resilient-fetch";
export const f = (e: ResilienceEvent): number => (e.type === "success" ? e.delayMs : 0);
`);
  assert.notEqual(bad.status, 0, "a success event's delayMs type-checked as a number");
  assert.match(bad.stdout + bad.stderr, /TS2322/);
});

/** resilient-fetch/otel as a user writes it, with @opentelemetry/api's own types. */
const OTEL = `
import { ResilientClient, install, type Policy } from "resilient-fetch";
import { instrument, type OtelOptions } from "resilient-fetch/otel";
import { metrics, trace } from "@opentelemetry/api";
const options: OtelOptions = {
  tracerProvider: trace.getTracerProvider(), meterProvider: metrics.getMeterProvider(),
  propagate: (url: string) => url.startsWith("https://api.example.com/"), keepQuery: false, name: "api",
};
const policy: Policy = { retry: { maxAttempts: 2 }, onEvent: (e) => void e.origin };
const api: ResilientClient = instrument(ResilientClient, policy, options);
const global: ResilientClient = instrument(install, { timeoutMs: 1000 }, { propagate: true });
const made = instrument((p: Policy) => new ResilientClient({ ...p, timeoutMs: 500 }));
${full() ? `// The full build's client takes its capabilities' options through instrument() too.
const hedged = instrument(ResilientClient, { hedge: { delayMs: 30 }, outbox: true, coalesce: true });
void hedged.outbox;` : ""}
async function main(): Promise<number> {
  return (await api.fetch("http://127.0.0.1/x")).status + Object.keys(made.stats()).length + Object.keys(global.stats()).length;
}
void main;
`;

test("resilient-fetch/otel's declarations compile with the DOM lib, Node's types, Workers' types, and under require", () => {
  linkTools(["@opentelemetry/api"]);
  for (const [name, options, extra] of [["otel-dom", {}, []], ["otel-node", { lib: ["es2022"], types: ["node"] }, []],
    ["otel-workers", { lib: ["es2022"], types: [] }, [path.join(WORKERS_TYPES, "index.d.ts")]]]) {
    const r = compile(name, OTEL, "main.ts", options, extra);
    assert.equal(r.status, 0, `${name}: ${r.stdout}${r.stderr}`);
  }
  const cts = compile("otel-cts", `
import rf = require("resilient-fetch");
import otel = require("resilient-fetch/otel");
const client: rf.ResilientClient = otel.instrument(rf.ResilientClient, { retry: false }, { name: "cjs" });
void client;
`, "main.cts");
  assert.equal(cts.status, 0, cts.stdout + cts.stderr);
  const bad = compile("otel-bad", `
import { ResilientClient } from "resilient-fetch";
import { instrument } from "resilient-fetch/otel";
void instrument(ResilientClient, {}, { propagate: "yes" });
`);
  assert.notEqual(bad.status, 0, "propagate: \"yes\" type-checked");
  assert.match(bad.stdout + bad.stderr, /TS2322/);
});
