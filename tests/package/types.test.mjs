// The TypeScript declarations, as a TypeScript user meets them: a strict
// program using the installed package must compile, and misuse must not.
import test from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { SCRATCH } from "./helpers.mjs";

const tsc = path.join(process.env.RF_TOOLS_DIR, "node_modules", "typescript", "bin", "tsc");
const CONFIG = {
  compilerOptions: {
    strict: true, noEmit: true, target: "es2022", module: "nodenext", moduleResolution: "nodenext",
    lib: ["es2022", "dom"], skipLibCheck: false, types: [],
  },
};

/** Type-checks `source` as main.ts of an ES module package, or as main.cts (CommonJS). */
function compile(name, source, file = "main.ts") {
  const dir = path.join(SCRATCH, "ts-" + name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify({ ...CONFIG, files: [file] }));
  fs.writeFileSync(path.join(dir, file), source);
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ type: "module" }));
  return spawnSync(process.execPath, [tsc, "-p", dir], { encoding: "utf8" });
}

test("a strict TypeScript program using the whole API compiles", () => {
  const r = compile("ok", `
import { resilientFetch, ResilientClient, TimeoutError, CircuitOpenError, BulkheadFullError,
  type Policy, type ResilienceEvent, type ClientStats, type BreakerState } from "resilient-fetch";

const policy: Policy = {
  timeoutMs: 5000, totalTimeoutMs: 20000,
  retry: { maxAttempts: 4, baseDelayMs: 50, maxDelayMs: 2000, jitter: "decorrelated", retryOn: [503], maxRetryAfterMs: 10000 },
  breaker: { mode: "failure-rate", failureRateThreshold: 0.5, minimumCalls: 10, windowType: "time", windowMs: 10000, cooldownMs: 5000, halfOpenMaxCalls: 2 },
  retryBudget: { capacity: 100, retryCost: 5, timeoutRetryCost: 10, noRetryIncrement: 1 },
  bulkhead: { maxConcurrent: 4, maxQueue: 8 },
  idempotencyKey: true, idempotencyHeader: "Idempotency-Key", maxOrigins: 100,
  onEvent: (e: ResilienceEvent) => { const t: string = e.type; void t; },
};
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
  }
  return res.status + r2.status + n + state.length;
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
