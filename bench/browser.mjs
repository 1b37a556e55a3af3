// Per-call overhead in headless Chromium (bench/README.md): the cases of overhead.mjs
// (cases.mjs) in a page. esbuild bundles the libraries for the browser (ours through its
// browser entry, which loads the wasm by URL); the page is served from 127.0.0.1, cross-origin
// isolated, and POSTs its rounds back. Chromium is launched directly, with no DevTools
// connection while it runs.
//
// Usage: node browser.mjs (from bench/, after run.sh installed the packages).
// Env: BENCH_BROWSER_CALLS (default 50000), BENCH_BROWSER_ROUNDS (default 5),
// BENCH_BROWSER_WARMUP (default 10000), BENCH_STACK_MINIMUM (optional, as for overhead.mjs),
// BENCH_NODE_JSON (overhead.mjs's BENCH_JSON output, optional: adds a Node-beside-Chromium table),
// BENCH_CHROMIUM (default /usr/bin/chromium).

import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ratio, times, us } from "./cases.mjs";
import { bundle, chromiumVersion, haveChromium, runInChromium, startServer } from "./chromium.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const CALLS = Number(process.env.BENCH_BROWSER_CALLS ?? 50_000);
const ROUNDS = Number(process.env.BENCH_BROWSER_ROUNDS ?? 5);
const WARMUP = Number(process.env.BENCH_BROWSER_WARMUP ?? 10_000);
const minimumDir = process.env.BENCH_STACK_MINIMUM;

if (!haveChromium()) {
  console.log("## Per-call overhead (Chromium)\n\n(skipped: no Chromium; scripts/toolchain.sh installs it)");
  process.exit(0);
}

// The libraries as an app bundles them; the stub goes in only once they have loaded (the
// package's browser entry fetches its wasm while it is imported).
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
export async function run({ calls, rounds, warmup }) {
  const stub = makeStub();
  globalThis.fetch = stub.fetch;
  const variants = makeVariants({ stub, rf, ky, ofetch, cockatiel, minimumFetch });
  await runRounds(variants, stub, { calls, rounds, warmup, now: () => performance.now() });
  return variants.map(({ name, ours, rounds, median }) => ({ name, ours, rounds, median }));
}
`;
const files = new Map([
  ["/bundle/percall.js", await bundle(entry)],
  ["/bundle/resilient_fetch_bg.wasm", readFileSync(join(here, "node_modules/resilient-fetch/web/resilient_fetch_bg.wasm"))],
]);
if (minimumDir) files.set("/bundle/stack_minimum_bg.wasm", readFileSync(join(minimumDir, "stack_minimum_bg.wasm")));

const server = await startServer(files);
let outcome;
try {
  outcome = await runInChromium(
    server,
    `const m = await import("/bundle/percall.js");
    return m.run(${JSON.stringify({ calls: CALLS, rounds: ROUNDS, warmup: WARMUP })});`,
  );
} finally {
  await server.close();
}
const variants = outcome.result;
const byName = (list, prefix) => list.find((v) => v.name.startsWith(prefix));
const floorV = byName(variants, "floor");

console.log(
  `## Per-call overhead (${chromiumVersion()}, headless, cross-origin isolated page; stub fetch, ${CALLS} awaited calls per round × ${ROUNDS} rounds, interleaved)`,
);
console.log("");
console.log("The same cases as the Node table (cases.mjs), bundled by esbuild for the browser. µs/call: median round; × floor: median over rounds of the round's ratio.");
console.log("");
console.log("| variant | µs/call | rounds min–max | × floor |");
console.log("| --- | ---: | ---: | ---: |");
for (const v of variants) {
  console.log(`| ${v.name} | ${us(v.median)} | ${us(Math.min(...v.rounds))}–${us(Math.max(...v.rounds))} | ${times(ratio(v, floorV))} |`);
}
console.log("");
const ours = byName(variants, "ours: resilientFetch, defaults, GET");
const rejection = byName(variants, "ours: open-breaker rejection");
const cockatielV = byName(variants, "cockatiel");
const kyV = byName(variants, "ky");
const minimum = byName(variants, "the stack's minimum");
console.log(
  `In Chromium, ours (GET, defaults) is ${times(ratio(ours, floorV))} the floor (target ≤ 2×), ` +
    `${ratio(ours, cockatielV).toFixed(2)}× cockatiel (target ≤ 0.5×), ${ratio(ours, kyV).toFixed(2)}× ky; ` +
    `the open-breaker rejection takes ${us(rejection.median)} µs (target ≤ 5 µs)` +
    (minimum ? `; the stack's minimum is ${times(ratio(minimum, floorV))} the floor, and ours ${times(ratio(ours, minimum))} it.` : "."),
);

// Node beside Chromium, when overhead.mjs left its results (run.sh passes them).
const nodeJson = process.env.BENCH_NODE_JSON;
if (nodeJson && existsSync(nodeJson)) {
  const node = JSON.parse(readFileSync(nodeJson, "utf8"));
  const nodeFloor = byName(node, "floor");
  console.log("");
  console.log(`### Node ${process.version} beside ${chromiumVersion()}`);
  console.log("");
  console.log("| variant | Node µs/call | Node × floor | Chromium µs/call | Chromium × floor |");
  console.log("| --- | ---: | ---: | ---: | ---: |");
  for (const n of node) {
    const c = variants.find((v) => v.name === n.name);
    const browserCells = c ? `${us(c.median)} | ${times(ratio(c, floorV))}` : "— | —";
    console.log(`| ${n.name} | ${us(n.median)} | ${times(ratio(n, nodeFloor))} | ${browserCells} |`);
  }
}
