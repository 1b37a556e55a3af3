// Outage amplification (bench/README.md): an origin on 127.0.0.1 that answers every request
// with 503, and M clients × K logical calls, sequential per client, the clients side by side.
// Counted: the requests the origin receives per logical call, and the time a logical call
// takes to fail. Every configuration waits 1 ms between attempts (instead of ~100 ms) so the
// run is short; amplification does not depend on the wait.
//
// Env: BENCH_CLIENTS (default 20), BENCH_CALLS_PER_CLIENT (default 50).

import { createServer } from "node:http";
import { performance } from "node:perf_hooks";

import { ResilientClient } from "resilient-fetch";
import ky from "ky";
import * as cockatiel from "cockatiel";
import CircuitBreaker from "opossum";

const M = Number(process.env.BENCH_CLIENTS ?? 20);
const K = Number(process.env.BENCH_CALLS_PER_CLIENT ?? 50);

let received = 0;
const server = createServer((req, res) => {
  received++;
  req.resume();
  res.writeHead(503, { "content-length": "0" });
  res.end();
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${server.address().port}/down`;

const FAST = { baseDelayMs: 1 };
const transient = (r) => [408, 429, 500, 502, 503, 504].includes(r?.status);

// Each configuration makes one caller per simulated client: its own state (breaker, budget),
// as separate processes would have. A caller resolves or rejects; either is a failed call.
const configurations = [
  {
    name: "ours: defaults (breaker + budget on), 3 attempts",
    ours: true,
    make: () => {
      const c = new ResilientClient({ retry: FAST });
      return () => c.fetch(url);
    },
  },
  {
    name: "ours: budget on, breaker off, 3 attempts",
    make: () => {
      const c = new ResilientClient({ breaker: false, retry: FAST });
      return () => c.fetch(url);
    },
  },
  {
    name: "ours: budget on, breaker off, 3 attempts, 4× the calls",
    callsPerClient: 4 * K,
    make: () => {
      const c = new ResilientClient({ breaker: false, retry: FAST });
      return () => c.fetch(url);
    },
  },
  {
    name: "ours: retries only (breaker:false, retryBudget:false), 3 attempts",
    make: () => {
      const c = new ResilientClient({
        breaker: false,
        retryBudget: false,
        retry: { maxAttempts: 3, ...FAST },
      });
      return () => c.fetch(url);
    },
  },
  {
    name: "ky: retry 2 (its default), 3 attempts",
    make: () => {
      const k = ky.create({ retry: { limit: 2, delay: () => 1 } });
      return () => k(url);
    },
  },
  {
    name: "cockatiel: retry 2 + breaker (5 in a row) + timeout",
    make: () => {
      const handled = cockatiel.handleAll.orWhenResult(transient);
      const policy = cockatiel.wrap(
        cockatiel.retry(handled, { maxAttempts: 2, backoff: new cockatiel.ConstantBackoff(1) }),
        cockatiel.circuitBreaker(handled, {
          halfOpenAfter: 30_000,
          breaker: new cockatiel.ConsecutiveBreaker(5),
        }),
        cockatiel.timeout(10_000, cockatiel.TimeoutStrategy.Aggressive),
      );
      return () => policy.execute(({ signal }) => fetch(url, { signal }));
    },
  },
  {
    name: "opossum: breaker (its defaults) + timeout, no retry",
    make: () => {
      const b = new CircuitBreaker(
        async (u) => {
          const r = await fetch(u);
          await r.arrayBuffer();
          if (transient(r)) throw new Error(`status ${r.status}`);
          return r;
        },
        { timeout: 10_000, resetTimeout: 30_000 },
      );
      return () => b.fire(url);
    },
  },
];

async function runClient(call, calls, latencies) {
  for (let i = 0; i < calls; i++) {
    const t0 = performance.now();
    try {
      const r = await call();
      await r.arrayBuffer?.();
    } catch {
      // A rejection is a failed call too.
    }
    latencies.push(performance.now() - t0);
  }
}

// Peers' warnings (e.g. listener counts) are collected and listed after the tables.
const warnings = new Map();
process.on("warning", (w) => {
  const where = (w.stack ?? "").split("\n").find((l) => l.includes("node_modules/")) ?? "";
  const from = where.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)?.[1] ?? "?";
  const key = `${w.name} from ${from}`;
  warnings.set(key, (warnings.get(key) ?? 0) + 1);
});

// Two passes over every configuration, fresh callers each time; the first warms up the
// platform's fetch, the server and the JIT, and is not shown.
async function measure(c) {
  received = 0;
  const callers = Array.from({ length: M }, () => c.make());
  const latencies = [];
  const calls = c.callsPerClient ?? K;
  const t0 = performance.now();
  await Promise.all(callers.map((call) => runClient(call, calls, latencies)));
  const wall = performance.now() - t0;
  latencies.sort((a, b) => a - b);
  const mean = latencies.reduce((a, b) => a + b, 0) / latencies.length;
  const p95 = latencies[Math.floor(latencies.length * 0.95)];
  return { name: c.name, ours: c.ours, received, perCall: received / (M * calls), mean, p95, wall };
}
for (const c of configurations) await measure(c);
const rows = [];
for (const c of configurations) rows.push(await measure(c));
server.close();
server.closeAllConnections?.();

const ms = (x) => (x < 10 ? x.toFixed(2) : x.toFixed(1));
console.log(`## Outage amplification (origin on 127.0.0.1 answers 503 to everything; ${M} clients × ${K} sequential logical calls)`);
console.log("");
console.log("Every configuration waits 1 ms between attempts (baseDelayMs 1, ky delay 1 ms, cockatiel ConstantBackoff(1)),");
console.log("so times to fail are short; requests per logical call do not depend on the wait. One client = its own state");
console.log("(a ResilientClient, a ky instance, a cockatiel policy, an opossum breaker), as separate processes would have.");
console.log("");
console.log("| configuration | requests received | per logical call | time to fail: mean ms | p95 ms | wall s |");
console.log("| --- | ---: | ---: | ---: | ---: | ---: |");
for (const r of rows) {
  console.log(`| ${r.name} | ${r.received} | ${r.perCall.toFixed(2)}× | ${ms(r.mean)} | ${ms(r.p95)} | ${(r.wall / 1000).toFixed(2)} |`);
}
console.log("");
const ours = rows.find((r) => r.ours);
console.log(`| target | measured | |`);
console.log(`| --- | --- | --- |`);
console.log(`| ≤ 1.1 requests per logical call with budget and breaker on | ${ours.perCall.toFixed(2)}× | ${ours.perCall <= 1.1 ? "met" : "NOT met"} |`);
if (warnings.size) {
  console.log("");
  for (const [k, n] of warnings) console.log(`(process warning: ${k}, ${n}×)`);
}
