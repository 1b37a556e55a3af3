// Per-call overhead in Node, side by side, in one process (bench/README.md).
//
// The variants and the timed rounds are cases.mjs's, shared with the Chromium run
// (browser.mjs). `globalThis.fetch` is replaced by a stub that resolves at once with a fresh
// body-less `new Response(null, { status: 200 })` per call (the body-carrying rows: a fresh
// `new Response("ok")`), before any library is imported (the package's glue looks `fetch` up
// at call time; the peers are given the stub too). Nothing touches the network. Each variant
// makes CALLS awaited calls per round after a warm-up, in slices that take turns with the
// other variants' (the order rotating), so a slow patch of a shared machine hits them all; the
// table shows the median round, the median of per-round ratios to the floor and the median of
// per-round differences to the bare stub (the row's added cost), each against its own set's
// rows. Then, per variant, the heap growth per CALLS calls (the median of 3 passes, after one
// to reach a steady state; forced GCs: run node with --expose-gc).
//
// Env: BENCH_CALLS (default 100000), BENCH_ROUNDS (default 5), BENCH_WARMUP (default 20000),
// BENCH_JSON (a path to write the results to, optional), BENCH_STACK_MINIMUM (the built
// bench/stack-minimum glue and wasm, optional; run.sh sets it). "resilient-fetch/full" is
// measured beside the default entry when it resolves.

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { performance } from "node:perf_hooks";
import { added, byId, loop, makeStub, makeVariants, median, plus, ratio, referencesOf, runRounds, times, us } from "./cases.mjs";

const CALLS = Number(process.env.BENCH_CALLS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 20_000);

// The stub (cases.mjs): a fresh response per call.
const stub = makeStub();
globalThis.fetch = stub.fetch;

const rf = await import("resilient-fetch");
// The full build, where the package has one ("resilient-fetch/full"); absent, its rows are not run.
let rfFull;
try {
  rfFull = await import("resilient-fetch/full");
} catch (e) {
  if (e?.code !== "ERR_PACKAGE_PATH_NOT_EXPORTED" && e?.code !== "ERR_MODULE_NOT_FOUND") throw e;
}
// The stack's minimum (bench/stack-minimum, built by run.sh), if given: the named crates doing
// the least a resilient fetch does per call, with none of our logic.
let minimumFetch;
if (process.env.BENCH_STACK_MINIMUM) {
  const dir = process.env.BENCH_STACK_MINIMUM;
  const glue = await import(pathToFileURL(join(dir, "stack_minimum.js")).href);
  glue.initSync({ module: readFileSync(join(dir, "stack_minimum_bg.wasm")) });
  minimumFetch = glue.minimumFetch;
}
const variants = makeVariants({
  stub,
  rf,
  rfFull,
  ky: (await import("ky")).default,
  ofetch: (await import("ofetch")).ofetch,
  cockatiel: await import("cockatiel"),
  CircuitBreaker: (await import("opossum")).default,
  minimumFetch,
});

await runRounds(variants, stub, { calls: CALLS, rounds: ROUNDS, warmup: WARMUP, now: () => performance.now() });

const gc = globalThis.gc;
const settle = async () => {
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    gc?.();
  }
};
// opossum keeps per-call data for its 10 s rolling window; a fresh breaker, and the old one
// shut down, so that its release does not land in another variant's heap measurement.
for (const v of variants) v.reset?.();

// Heap: CALLS / 2 calls first (so earlier variants' garbage and one-time allocations are
// out of the way), then 3 measured passes of CALLS / 2 calls; the median growth is shown.
const HEAP_PASSES = 3;
for (const v of variants) {
  await v.setup?.();
  await loop(v, CALLS / 2, stub);
  const heap = [];
  const wasm = [];
  for (let p = 0; p < HEAP_PASSES; p++) {
    await v.setup?.();
    await settle();
    const heap0 = process.memoryUsage().heapUsed;
    // The wasm memory of the entry the variant calls (the full build has its own).
    const memoryBytes = (v.full ? rfFull : rf).memoryBytes ?? (() => NaN);
    const wasm0 = memoryBytes();
    await loop(v, CALLS / 2, stub);
    await settle();
    heap.push((process.memoryUsage().heapUsed - heap0) * 2);
    wasm.push((memoryBytes() - wasm0) * 2);
  }
  v.heapDelta = median(heap);
  v.wasmDelta = median(wasm);
}

const kb = (b) => `${b >= 0 ? "+" : "−"}${(Math.abs(b) / 1024).toFixed(0)} KB`;
const byName = (id, set) => byId(variants, id, set);
const floorV = byName("floor");
const bare = byName("bare");

console.log(
  `## Per-call overhead (Node ${process.version}, stub fetch, ${CALLS} awaited calls per round × ${ROUNDS} rounds, interleaved)`,
);
console.log("");
console.log(
  "Goals: ours GET ≤ 2× the floor; open-breaker rejection ≤ 5 µs; the default (lean) entry at least as fast as resilient-fetch/full. " +
    "The stub answers a fresh body-less `new Response(null, { status: 200 })` per call, the same for floor, peers and ours; " +
    'the second table\'s rows (timed in the same rounds) answer a fresh `new Response("ok")` instead, against their own bare stub and floor.',
);
console.log("");
console.log(
  "µs/call: median round; × floor and + µs over the bare stub: the median over rounds of the round's ratio to the floor and of its difference to the bare stub, " +
    "both of the row's own table (the open-breaker rows never reach the stub); heap Δ: median of 3 passes between forced GCs (--expose-gc --no-flush-bytecode); under about a MB is noise.",
);
const table = (set) => {
  console.log("");
  console.log("| variant | µs/call | rounds min–max | × floor | + µs over the bare stub | heap Δ per 100 000 calls |");
  console.log("| --- | ---: | ---: | ---: | ---: | ---: |");
  for (const v of variants.filter((w) => w.set === set)) {
    const refs = referencesOf(variants, v);
    const scale = 100_000 / CALLS;
    let heap = gc ? kb(v.heapDelta * scale) : "n/a (no --expose-gc)";
    if (v.ours) heap += ` (wasm memory ${kb(v.wasmDelta * scale)})`;
    const addedCell = v === refs.bare ? "—" : plus(added(v, refs.bare));
    const span = `${us(Math.min(...v.rounds))}–${us(Math.max(...v.rounds))}`;
    console.log(`| ${v.name} | ${us(v.median)} | ${span} | ${times(ratio(v, refs.floor))} | ${addedCell} | ${heap} |`);
  }
};
table("main");
console.log("");
console.log('With a body: the stub answers a fresh `new Response("ok")` per call (the package wraps a response with a body so that its deadline reaches the reads).');
table("body");
console.log("");

const ours = byName("ours");
const oursFull = byName("oursFull");
const cockatielV = byName("cockatiel");
const kyV = byName("ky");
const rejection = byName("rejection");
const rejectionFull = byName("rejectionFull");
const verdict = (ok) => (ok ? "met" : "NOT met");
const vsFloor = ratio(ours, floorV);
const vsCockatiel = ratio(ours, cockatielV);
const vsKy = ratio(ours, kyV);
const overBare = (v) => `${plus(added(v, bare))} µs over the bare stub`;
const targets = [
  [
    `ours GET ≤ 2× the floor`,
    `${times(vsFloor)} (${us(ours.median)} vs ${us(floorV.median)} µs; ours ${overBare(ours)}, the floor ${overBare(floorV)})`,
    vsFloor <= 2,
  ],
  [`open-breaker rejection ≤ 5 µs`, `${us(rejection.median)} µs = ${times(ratio(rejection, floorV))} the floor (absolute: machine-dependent)`, rejection.median <= 5],
  [`ours GET ≤ ¼ of cockatiel's composed policy`, `${vsCockatiel.toFixed(2)}× cockatiel (${us(ours.median)} vs ${us(cockatielV.median)} µs)`, vsCockatiel <= 0.25],
  [`ours GET ≤ 1/10 of ky`, `${vsKy.toFixed(2)}× ky (${us(ours.median)} vs ${us(kyV.median)} µs)`, vsKy <= 0.1],
];
if (oursFull) {
  const lean = ratio(ours, oursFull);
  const leanRejection = ratio(rejection, rejectionFull);
  targets.push([
    `the default (lean) entry at least as fast as resilient-fetch/full`,
    `GET ${lean.toFixed(2)}× the full build's (${us(ours.median)} vs ${us(oursFull.median)} µs); open-breaker rejection ${leanRejection.toFixed(2)}× (${us(rejection.median)} vs ${us(rejectionFull.median)} µs)`,
    lean <= 1 && leanRejection <= 1,
  ]);
} else {
  targets.push([`the default (lean) entry at least as fast as resilient-fetch/full`, "not measured: the installed package has no resilient-fetch/full", false]);
}
const bodyOurs = byName("ours", "body");
const bodyFloor = byName("floor", "body");
const bodyBare = byName("bare", "body");
console.log("| goal | measured | |");
console.log("| --- | --- | --- |");
for (const [t, m, ok] of targets) console.log(`| ${t} | ${m} | ${oursFull || !t.includes("lean") ? verdict(ok) : "—"} |`);
console.log("");
console.log(
  `(bare stub: ${us(bare.median)} µs/call; "ours" in the goals is resilientFetch with defaults, GET, through the default entry. ` +
    `With a body in the stub's response (new Response("ok"), ${us(bodyBare.median)} µs/call bare): ours ${plus(added(bodyOurs, bodyBare))} µs over it, ` +
    `the floor ${plus(added(bodyFloor, bodyBare))} µs, ours ${times(ratio(bodyOurs, bodyFloor))} the floor.)`,
);
const stackMinimum = byName("minimum");
if (stackMinimum) {
  // What the crates alone cost, in the goals' terms: a goal below these is out of reach for
  // any implementation on this stack.
  console.log("");
  console.log(
    `The stack's minimum (bench/stack-minimum, none of our logic, built as the package) is ${times(ratio(stackMinimum, floorV))} the floor ` +
      `(${overBare(stackMinimum)}), ${ratio(stackMinimum, cockatielV).toFixed(2)}× cockatiel and ${ratio(stackMinimum, kyV).toFixed(2)}× ky; ` +
      `ours is ${times(ratio(ours, stackMinimum))} the stack's minimum (${us(ours.median)} vs ${us(stackMinimum.median)} µs).`,
  );
}

if (process.env.BENCH_JSON) {
  writeFileSync(
    process.env.BENCH_JSON,
    JSON.stringify(
      variants.map(({ id, name, set, rounds, median: m, heapDelta, wasmDelta }) => ({ id, name, set, rounds, median: m, heapDelta, wasmDelta })),
      null,
      2,
    ),
  );
}
