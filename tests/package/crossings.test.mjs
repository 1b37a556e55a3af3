// How often a call crosses between JS and the wasm (issue: "crossings per call"), counted through
// the bindings themselves: every function the wasm imports (the glue's, called from Rust) and every
// function it exports (called from JS) is wrapped with a counter before the package loads, and a
// 200 GET through a stub fetch is counted, once warm. The bound is what the package does today: a
// change that adds a crossing to the common call shows here, and the names printed say which.
import assert from "node:assert/strict";
import test from "node:test";

// Each crossing, by direction and name, while `counting`.
const counts = new Map();
let counting = false;
const count = (name) => {
  if (counting) counts.set(name, (counts.get(name) ?? 0) + 1);
};
// What each minified import does, for the report: the first line of its source.
const sources = new Map();
const wrap = (name, f) => function (...args) {
  count(name);
  return f.apply(this, args);
};

// Node's glue instantiates synchronously (new WebAssembly.Instance) when the package loads.
const RealInstance = WebAssembly.Instance;
WebAssembly.Instance = function Instance(module, imports) {
  const counted = {};
  for (const [ns, fns] of Object.entries(imports)) {
    counted[ns] = {};
    for (const [name, f] of Object.entries(fns)) {
      if (typeof f === "function") sources.set(`js  ${name}`, String(f).replace(/\s+/g, " ").slice(0, 110));
      counted[ns][name] = typeof f === "function" ? wrap(`js  ${name}`, f) : f;
    }
  }
  const real = new RealInstance(module, counted);
  const exports = {};
  for (const [name, v] of Object.entries(real.exports)) {
    exports[name] = typeof v === "function" ? wrap(`wasm ${name}`, v) : v;
  }
  return { exports };
};
const { ResilientClient } = await import("resilient-fetch");
WebAssembly.Instance = RealInstance;

/** The crossings of `calls` GETs answered 200 at once by a stub, per call, and by name. */
async function perCall(client, calls, read) {
  counts.clear();
  counting = true;
  for (let i = 0; i < calls; i++) {
    const response = await client.fetch("http://127.0.0.1:9/item");
    if (read) await response.arrayBuffer();
  }
  counting = false;
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  const names = [...counts].sort((a, b) => b[1] - a[1]).map(([n, c]) => `${(c / calls).toFixed(2)} ${n}  ${sources.get(n) ?? ""}`);
  return { total: total / calls, names };
}

// Counted, the lean and the full build alike (39 at 0.6.0; 13 once the arguments cross in two,
// the settlement brings the status, the send makes the controller and the call's promise is
// made and settled by JS; 12 once the answer is guarded and the call ended in one; 11 once
// readArguments makes the call's promise too; 10 once a call with no policy of its own is read
// before it enters): the taker (handed what JS read) and the client's entry, the clock at the
// attempt's end, the send, the settler, the answer guarded and the call ended (endGuarded), and
// the task queue of wasm-bindgen-futures (the task's first poll and its wake, each a
// queueMicrotask and the run it calls). The goal, 10, is met; the bound keeps it from slipping
// back (bench/crossings.mjs prints it beside the stack's minimum).
const BOUND = { unread: 10, read: 10 };

test("a 200 GET crosses between JS and the wasm a bounded number of times", async () => {
  const client = new ResilientClient({ fetch: async () => new Response(null, { status: 200 }) });
  await perCall(client, 50, true); // warm: the origin's entry made, every lazy path taken once
  const unread = await perCall(client, 100, false);
  const read = await perCall(client, 100, true);
  client.free();
  console.log(`crossings per 200 GET: ${unread.total.toFixed(2)} (body unread), ${read.total.toFixed(2)} (body read)`);
  for (const n of read.names) console.log(`  ${n}`);
  assert.ok(unread.total > 0, "nothing was counted: the bindings were not wrapped");
  assert.ok(unread.total <= BOUND.unread, `${unread.total} crossings per call (bound ${BOUND.unread}):\n${unread.names.join("\n")}`);
  assert.ok(read.total <= BOUND.read, `${read.total} crossings per call with its body read (bound ${BOUND.read}):\n${read.names.join("\n")}`);
});
