// Crossings between JS and the wasm per call, side by side (bench/README.md): ours (the default
// entry and resilient-fetch/full) beside the stack's minimum (bench/stack-minimum, none of our
// logic), each a 200 GET through the same stub fetch, awaited, its body read. Every function a
// wasm imports (called from Rust) and every one it exports (called from JS) is wrapped with a
// counter before the module is instantiated, so what is counted is every crossing, the
// runtime's own (a task's microtask, a closure's call) as well as ours. The bound on ours is a
// test (tests/package/crossings.test.mjs); this prints it beside the minimum's.
//
// Env: BENCH_STACK_MINIMUM (the built bench/stack-minimum glue and wasm; run.sh sets it),
// BENCH_JSON (a path to write the results to, optional).

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

globalThis.fetch = async () => new Response(null, { status: 200 });

// Crossings of the variant being counted, by direction and name (null: none is).
let counts = null;
const wrap = (name, f) => function (...args) {
  if (counts) counts.set(name, (counts.get(name) ?? 0) + 1);
  return f.apply(this, args);
};
// What each module counts into, in the order they are instantiated.
const tallies = [];
const RealInstance = WebAssembly.Instance;
WebAssembly.Instance = function Instance(module, imports) {
  const tally = new Map();
  tallies.push(tally);
  const counted = {};
  for (const [ns, fns] of Object.entries(imports)) {
    counted[ns] = {};
    for (const [name, f] of Object.entries(fns)) {
      counted[ns][name] = typeof f === "function" ? wrap(`js ${name}`, f) : f;
    }
  }
  const real = new RealInstance(module, counted);
  const exports = {};
  for (const [name, v] of Object.entries(real.exports)) exports[name] = typeof v === "function" ? wrap(`wasm ${name}`, v) : v;
  return { exports };
};

/** Loads a module, and the tally its wasm's instantiation made for it. */
async function loading(load) {
  const before = tallies.length;
  const loaded = await load();
  return { loaded, tally: tallies[before] };
}

const variants = [];
const ours = await loading(() => import("resilient-fetch"));
variants.push({ name: "resilient-fetch", tally: ours.tally, call: (url) => ours.loaded.resilientFetch(url) });
try {
  const full = await loading(() => import("resilient-fetch/full"));
  variants.push({ name: "resilient-fetch/full", tally: full.tally, call: (url) => full.loaded.resilientFetch(url) });
} catch (e) {
  if (e?.code !== "ERR_PACKAGE_PATH_NOT_EXPORTED" && e?.code !== "ERR_MODULE_NOT_FOUND") throw e;
}
if (process.env.BENCH_STACK_MINIMUM) {
  const dir = process.env.BENCH_STACK_MINIMUM;
  const minimum = await loading(async () => {
    const glue = await import(pathToFileURL(join(dir, "stack_minimum.js")).href);
    glue.initSync({ module: readFileSync(join(dir, "stack_minimum_bg.wasm")) });
    return glue;
  });
  variants.push({ name: "the stack's minimum", tally: minimum.tally, call: (url) => minimum.loaded.minimumFetch(url) });
}
WebAssembly.Instance = RealInstance;

const URL_ = "http://127.0.0.1:9/item";
const CALLS = 200;
const results = [];
for (const v of variants) {
  if (!v.tally) throw new Error(`${v.name}: its wasm was not instantiated through WebAssembly.Instance: nothing to count`);
  for (let i = 0; i < 50; i++) await (await v.call(URL_)).arrayBuffer(); // warm: lazy paths taken once
  // Each variant runs alone: what crosses now is its own.
  v.tally.clear();
  counts = v.tally;
  for (let i = 0; i < CALLS; i++) await (await v.call(URL_)).arrayBuffer();
  counts = null;
  const total = [...v.tally.values()].reduce((a, b) => a + b, 0) / CALLS;
  const into = [...v.tally.entries()].filter(([n]) => n.startsWith("wasm ")).reduce((a, [, c]) => a + c, 0) / CALLS;
  results.push({ name: v.name, perCall: total, intoWasm: into, outOfWasm: total - into });
}

const minimum = results.find((r) => r.name === "the stack's minimum");
console.log("| build | crossings per 200 GET | JS → wasm | wasm → JS | vs the stack's minimum |");
console.log("| --- | ---: | ---: | ---: | ---: |");
for (const r of results) {
  const vs = minimum ? `${(r.perCall / minimum.perCall).toFixed(2)}×` : "n/a";
  console.log(`| ${r.name} | ${r.perCall.toFixed(2)} | ${r.intoWasm.toFixed(2)} | ${r.outOfWasm.toFixed(2)} | ${vs} |`);
}
if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify(results, null, 2));
