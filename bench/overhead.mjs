// Per-call overhead in Node, side by side, in one process (bench/README.md).
//
// `globalThis.fetch` is replaced by a stub that resolves at once with one prebuilt 200
// response, before any library is imported (the package's glue looks `fetch` up at call
// time; the peers are given the stub too). Nothing touches the network. Each variant makes
// CALLS awaited calls per round after a warm-up, in slices that take turns with the other
// variants' (the order rotating), so a slow patch of a shared machine hits them all; the
// table shows the median round and the median of per-round ratios. Then, per variant, the
// heap growth per CALLS calls (the median of 3 passes, after one to reach a steady state;
// forced GCs: run node with --expose-gc).
//
// Env: BENCH_CALLS (default 100000), BENCH_ROUNDS (default 5), BENCH_WARMUP (default 20000),
// BENCH_JSON (a path to write the results to, optional), BENCH_STACK_MINIMUM (the built
// bench/stack-minimum glue and wasm, optional; run.sh sets it).

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { performance } from "node:perf_hooks";

const CALLS = Number(process.env.BENCH_CALLS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 20_000);
// Never contacted: every library below ends in the stub.
const URL_ = "http://127.0.0.1:9/bench";

const OK = new Response(null, { status: 200 });
const DOWN = new Response(null, { status: 503 });
let answer = OK;
const stub = () => Promise.resolve(answer);
globalThis.fetch = stub;

const { resilientFetch, ResilientClient, CircuitOpenError, memoryBytes } = await import(
  "resilient-fetch"
);
// The stack's minimum (bench/stack-minimum, built by run.sh), if given: the named crates doing
// the least a resilient fetch does per call, with none of our logic.
let minimumFetch;
if (process.env.BENCH_STACK_MINIMUM) {
  const dir = process.env.BENCH_STACK_MINIMUM;
  const glue = await import(pathToFileURL(join(dir, "stack_minimum.js")).href);
  glue.initSync({ module: readFileSync(join(dir, "stack_minimum_bg.wasm")) });
  minimumFetch = glue.minimumFetch;
}
const ky = (await import("ky")).default;
const { ofetch } = await import("ofetch");
const cockatiel = await import("cockatiel");
const CircuitBreaker = (await import("opossum")).default;

// Peers configured as close to our defaults as they go: 10 s per attempt, 3 attempts, a
// breaker that opens after 5 consecutive failures for 30 s.
const kyClient = ky.create({ fetch: stub }); // ky's defaults: retry 2, timeout 10 s
const ofetchClient = ofetch.create({ timeout: 10_000 }, { fetch: stub }); // retry 1 (its default)
const transient = (r) => [408, 429, 500, 502, 503, 504].includes(r?.status);
const handled = cockatiel.handleAll.orWhenResult(transient);
const cockatielPolicy = cockatiel.wrap(
  cockatiel.retry(handled, { maxAttempts: 2, backoff: new cockatiel.ExponentialBackoff() }),
  cockatiel.circuitBreaker(handled, {
    halfOpenAfter: 30_000,
    breaker: new cockatiel.ConsecutiveBreaker(5),
  }),
  cockatiel.timeout(10_000, cockatiel.TimeoutStrategy.Aggressive),
);
const makeOpossum = () =>
  new CircuitBreaker((url) => stub(url), { timeout: 10_000, resetTimeout: 30_000 });
let opossum = makeOpossum();

const MANY_URLS = Array.from({ length: 1000 }, (_, i) => `${URL_}?n=${i}`);
let nextUrl = 0;
const openClient = new ResilientClient();
const POST = { method: "POST", body: "{}" };

// Opens openClient's breaker afresh, untimed, before each slice of its calls (so its 30 s
// cooldown cannot run out while they are timed).
async function openBreaker() {
  openClient.reset();
  answer = DOWN;
  try {
    for (let i = 0; i < 20 && openClient.breakerState(URL_) !== "open"; i++) {
      await openClient.fetch(URL_, undefined, { retry: false });
    }
  } finally {
    answer = OK;
  }
  if (openClient.breakerState(URL_) !== "open") throw new Error("the breaker did not open");
}

async function floor() {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 10_000);
  try {
    return await fetch(URL_, { signal: controller.signal });
  } finally {
    clearTimeout(timer);
  }
}

// ours: the variant is this package's; reject: every call must reject (else every call must resolve).
const variants = [
  { name: "bare stub fetch", call: () => fetch(URL_) },
  { name: "floor: AbortController + setTimeout/clearTimeout", call: floor },
  ...(minimumFetch
    ? [{ name: "the stack's minimum: promise for a Rust future + AbortController + gloo timer + JsFuture", call: () => minimumFetch(URL_) }]
    : []),
  { name: "ours: resilientFetch, defaults, GET", ours: true, call: () => resilientFetch(URL_) },
  {
    // More URL strings than the fast path remembers origins for (256): every call parses.
    name: "ours: resilientFetch, defaults, GET, 1 000 URLs in turn",
    ours: true,
    call: () => resilientFetch(MANY_URLS[(nextUrl = (nextUrl + 1) % MANY_URLS.length)]),
  },
  {
    name: "ours: resilientFetch, defaults, POST (idempotency key)",
    ours: true,
    call: () => resilientFetch(URL_, POST),
  },
  {
    name: "ours: open-breaker rejection",
    ours: true,
    reject: CircuitOpenError,
    setup: openBreaker,
    call: () => openClient.fetch(URL_),
  },
  { name: "ky (defaults: retry 2, timeout 10 s)", call: () => kyClient(URL_) },
  { name: "ofetch.raw (retry 1, timeout 10 s)", call: () => ofetchClient.raw(URL_) },
  {
    name: "cockatiel: retry 2 + breaker + timeout, composed",
    call: () => cockatielPolicy.execute(({ signal }) => stub(URL_, { signal })),
  },
  { name: "opossum: breaker + timeout", call: () => opossum.fire(URL_) },
];

async function loop(v, n) {
  let wrong = 0;
  for (let i = 0; i < n; i++) {
    try {
      const r = await v.call();
      if (v.reject || r.status !== 200) wrong++;
    } catch (e) {
      if (!v.reject || !(e instanceof v.reject)) wrong++;
    }
  }
  if (wrong) throw new Error(`${v.name}: ${wrong} of ${n} calls did not end as expected`);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

// A round: CALLS calls per variant, made in CHUNKS slices taken in turn (the order rotating),
// so that a change in the machine's load during the round touches every variant alike.
const CHUNKS = 10;
for (const v of variants) {
  v.rounds = [];
  await v.setup?.();
  await loop(v, WARMUP);
}
for (let r = 0; r < ROUNDS; r++) {
  for (const v of variants) v.spent = 0;
  for (let c = 0; c < CHUNKS; c++) {
    for (let k = 0; k < variants.length; k++) {
      const v = variants[(k + c + r) % variants.length];
      await v.setup?.();
      const t0 = performance.now();
      await loop(v, CALLS / CHUNKS);
      v.spent += performance.now() - t0;
    }
  }
  for (const v of variants) v.rounds.push((v.spent * 1000) / CALLS);
}

const gc = globalThis.gc;
const settle = async () => {
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    gc?.();
  }
};
// opossum keeps per-call data for its 10 s rolling window; a fresh breaker, and the old one
// shut down, so that its release does not land in another variant's heap measurement.
opossum.shutdown();
opossum = makeOpossum();

// Heap: CALLS / 2 calls first (so earlier variants' garbage and one-time allocations are
// out of the way), then 3 measured passes of CALLS / 2 calls; the median growth is shown.
const HEAP_PASSES = 3;
for (const v of variants) {
  await v.setup?.();
  await loop(v, CALLS / 2);
  const heap = [];
  const wasm = [];
  for (let p = 0; p < HEAP_PASSES; p++) {
    await v.setup?.();
    await settle();
    const heap0 = process.memoryUsage().heapUsed;
    const wasm0 = memoryBytes();
    await loop(v, CALLS / 2);
    await settle();
    heap.push((process.memoryUsage().heapUsed - heap0) * 2);
    wasm.push((memoryBytes() - wasm0) * 2);
  }
  v.heapDelta = median(heap);
  v.wasmDelta = median(wasm);
}

const us = (x) => (x < 10 ? x.toFixed(2) : x.toFixed(1));
const times = (x) => `${x < 10 ? x.toFixed(2) : x.toFixed(1)}×`;
const kb = (b) => `${b >= 0 ? "+" : "−"}${(Math.abs(b) / 1024).toFixed(0)} KB`;
const byName = (prefix) => variants.find((v) => v.name.startsWith(prefix));
for (const v of variants) v.median = median(v.rounds);
// a ÷ b within each round, then the median over rounds: the ratios the targets are about.
const ratio = (a, b) => median(a.rounds.map((x, i) => x / b.rounds[i]));
const [bare, floorV] = variants;

console.log(
  `## Per-call overhead (Node ${process.version}, stub fetch, ${CALLS} awaited calls per round × ${ROUNDS} rounds, interleaved)`,
);
console.log("");
console.log("µs/call: median round; × floor: median over rounds of the round's ratio; heap Δ: median of 3 passes between forced GCs (--expose-gc --no-flush-bytecode); under about a MB is noise.");
console.log("");
console.log("| variant | µs/call | rounds min–max | × floor | heap Δ per 100 000 calls |");
console.log("| --- | ---: | ---: | ---: | ---: |");
for (const v of variants) {
  const lo = Math.min(...v.rounds);
  const hi = Math.max(...v.rounds);
  const scale = 100_000 / CALLS;
  let heap = gc ? kb(v.heapDelta * scale) : "n/a (no --expose-gc)";
  if (v.ours) heap += ` (wasm memory ${kb(v.wasmDelta * scale)})`;
  console.log(`| ${v.name} | ${us(v.median)} | ${us(lo)}–${us(hi)} | ${times(ratio(v, floorV))} | ${heap} |`);
}
console.log("");

const ours = byName("ours: resilientFetch, defaults, GET");
const cockatielV = byName("cockatiel");
const kyV = byName("ky");
const rejection = byName("ours: open-breaker rejection");
const verdict = (ok) => (ok ? "met" : "NOT met");
const vsFloor = ratio(ours, floorV);
const vsCockatiel = ratio(ours, cockatielV);
const vsKy = ratio(ours, kyV);
const targets = [
  [`ours ≤ 2× the floor`, `${times(vsFloor)} (${us(ours.median)} vs ${us(floorV.median)} µs)`, vsFloor <= 2],
  [`ours ≤ ¼ of cockatiel's composed policy`, `${vsCockatiel.toFixed(2)}× cockatiel (${us(ours.median)} vs ${us(cockatielV.median)} µs)`, vsCockatiel <= 0.25],
  [`ours ≤ 1/10 of ky`, `${vsKy.toFixed(2)}× ky (${us(ours.median)} vs ${us(kyV.median)} µs)`, vsKy <= 0.1],
  [`open-breaker rejection ≤ 5 µs`, `${us(rejection.median)} µs = ${times(ratio(rejection, floorV))} the floor (absolute: machine-dependent)`, rejection.median <= 5],
];
console.log("| target | measured | |");
console.log("| --- | --- | --- |");
for (const [t, m, ok] of targets) console.log(`| ${t} | ${m} | ${verdict(ok)} |`);
console.log("");
console.log(`(bare stub: ${us(bare.median)} µs/call; "ours" in the targets is resilientFetch with defaults, GET)`);
const stackMinimum = byName("the stack's minimum");
if (stackMinimum) {
  // What the crates alone cost, in the targets' terms: a target below these is out of reach
  // for any implementation on this stack.
  console.log("");
  console.log(
    `The stack's minimum (bench/stack-minimum, none of our logic) is ${times(ratio(stackMinimum, floorV))} the floor, ` +
      `${ratio(stackMinimum, cockatielV).toFixed(2)}× cockatiel and ${ratio(stackMinimum, kyV).toFixed(2)}× ky; ` +
      `ours is ${times(ratio(ours, stackMinimum))} the stack's minimum (${us(ours.median)} vs ${us(stackMinimum.median)} µs).`,
  );
}

if (process.env.BENCH_JSON) {
  writeFileSync(
    process.env.BENCH_JSON,
    JSON.stringify(
      variants.map(({ name, rounds, median: m, heapDelta, wasmDelta }) => ({ name, rounds, median: m, heapDelta, wasmDelta })),
      null,
      2,
    ),
  );
}
