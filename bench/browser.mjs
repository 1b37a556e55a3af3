// Per-call overhead in headless Chromium (bench/README.md): the cases of overhead.mjs
// (cases.mjs) in a page. esbuild bundles the libraries for the browser (ours through its
// browser entry, which loads the wasm by URL; "resilient-fetch/full", where the package has
// it, in a bundle of its own beside it); the page is served from 127.0.0.1, cross-origin
// isolated, and POSTs its rounds back. Chromium is launched directly, with no DevTools
// connection while it runs.
//
// Usage: node browser.mjs (from bench/, after run.sh installed the packages).
// Env: BENCH_BROWSER_CALLS (default 50000), BENCH_BROWSER_ROUNDS (default 5),
// BENCH_BROWSER_WARMUP (default 10000), BENCH_STACK_MINIMUM (optional, as for overhead.mjs),
// BENCH_NODE_JSON (overhead.mjs's BENCH_JSON output, optional: adds a Node-beside-Chromium table),
// BENCH_CHROMIUM (default /usr/bin/chromium).

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { added, byId, plus, ratio, referencesOf, times, us } from "./cases.mjs";
import { bundleWithWasm, chromiumVersion, haveChromium, runInChromium, startServer } from "./chromium.mjs";

const CALLS = Number(process.env.BENCH_BROWSER_CALLS ?? 50_000);
const ROUNDS = Number(process.env.BENCH_BROWSER_ROUNDS ?? 5);
const WARMUP = Number(process.env.BENCH_BROWSER_WARMUP ?? 10_000);
const minimumDir = process.env.BENCH_STACK_MINIMUM;

if (!haveChromium()) {
  console.log("## Per-call overhead (Chromium)\n\n(skipped: no Chromium; scripts/toolchain.sh installs it)");
  process.exit(0);
}

// The libraries as an app bundles them. Before the stub goes in, one real call through each of
// our entries (to a file of the page's server), so that its wasm is in whether or not its
// import waited for it.
const entry = `
import * as rf from "resilient-fetch";
import ky from "ky";
import { ofetch } from "ofetch";
import * as cockatiel from "cockatiel";
import { makeStub, makeVariants, runRounds } from "./cases.mjs";
${
  minimumDir
    ? `import initMinimum, { minimumFetch } from ${JSON.stringify(join(minimumDir, "stack_minimum.js"))};
await initMinimum();`
    : "const minimumFetch = undefined;"
}
export async function run({ calls, rounds, warmup }, rfFull) {
  for (const entry of [rf, rfFull]) {
    if (entry && (await entry.resilientFetch("/ready.txt")).status !== 200) throw new Error("the ready call failed");
  }
  const stub = makeStub();
  globalThis.fetch = stub.fetch;
  const variants = makeVariants({ stub, rf, rfFull, ky, ofetch, cockatiel, minimumFetch });
  await runRounds(variants, stub, { calls, rounds, warmup, now: () => performance.now() });
  return variants.map(({ id, set, name, ours, rounds, median }) => ({ id, set, name, ours, rounds, median }));
}
`;
const files = await bundleWithWasm(entry, "/bundle/percall.js");
files.set("/ready.txt", "ok");
// The full build, where the package has one: its own bundle and folder (its wasm file may
// have the lean one's name).
let full = false;
try {
  for (const [path, bytes] of await bundleWithWasm(
    'export { resilientFetch, ResilientClient, CircuitOpenError } from "resilient-fetch/full";',
    "/full/rf.js",
  )) {
    files.set(path, bytes);
  }
  full = true;
} catch (e) {
  if (!e.errors?.some((m) => /Could not resolve "resilient-fetch\/full"/.test(m.text))) throw e;
}

const server = await startServer(files);
let outcome;
try {
  outcome = await runInChromium(
    server,
    `const m = await import("/bundle/percall.js");
    const rfFull = ${full} ? await import("/full/rf.js") : undefined;
    return m.run(${JSON.stringify({ calls: CALLS, rounds: ROUNDS, warmup: WARMUP })}, rfFull);`,
  );
} finally {
  await server.close();
}
const variants = outcome.result;
const get = (id, set) => byId(variants, id, set);
const floorV = get("floor");

console.log(
  `## Per-call overhead (${chromiumVersion()}, headless, cross-origin isolated page; stub fetch, ${CALLS} awaited calls per round × ${ROUNDS} rounds, interleaved)`,
);
console.log("");
console.log(
  "Goals: ours GET ≤ 2× the floor; open-breaker rejection ≤ 5 µs; ours GET ≤ cockatiel's composed policy; the default (lean) entry at least as fast as resilient-fetch/full. " +
    "The same cases as the Node table (cases.mjs), bundled by esbuild for the browser; the stub answers a fresh body-less `new Response(null, { status: 200 })` per call " +
    '(the second table: a fresh `new Response("ok")`, against its own bare stub and floor). µs/call: median round; × floor and + µs over the bare stub: medians over rounds of the round\'s ratio and difference.',
);
const table = (set) => {
  console.log("");
  console.log("| variant | µs/call | rounds min–max | × floor | + µs over the bare stub |");
  console.log("| --- | ---: | ---: | ---: | ---: |");
  for (const v of variants.filter((w) => w.set === set)) {
    const refs = referencesOf(variants, v);
    const addedCell = v === refs.bare ? "—" : plus(added(v, refs.bare));
    console.log(`| ${v.name} | ${us(v.median)} | ${us(Math.min(...v.rounds))}–${us(Math.max(...v.rounds))} | ${times(ratio(v, refs.floor))} | ${addedCell} |`);
  }
};
table("main");
console.log("");
console.log('With a body: the stub answers a fresh `new Response("ok")` per call.');
table("body");
console.log("");

const ours = get("ours");
const oursFull = get("oursFull");
const rejection = get("rejection");
const rejectionFull = get("rejectionFull");
const cockatielV = get("cockatiel");
const kyV = get("ky");
const bare = get("bare");
const verdict = (ok) => (ok ? "met" : "NOT met");
const overBare = (v) => `${plus(added(v, bare))} µs over the bare stub`;
const goals = [
  [
    "ours GET ≤ 2× the floor",
    `${times(ratio(ours, floorV))} (${us(ours.median)} vs ${us(floorV.median)} µs; ours ${overBare(ours)}, the floor ${overBare(floorV)})`,
    verdict(ratio(ours, floorV) <= 2),
  ],
  ["open-breaker rejection ≤ 5 µs", `${us(rejection.median)} µs = ${times(ratio(rejection, floorV))} the floor`, verdict(rejection.median <= 5)],
  [
    "ours GET ≤ cockatiel's composed policy",
    `${ratio(ours, cockatielV).toFixed(2)}× cockatiel (${us(ours.median)} vs ${us(cockatielV.median)} µs; cockatiel ${overBare(cockatielV)}); ${ratio(ours, kyV).toFixed(2)}× ky`,
    verdict(ratio(ours, cockatielV) <= 1),
  ],
  oursFull
    ? [
        "the default (lean) entry at least as fast as resilient-fetch/full",
        `GET ${ratio(ours, oursFull).toFixed(2)}× the full build's (${us(ours.median)} vs ${us(oursFull.median)} µs); open-breaker rejection ${ratio(rejection, rejectionFull).toFixed(2)}× (${us(rejection.median)} vs ${us(rejectionFull.median)} µs)`,
        verdict(ratio(ours, oursFull) <= 1 && ratio(rejection, rejectionFull) <= 1),
      ]
    : ["the default (lean) entry at least as fast as resilient-fetch/full", "not measured: the installed package has no resilient-fetch/full", "—"],
];
console.log("| goal (Chromium) | measured | |");
console.log("| --- | --- | --- |");
for (const [g, m, v] of goals) console.log(`| ${g} | ${m} | ${v} |`);
const bodyOurs = get("ours", "body");
const bodyBare = get("bare", "body");
const bodyFloor = get("floor", "body");
const minimum = get("minimum");
console.log("");
console.log(
  `With a body in the stub's response (${us(bodyBare.median)} µs/call bare): ours ${plus(added(bodyOurs, bodyBare))} µs over it, the floor ${plus(added(bodyFloor, bodyBare))} µs, ` +
    `ours ${times(ratio(bodyOurs, bodyFloor))} the floor.` +
    (minimum ? ` The stack's minimum is ${times(ratio(minimum, floorV))} the floor (${overBare(minimum)}), and ours ${times(ratio(ours, minimum))} it.` : ""),
);

// Node beside Chromium, when overhead.mjs left its results (run.sh passes them).
const nodeJson = process.env.BENCH_NODE_JSON;
if (nodeJson && existsSync(nodeJson)) {
  const node = JSON.parse(readFileSync(nodeJson, "utf8"));
  console.log("");
  console.log(`### Node ${process.version} beside ${chromiumVersion()}`);
  console.log("");
  console.log("| variant | Node µs/call | Node × floor | Node + µs over the bare stub | Chromium µs/call | Chromium × floor | Chromium + µs over the bare stub |");
  console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
  const cells = (list, v) => {
    if (!v) return "— | — | —";
    const refs = referencesOf(list, v);
    return `${us(v.median)} | ${times(ratio(v, refs.floor))} | ${v === refs.bare ? "—" : plus(added(v, refs.bare))}`;
  };
  for (const n of node) {
    const c = variants.find((v) => v.name === n.name && v.set === n.set);
    console.log(`| ${n.name} | ${cells(node, n)} | ${cells(variants, c)} |`);
  }
}
