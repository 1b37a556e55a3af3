// Fallback through an outage (bench/README.md): what a caller sees while its origin is down.
//
// 1. failover: a primary origin on 127.0.0.1 answers 503 to everything for BENCH_FALLBACK_OUTAGE_MS
//    (10 s) while an alternate on another port stays healthy. BENCH_FALLBACK_LOOPS callers (8) each
//    send GETs one after another (BENCH_FALLBACK_GAP_MS, 10 ms, apart) from the outage's start to its
//    end. Counted: the calls that reached the caller as an error (a rejection or a 5xx: goal 0), and
//    each call's time against the same configuration's healthy run (no outage): the latency the
//    outage added. Beside ours: ours without `failover`, and cockatiel (a retry, a breaker and a
//    `fallback` to the alternate, the peer's way to fail over).
// 2. stale: one origin; BENCH_FALLBACK_URLS (50) different GETs are answered once each before the
//    outage, then asked again and again through it. Counted: errors seen (goal 0 with `stale`), and
//    how many of the answers were served stale (the `resilient-fetch-stale` marker).
//
// Every configuration uses a short backoff (baseDelayMs 5) so that the outage is many calls long.

import { createServer } from "node:http";
import { performance } from "node:perf_hooks";

import { ResilientClient } from "resilient-fetch/full";
import * as cockatiel from "cockatiel";

const OUTAGE_MS = Number(process.env.BENCH_FALLBACK_OUTAGE_MS ?? 10_000);
const LOOPS = Number(process.env.BENCH_FALLBACK_LOOPS ?? 8);
const GAP_MS = Number(process.env.BENCH_FALLBACK_GAP_MS ?? 10);
const URLS = Number(process.env.BENCH_FALLBACK_URLS ?? 50);
const MARKER = "resilient-fetch-stale";

/** A server on 127.0.0.1 that answers 200 "ok" (cacheable for a second), or 503 while `down`. */
async function origin() {
  const o = { down: false, received: 0 };
  o.server = createServer((req, res) => {
    o.received++;
    req.resume();
    if (o.down) {
      res.writeHead(503, { "content-length": "0" });
      res.end();
      return;
    }
    const body = `ok ${req.url}`;
    res.writeHead(200, { "content-type": "text/plain", "cache-control": "max-age=1", "content-length": Buffer.byteLength(body) });
    res.end(body);
  });
  await new Promise((resolve) => o.server.listen(0, "127.0.0.1", resolve));
  o.url = `http://127.0.0.1:${o.server.address().port}`;
  return o;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const FAST = { baseDelayMs: 5 };

/** One call through `call(path)`: its time, whether the caller saw an error, whether it was stale. */
async function once(call, path) {
  const t0 = performance.now();
  let error = false;
  let stale = false;
  try {
    const r = await call(path);
    await r.arrayBuffer();
    error = r.status >= 500;
    stale = r.headers.has(MARKER);
  } catch {
    error = true;
  }
  return { ms: performance.now() - t0, error, stale };
}

/** LOOPS callers, one call after another, for `ms`; `paths(i)` is the i-th call's path. */
async function drive(call, ms, paths) {
  const results = [];
  const until = performance.now() + ms;
  let n = 0;
  await Promise.all(Array.from({ length: LOOPS }, async () => {
    while (performance.now() < until) {
      results.push(await once(call, paths(n++)));
      await sleep(GAP_MS);
    }
  }));
  return results;
}

function summary(results) {
  const times = results.map((r) => r.ms).sort((a, b) => a - b);
  const at = (q) => times[Math.min(times.length - 1, Math.floor(times.length * q))];
  return {
    calls: results.length,
    errors: results.filter((r) => r.error).length,
    stale: results.filter((r) => r.stale).length,
    mean: times.reduce((a, b) => a + b, 0) / times.length,
    p50: at(0.5),
    p99: at(0.99),
  };
}

const ms = (x) => (x < 10 ? x.toFixed(2) : x.toFixed(1));
const signed = (x) => `${x >= 0 ? "+" : "−"}${ms(Math.abs(x))}`;

// ---- 1. failover
const primary = await origin();
const alternate = await origin();
const failovers = [
  {
    name: "ours: failover to the alternate",
    ours: true,
    make: () => {
      const c = new ResilientClient({ retry: FAST, failover: { [primary.url]: [alternate.url] } });
      return (path) => c.fetch(primary.url + path);
    },
  },
  {
    name: "ours: no failover",
    make: () => {
      const c = new ResilientClient({ retry: FAST });
      return (path) => c.fetch(primary.url + path);
    },
  },
  {
    name: "cockatiel: fallback to the alternate around retry 2 + breaker (5 in a row)",
    make: () => {
      const transient = (r) => r.status >= 500;
      const handled = cockatiel.handleAll.orWhenResult(transient);
      let path = "";
      const inner = cockatiel.wrap(
        cockatiel.retry(handled, { maxAttempts: 2, backoff: new cockatiel.ConstantBackoff(5) }),
        cockatiel.circuitBreaker(handled, { halfOpenAfter: 30_000, breaker: new cockatiel.ConsecutiveBreaker(5) }),
      );
      const policy = cockatiel.wrap(cockatiel.fallback(handled, () => fetch(alternate.url + path)), inner);
      return (p) => {
        path = p;
        return policy.execute(({ signal }) => fetch(primary.url + p, { signal }));
      };
    },
  },
];

// A warm-up of every configuration first (not shown): the platform's fetch, the servers and the
// JIT warm, so that no configuration's healthy run pays for it.
for (const c of failovers) await drive(c.make(), OUTAGE_MS / 10, () => "/warm");
const rows = [];
for (const c of failovers) {
  primary.down = false;
  const healthy = summary(await drive(c.make(), OUTAGE_MS / 4, () => "/healthy"));
  const call = c.make();
  primary.down = true;
  [primary.received, alternate.received] = [0, 0];
  const outage = summary(await drive(call, OUTAGE_MS, () => "/outage"));
  primary.down = false;
  rows.push({ c, healthy, outage, sent: [primary.received, alternate.received] });
}

console.log(`## Fallback through a ${OUTAGE_MS / 1000} s outage (servers on 127.0.0.1)`);
console.log("");
console.log(`Failover: the primary answers 503 to everything for ${OUTAGE_MS / 1000} s; an alternate stays healthy. ${LOOPS} callers,`);
console.log(`GETs one after another ${GAP_MS} ms apart; the added time is the outage's mean and p99 against the same`);
console.log("configuration's healthy run (a quarter as long, fresh client, after a warm-up of every configuration), so the server's own cost cancels out.");
console.log("");
console.log("| configuration | calls | errors seen | sent: primary / alternate | mean ms (healthy) | added mean | p99 ms (healthy) | added p99 |");
console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
for (const { c, healthy, outage, sent } of rows) {
  console.log(`| ${c.name} | ${outage.calls} | ${outage.errors} | ${sent[0]} / ${sent[1]} | ${ms(outage.mean)} (${ms(healthy.mean)}) | ${signed(outage.mean - healthy.mean)} | ${ms(outage.p99)} (${ms(healthy.p99)}) | ${signed(outage.p99 - healthy.p99)} |`);
}
primary.server.close();
alternate.server.close();
primary.server.closeAllConnections?.();
alternate.server.closeAllConnections?.();

// ---- 2. stale
const only = await origin();
const stales = [
  { name: "ours: stale", ours: true, policy: { retry: FAST, stale: true } },
  { name: "ours: no stale", policy: { retry: FAST } },
];
const staleRows = [];
for (const c of stales) {
  only.down = false;
  const client = new ResilientClient(c.policy);
  const call = (path) => client.fetch(only.url + path);
  // Each URL answered once before the outage (its body read, so it is kept).
  for (let i = 0; i < URLS; i++) await once(call, `/item/${c.ours ? "s" : "n"}${i}`);
  only.down = true;
  only.received = 0;
  const outage = summary(await drive(call, OUTAGE_MS, (n) => `/item/${c.ours ? "s" : "n"}${n % URLS}`));
  only.down = false;
  staleRows.push({ c, outage, sent: only.received });
}
only.server.close();
only.server.closeAllConnections?.();

console.log("");
console.log(`Stale: ${URLS} GETs answered once before the outage, then asked again through it (the origin answers 503`);
console.log("to everything); with `stale`, a kept answer is served while the origin fails.");
console.log("");
console.log("| configuration | calls | errors seen | served stale | requests the origin got | mean ms | p99 ms |");
console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
for (const { c, outage, sent } of staleRows) {
  console.log(`| ${c.name} | ${outage.calls} | ${outage.errors} | ${outage.stale} | ${sent} | ${ms(outage.mean)} | ${ms(outage.p99)} |`);
}
console.log("");
const ours = rows.find((r) => r.c.ours).outage;
const oursStale = staleRows.find((r) => r.c.ours).outage;
console.log("| target | measured | |");
console.log("| --- | --- | --- |");
console.log(`| 0 errors seen through the outage with a healthy alternate | ${ours.errors} | ${ours.errors === 0 ? "met" : "NOT met"} |`);
console.log(`| 0 errors seen for GETs answered before the outage, with \`stale\` | ${oursStale.errors} | ${oursStale.errors === 0 ? "met" : "NOT met"} |`);
