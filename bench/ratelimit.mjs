// Rate limits (bench/README.md), two parts, every server on 127.0.0.1 in this process.
//
// 1. Pacing against a quota. An origin with a fixed-window quota of Q requests per second
//    (windows are whole wall-clock seconds) answers 200 within the quota and 429 with
//    Retry-After beyond it, and advertises the quota on every response in both header forms
//    (the IETF draft's RateLimit-Policy + RateLimit, and X-RateLimit-*). One client is driven
//    at a steady 3× the quota (calls issued on a clock, not awaited one by one) for S seconds,
//    with pacing off and on, retries off and on (and once with no guard at all: pacing, retries
//    and breaker off, since the default breaker opens on the 429s). Counted at the origin: requests, 429s and
//    goodput (200s per second from its first request to its last); at the caller: how each
//    call ended and how long the calls that got a 200 took. Goal: with pacing on, no 429 and
//    goodput within 5 % of the quota.
// 2. The SRE book's adaptive throttling. A backend that accepts C requests per second
//    (fixed 1 s windows) and answers 503 at once beyond that, driven at steady offered loads,
//    with the throttle off and on (k = 2; the two side by side, each with its own backend, which
//    halves the time this part takes). Counted at the backend: requests sent and accepted
//    per second; at the caller: requests refused locally (ThrottledError). The book: with
//    k = 2 about two requests are sent per accepted one however high the load.
//
// Each configuration starts at a window boundary with a fresh client, after the previous one's
// calls have all settled, the origin has answered everything, and one full window has passed.
// With pacing on, calls beyond the quota wait for it, so those runs last about 3× S (the backlog
// drains at the quota's rate): about 2 minutes in all with the defaults. Progress goes to stderr.
//
// Env: BENCH_RATELIMIT_SECONDS (default 10), BENCH_RATELIMIT_QUOTA (default 50),
// BENCH_RATELIMIT_RATE (offered calls per second, default 3 × the quota),
// BENCH_THROTTLE_SECONDS (default 5), BENCH_THROTTLE_CAPACITY (default 20),
// BENCH_THROTTLE_LOADS (offered rates, default "20,40,80,160,320").

import { createServer } from "node:http";
import { performance } from "node:perf_hooks";

// Pacing and throttling are capabilities of the full build.
import { ResilientClient, RateLimitError, ThrottledError } from "resilient-fetch/full";

const SECONDS = Number(process.env.BENCH_RATELIMIT_SECONDS ?? 10);
const QUOTA = Number(process.env.BENCH_RATELIMIT_QUOTA ?? 50);
const RATE = Number(process.env.BENCH_RATELIMIT_RATE ?? 3 * QUOTA);
const THROTTLE_SECONDS = Number(process.env.BENCH_THROTTLE_SECONDS ?? 5);
const CAPACITY = Number(process.env.BENCH_THROTTLE_CAPACITY ?? 20);
const LOADS = (process.env.BENCH_THROTTLE_LOADS ?? "20,40,80,160,320").split(",").map(Number);
const K = 2;
const THROTTLE_WINDOW_MS = THROTTLE_SECONDS * 1000;

const started = performance.now();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
// Until the next whole wall-clock second (a window boundary), then `extra` ms more.
const nextWindow = (extra = 0) => sleep(1000 - (Date.now() % 1000) + extra);

// An origin on 127.0.0.1 with fixed 1 s windows aligned to wall-clock seconds: `answer` is
// given the request's place in its window (1, 2, …) and the window's end (epoch ms) and sets
// the response. Counts what it received and what it answered, and which requests it is still
// answering (so a run can wait for it to drain).
async function origin(answer) {
  const o = {
    window: -1,
    inWindow: 0,
    inFlight: 0,
    received: 0,
    byStatus: new Map(),
    first: NaN, // performance.now() of the first request since reset()
    last: NaN,
    windows: new Map(), // window (epoch s) → { received, ok: 200s }, since reset()
    reset() {
      Object.assign(this, { received: 0, byStatus: new Map(), first: NaN, last: NaN, windows: new Map() });
    },
    count(status) {
      return this.byStatus.get(status) ?? 0;
    },
  };
  o.server = createServer((req, res) => {
    const at = performance.now();
    const now = Date.now();
    const window = Math.floor(now / 1000);
    if (window !== o.window) {
      o.window = window;
      o.inWindow = 0;
    }
    o.inWindow++;
    o.received++;
    o.inFlight++;
    if (Number.isNaN(o.first)) o.first = at;
    o.last = at;
    const [status, headers] = answer(o.inWindow, (window + 1) * 1000, now);
    o.byStatus.set(status, o.count(status) + 1);
    const w = o.windows.get(window) ?? { received: 0, ok: 0 };
    w.received++;
    w.ok += status === 200 ? 1 : 0;
    o.windows.set(window, w);
    req.resume();
    res.on("close", () => o.inFlight--);
    res.writeHead(status, { "content-length": "2", ...headers });
    res.end("ok");
  });
  await new Promise((resolve) => o.server.listen(0, "127.0.0.1", resolve));
  o.url = `http://127.0.0.1:${o.server.address().port}/`;
  o.close = () => {
    o.server.close();
    o.server.closeAllConnections?.();
  };
  return o;
}

// Issues `call()` `rate` times per second for `seconds`, on a clock (the i-th call is due at
// i / rate s), never waiting for one call before the next. Every call's outcome is caught:
// { status } for a response (its body read), { error } for a rejection, and its latency in ms.
// Resolves when all of them have settled.
async function drive(rate, seconds, call) {
  const total = Math.round(rate * seconds);
  const calls = [];
  const one = async () => {
    const t0 = performance.now();
    try {
      const r = await call();
      await r.arrayBuffer();
      return { status: r.status, ms: performance.now() - t0 };
    } catch (error) {
      return { error, ms: performance.now() - t0 };
    }
  };
  const t0 = performance.now();
  await new Promise((resolve) => {
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - t0) * rate) / 1000) + 1);
      while (calls.length < due) calls.push(one());
      if (calls.length < total) setTimeout(tick, 1);
      else resolve();
    };
    tick();
  });
  const outcomes = await Promise.all(calls);
  return { outcomes, settledMs: performance.now() - t0 };
}

async function drained(o) {
  while (o.inFlight > 0) await sleep(5);
}

const quantile = (sorted, q) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] : NaN;
const ms = (x) => (!Number.isFinite(x) ? "–" : x < 10 ? x.toFixed(1) : x.toFixed(0));
const pct = (x) => `${(100 * x).toFixed(1)} %`;
const progress = (what) =>
  process.stderr.write(`[ratelimit ${((performance.now() - started) / 1000).toFixed(0).padStart(3)}s] ${what}\n`);

// ---------------------------------------------------------------------------------------
// Part 1: pacing against a quota.

const quotaOrigin = await origin((n, windowEnd, now) => {
  const remaining = Math.max(0, QUOTA - n);
  const seconds = Math.ceil((windowEnd - now) / 1000);
  const headers = {
    "ratelimit-policy": `"default";q=${QUOTA};w=1`,
    ratelimit: `"default";r=${remaining};t=${seconds}`,
    "x-ratelimit-limit": String(QUOTA),
    "x-ratelimit-remaining": String(remaining),
    "x-ratelimit-reset": String(windowEnd / 1000),
  };
  return n <= QUOTA ? [200, headers] : [429, { ...headers, "retry-after": String(seconds) }];
});

const pacingConfigurations = [
  { name: "(a) pacing off, retries off", policy: { rateLimit: false, retry: false } },
  { name: "(b) pacing off, retries on (defaults)", policy: { rateLimit: false } },
  { name: "(c) pacing on (defaults)", policy: {}, goal: true },
  { name: "(d) pacing on, retries off", policy: { retry: false } },
  // Not in the list: (a) and (b) keep the default breaker, which opens on the 429s and
  // then refuses most calls itself. This row shows the origin's side with no guard at all.
  { name: "(e) pacing off, retries off, breaker off", policy: { rateLimit: false, retry: false, breaker: false } },
];

const pacingRows = [];
for (const c of pacingConfigurations) {
  await nextWindow(1000); // a whole quiet window before the run, which starts on a boundary
  progress(`pacing ${c.name}: ${RATE}/s for ${SECONDS} s`);
  quotaOrigin.reset();
  const client = new ResilientClient(c.policy);
  const run = await drive(RATE, SECONDS, () => client.fetch(quotaOrigin.url));
  await drained(quotaOrigin);
  const ok = run.outcomes.filter((o) => o.status === 200).map((o) => o.ms).sort((a, b) => a - b);
  const rateLimited = run.outcomes.filter((o) => o.error instanceof RateLimitError).length;
  // Other failures by kind: a status the call resolved with, or the error's name.
  const other = new Map();
  for (const o of run.outcomes) {
    if (o.status === 200 || o.error instanceof RateLimitError) continue;
    const kind = o.error ? (o.error?.name ?? String(o.error)) : String(o.status);
    other.set(kind, (other.get(kind) ?? 0) + 1);
  }
  const spanS = (quotaOrigin.last - quotaOrigin.first) / 1000;
  // The windows from the first request's to the last one's, both included.
  const windows = [...quotaOrigin.windows.keys()];
  const spanWindows = windows.length ? Math.max(...windows) - Math.min(...windows) + 1 : 0;
  progress(`  done: ${quotaOrigin.count(200)} × 200 in ${spanWindows} windows; slowest call → 200: ${ms(ok.at(-1))} ms`);
  pacingRows.push({
    ...c,
    calls: run.outcomes.length,
    received: quotaOrigin.received,
    rejected429: quotaOrigin.count(429),
    served200: quotaOrigin.count(200),
    spanS,
    goodput: spanS > 0 ? quotaOrigin.count(200) / spanS : NaN,
    spanWindows,
    perWindow: spanWindows ? quotaOrigin.count(200) / spanWindows : NaN,
    ok: ok.length,
    rateLimited,
    other,
    p50: quantile(ok, 0.5),
    p99: quantile(ok, 0.99),
    settledS: run.settledMs / 1000,
  });
}
quotaOrigin.close();

// ---------------------------------------------------------------------------------------
// Part 2: the SRE throttling curve. Off and on run side by side, each against its own
// backend (its own port, so its own origin and windows), which halves the time this takes.

const backend = () => origin((n) => [n <= CAPACITY ? 200 : 503, {}]);
const backends = { off: await backend(), on: await backend() };
const throttlePolicies = {
  off: { retry: false, breaker: false, rateLimit: false },
  on: { retry: false, breaker: false, rateLimit: false, throttle: { k: K, windowMs: THROTTLE_WINDOW_MS } },
};

async function throttleRun(mode, rate) {
  const b = backends[mode];
  b.reset();
  const client = new ResilientClient(throttlePolicies[mode]);
  const run = await drive(rate, THROTTLE_SECONDS, () => client.fetch(b.url));
  await drained(b);
  const refused = run.outcomes.filter((o) => o.error instanceof ThrottledError).length;
  const unexpected = run.outcomes.filter((o) => o.error && !(o.error instanceof ThrottledError)).length;
  // From the run's second second on (it starts on a window boundary): past the ramp-up.
  const firstWindow = Math.min(...b.windows.keys());
  const later = [...b.windows].filter(([w]) => w > firstWindow).map(([, c]) => c);
  const laterSent = later.reduce((n, c) => n + c.received, 0);
  const laterAccepted = later.reduce((n, c) => n + c.ok, 0);
  return {
    calls: run.outcomes.length,
    sentPerS: b.received / THROTTLE_SECONDS,
    acceptedPerS: b.count(200) / THROTTLE_SECONDS,
    perAccepted: b.count(200) ? b.received / b.count(200) : NaN,
    rejectedShare: b.received ? b.count(503) / b.received : NaN,
    refusedShare: refused / run.outcomes.length,
    laterPerAccepted: laterAccepted ? laterSent / laterAccepted : NaN,
    unexpected,
  };
}

const throttleRows = [];
for (const rate of LOADS) {
  await nextWindow(1000);
  progress(`throttling: offered ${rate}/s for ${THROTTLE_SECONDS} s, off and on side by side`);
  const [off, on] = await Promise.all([throttleRun("off", rate), throttleRun("on", rate)]);
  throttleRows.push({ rate, off, on });
}
backends.off.close();
backends.on.close();

// ---------------------------------------------------------------------------------------
// The tables.

console.log(`## Rate limits: pacing by the origin's headers, adaptive throttling (origins on 127.0.0.1)`);
console.log("");
console.log(`### Pacing against a quota of ${QUOTA} requests per second`);
console.log("");
console.log(`The origin allows ${QUOTA} requests per fixed 1 s window (whole wall-clock seconds) and answers 429 with`);
console.log(`Retry-After beyond that; every response carries \`RateLimit-Policy: "default";q=${QUOTA};w=1\`,`);
console.log(`\`RateLimit: "default";r=…;t=…\` and \`X-RateLimit-Limit/-Remaining/-Reset\`. One fresh ResilientClient per`);
console.log(`configuration is driven at a steady ${RATE} GET calls per second (${(RATE / QUOTA).toFixed(1)}× the quota, issued on a clock, not`);
console.log(`awaited one by one) for ${SECONDS} s: ${Math.round(RATE * SECONDS)} calls, each awaited to its end. Goodput: 200s per second at the`);
console.log(`origin from its first request to its last; per window: the 200s over the windows from the first request's`);
console.log(`to the last one's (a paced run's last window is a burst at its start, so first-to-last is almost a window`);
console.log(`short of the time the 200s took). Latency: from issuing a call to the end of its body, calls that got a 200.`);
console.log(`The configurations not named "breaker off" keep the default breaker, which counts 429s as failures.`);
console.log("");
console.log("| configuration | requests received | 429s sent | goodput /s | 200s per window | calls → 200 | RateLimitError | other failures | p50 ms (200s) | p99 ms (200s) | all settled after s |");
console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |");
for (const r of pacingRows) {
  const other = [...r.other].map(([k, n]) => `${n} × ${k}`).join(", ") || "0";
  console.log(
    `| ${r.name} | ${r.received} | ${r.rejected429} | ${r.goodput.toFixed(1)} | ${r.perWindow.toFixed(1)} (${r.spanWindows} windows) | ${r.ok} | ${r.rateLimited} | ${other} | ${ms(r.p50)} | ${ms(r.p99)} | ${r.settledS.toFixed(1)} |`,
  );
}
for (const r of pacingRows.filter((r) => r.goal)) {
  // Judged per window: a paced run's first-to-last span is short of a window (see above), so
  // that figure reads high, the more so the shorter the run; both are shown.
  const within = Math.abs(r.perWindow - QUOTA) <= 0.05 * QUOTA;
  console.log("");
  console.log(`| target: ${r.name} | measured | |`);
  console.log("| --- | --- | --- |");
  console.log(`| no 429 at all | ${r.rejected429} × 429 | ${r.rejected429 === 0 ? "met" : "NOT met"} |`);
  console.log(
    `| goodput within 5 % of ${QUOTA}/s (${(0.95 * QUOTA).toFixed(1)}–${(1.05 * QUOTA).toFixed(1)}) | ${r.perWindow.toFixed(1)} per window (${r.served200} × 200 in ${r.spanWindows} windows); first to last ${r.goodput.toFixed(1)}/s (over ${r.spanS.toFixed(2)} s) | ${within ? "met" : "NOT met"} |`,
  );
  console.log("");
  console.log(`Goal (no 429, goodput within 5 % of the quota) for ${r.name}: ${r.rejected429 === 0 && within ? "met" : "NOT met"}.`);
}
console.log("");
console.log(`### Adaptive throttling (SRE book) against a backend that accepts ${CAPACITY} requests per second`);
console.log("");
console.log(`The backend accepts ${CAPACITY} requests per fixed 1 s window and answers 503 at once beyond that. Each offered`);
console.log(`load is a steady rate for ${THROTTLE_SECONDS} s with a fresh client \`{ retry: false, breaker: false, rateLimit: false }\`,`);
console.log(`throttle off, and the same with \`throttle: { k: ${K}, windowMs: ${THROTTLE_WINDOW_MS} }\`: the default window (120000 ms)`);
console.log(`is far longer than the run, this one fits it. The throttle starts each run with nothing counted, so its`);
console.log(`ramp-up is in the whole-run figures; "from second 2" leaves the run's first second out. Off and on run at the`);
console.log(`same time, each against its own backend. Rates are per second of the run, counted at the backend.`);
console.log(`The book: with k = ${K} about ${K} requests are sent per accepted one (${K - 1} rejected per accepted) however high the`);
console.log(`load; below ${K}× the capacity nothing is shed, so it expects min(offered / capacity, ${K}) sent per accepted.`);
console.log("");
console.log("| offered /s | backend rejects (off) | off: sent /s | off: accepted /s | off: sent per accepted | on: sent /s | on: accepted /s | on: sent per accepted | on: from second 2 | on: refused locally | book (k = 2): sent per accepted |");
console.log("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
for (const { rate, off, on } of throttleRows) {
  const book = Math.min(rate / CAPACITY, K);
  console.log(
    `| ${rate} | ${pct(off.rejectedShare)} | ${off.sentPerS.toFixed(1)} | ${off.acceptedPerS.toFixed(1)} | ${off.perAccepted.toFixed(2)} | ${on.sentPerS.toFixed(1)} | ${on.acceptedPerS.toFixed(1)} | ${on.perAccepted.toFixed(2)} | ${on.laterPerAccepted.toFixed(2)} | ${pct(on.refusedShare)} | ≈ ${book.toFixed(1)} |`,
  );
}
const unexpected = throttleRows.reduce((n, r) => n + r.off.unexpected + r.on.unexpected, 0);
if (unexpected) {
  console.log("");
  console.log(`(${unexpected} calls rejected with something other than ThrottledError.)`);
}
process.exit(0);
