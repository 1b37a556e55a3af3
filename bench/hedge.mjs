// The read path's tail (bench/README.md): hedged reads against a server whose answers are
// fast except a small share that are very slow, on 127.0.0.1 in this process.
//
// The server answers each request after 2–5 ms, except a share (BENCH_HEDGE_TAIL, default 2 %)
// that it answers after 1–2 s (drawn per request from a seeded generator, so every
// configuration meets the same mix). The anchor is Dean and Barroso, "The Tail at Scale"
// (CACM 2013): a hedge after 10 ms cut p99.9 from 1 800 ms to 74 ms for 2 % more requests.
// BENCH_HEDGE_CALLS GETs (default 10 000) are issued at a steady BENCH_HEDGE_RATE per second
// (default 1 000; issued on a clock, not awaited one by one), each read to its end, under:
// plain fetch; resilient-fetch with hedging off; a fixed 10 ms hedge delay; and "auto" (the
// origin's p95, within the defaults' 10 ms .. 2 s). Counted: each call's latency (from the call
// to its body read; p50, p99, p99.9, max) and the requests the server received per call.
// Goal: with "auto", p99.9 at least 10× lower than without hedging, for at most 5 % extra requests.

import { createServer } from "node:http";
import { performance } from "node:perf_hooks";

// Hedged reads are a capability of the full build.
import { ResilientClient } from "resilient-fetch/full";

const CALLS = Number(process.env.BENCH_HEDGE_CALLS ?? 10_000);
const RATE = Number(process.env.BENCH_HEDGE_RATE ?? 1000);
const TAIL = Number(process.env.BENCH_HEDGE_TAIL ?? 0.02);

/** mulberry32: a small seeded generator, so every configuration meets the same delays. */
function seeded(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let random = seeded(1);
let received = 0;
const server = createServer((req, res) => {
  received++;
  const slow = random() < TAIL;
  const ms = slow ? 1000 + random() * 1000 : 2 + random() * 3;
  const timer = setTimeout(() => { res.writeHead(200, { "content-type": "text/plain" }); res.end("ok"); }, ms);
  res.on("close", () => clearTimeout(timer));
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const URL_ = `http://127.0.0.1:${server.address().port}/item`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs CALLS reads through `get` at RATE per second; { latencies (sorted), requests, failed }. */
async function run(get) {
  random = seeded(1);
  received = 0;
  const latencies = [];
  let failed = 0;
  const pending = [];
  const t0 = performance.now();
  for (let i = 0; i < CALLS; i++) {
    const due = t0 + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    const start = performance.now();
    pending.push(get(URL_).then(
      async (res) => { await res.text(); latencies.push(performance.now() - start); },
      () => { failed++; },
    ));
  }
  await Promise.all(pending);
  await sleep(100); // the server has counted every request
  latencies.sort((a, b) => a - b);
  return { latencies, requests: received, failed };
}

const at = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
const configs = [
  ["plain fetch", () => (url) => fetch(url)],
  ["resilient-fetch, hedging off", () => { const c = new ResilientClient(); return (url) => c.fetch(url); }],
  ["hedge after 10 ms", () => { const c = new ResilientClient({ hedge: { delayMs: 10 } }); return (url) => c.fetch(url); }],
  ['hedge "auto" (p95, 10 ms .. 2 s)', () => { const c = new ResilientClient({ hedge: true }); return (url) => c.fetch(url); }],
];
const rows = [];
for (const [name, make] of configs) {
  process.stderr.write(`[hedge] ${name}: ${CALLS} GETs at ${RATE}/s\n`);
  const r = await run(make());
  rows.push({ name, ...r });
}
server.close();

const off = rows[1];
const fmt = (ms) => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1));
console.log("## The read path's tail: hedged reads");
console.log("");
console.log(`${CALLS} GETs at ${RATE}/s against a server on 127.0.0.1 that answers in 2–5 ms, except ${(TAIL * 100).toFixed(1)} % of requests`);
console.log("that take 1–2 s (the same seeded mix for every row). Latency is from the call to its body read, in ms;");
console.log('"extra" is requests the server received beyond one per call. Ratios are against hedging off.');
console.log("");
console.log("| configuration | p50 | p99 | p99.9 | max | p99.9: off ÷ this | requests per call | extra | failed |");
console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
for (const r of rows) {
  const l = r.latencies;
  const ratio = at(off.latencies, 0.999) / at(l, 0.999);
  console.log(`| ${r.name} | ${fmt(at(l, 0.5))} | ${fmt(at(l, 0.99))} | ${fmt(at(l, 0.999))} | ${fmt(l.at(-1))} | ` +
    `${ratio.toFixed(1)}× | ${(r.requests / CALLS).toFixed(3)} | ` +
    `${(((r.requests - CALLS) / CALLS) * 100).toFixed(1)} % | ${r.failed} |`);
}
const auto = rows[3];
const gain = at(off.latencies, 0.999) / at(auto.latencies, 0.999);
const extra = (auto.requests - CALLS) / CALLS;
console.log("");
console.log(`Goal (auto): p99.9 at least 10× lower than hedging off for at most 5 % extra requests: ` +
  `${gain.toFixed(1)}× lower, ${(extra * 100).toFixed(1)} % extra: ${gain >= 10 && extra <= 0.05 ? "met" : "NOT met"}.`);
