// Size (bench/README.md): what a browser app ships for each library, bundled the same way.
//
// Each library is bundled by esbuild (the project's, tools/node_modules) from a one-line
// entry that exports what the benchmarks use, for the browser, minified, then gzip -9.
// Ours: that bundle (browser.js + the web glue + the error classes) plus the wasm file,
// which the glue loads by URL and esbuild leaves as an asset; raw = the files as shipped.
//
// Usage: node size.mjs (from bench/, after run.sh installed the packages; BENCH_STACK_MINIMUM
// and BENCH_STACK_MINIMUM_SERDE: the built bench/stack-minimum glue and wasm, options read by
// Reflect and by serde-wasm-bindgen, optional).

import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { bundle } from "./chromium.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const TARGET_GZ = 16 * 1024;

const gzip = (bytes) => execFileSync("gzip", ["-9", "-c"], { input: bytes }).length;


const version = (name) =>
  JSON.parse(readFileSync(join(here, "node_modules", name, "package.json"), "utf8")).version;

const rows = [];

/** A wasm library as a page ships it: the bundle of `entry`, plus the wasm file the glue fetches. */
async function wasmPackage(name, wasmPath, entry) {
  const wasm = readFileSync(wasmPath);
  const js = await bundle(entry);
  const jsRaw = await bundle(entry, { minify: false });
  return {
    name,
    raw: wasm.length + jsRaw.length,
    min: wasm.length + js.length,
    gz: gzip(wasm) + gzip(js),
    parts: { wasm, js, jsRaw },
  };
}

// Ours.
const pkgDir = join(here, "node_modules/resilient-fetch");
const ours = await wasmPackage(
  `resilient-fetch ${version("resilient-fetch")} (wasm + JS)`,
  join(pkgDir, "web/resilient_fetch_bg.wasm"),
  'export { resilientFetch, ResilientClient } from "resilient-fetch";',
);
const { wasm, js: oursJs, jsRaw: oursJsRaw } = ours.parts;
rows.push(ours);
rows.push({ name: "  of which wasm (resilient_fetch_bg.wasm)", raw: wasm.length, min: wasm.length, gz: gzip(wasm), part: true });
rows.push({ name: "  of which JS (browser.js + glue + errors)", raw: oursJsRaw.length, min: oursJs.length, gz: gzip(oursJs), part: true });

// The stack's minimum (bench/stack-minimum, built by run.sh as scripts/build.sh builds the
// package: talc, wasm-opt, short names, stripped): the named crates doing the least a resilient
// fetch does, with none of our logic, options read with js_sys::Reflect as ours are. Once more
// with the options decoded by serde-wasm-bindgen's Deserializer instead, to show that cost.
// The entry initialises the glue as the package's browser.js does (a top-level `await init()`),
// so that the glue's loader and import shims are in the bundle: exporting minimumFetch alone
// would let esbuild drop them, and under-count the stack's minimum.
const minimumRow = (dir, name) =>
  wasmPackage(
    name,
    join(dir, "stack_minimum_bg.wasm"),
    `import init, { minimumFetch } from ${JSON.stringify(join(dir, "stack_minimum.js"))};
await init();
export { minimumFetch };`,
  );
let minimum;
let minimumSerde;
if (process.env.BENCH_STACK_MINIMUM) {
  minimum = await minimumRow(
    process.env.BENCH_STACK_MINIMUM,
    "the stack's minimum (bench/stack-minimum, wasm + JS, none of our logic; built as the package: options read with js_sys::Reflect, talc, names minified, stripped)",
  );
  rows.push(minimum);
  const w = minimum.parts;
  rows.push({ name: "  of which wasm", raw: w.wasm.length, min: w.wasm.length, gz: gzip(w.wasm), part: true });
  rows.push({ name: "  of which JS (glue)", raw: w.jsRaw.length, min: w.js.length, gz: gzip(w.js), part: true });
}
if (process.env.BENCH_STACK_MINIMUM_SERDE) {
  minimumSerde = await minimumRow(
    process.env.BENCH_STACK_MINIMUM_SERDE,
    "  the same, options decoded by serde-wasm-bindgen's Deserializer instead of Reflect",
  );
  rows.push(minimumSerde);
}

const peers = [
  ["ky", 'export { default } from "ky";', ""],
  ["ofetch", 'export { ofetch } from "ofetch";', ""],
  [
    "cockatiel",
    'export { retry, circuitBreaker, timeout, wrap, handleAll, ExponentialBackoff, ConsecutiveBreaker, TimeoutStrategy } from "cockatiel";',
    " (retry + breaker + timeout)",
  ],
  ["opossum", 'export { default } from "opossum";', " (+ events polyfill)"],
];
for (const [name, entry, note] of peers) {
  const min = await bundle(entry);
  const raw = await bundle(entry, { minify: false });
  rows.push({ name: `${name} ${version(name)}${note}`, raw: raw.length, min: min.length, gz: gzip(min) });
}

const kb = (b) => `${(b / 1024).toFixed(1)} KB`;
console.log("## Size (esbuild --bundle --minify --platform=browser, then gzip -9)");
console.log("");
console.log("| package | raw | minified | min+gz | ours ÷ it (min+gz) |");
console.log("| --- | ---: | ---: | ---: | ---: |");
for (const r of rows) {
  const ratio = r.part ? "" : `${(ours.gz / r.gz).toFixed(1)}×`;
  console.log(`| ${r.name} | ${kb(r.raw)} | ${kb(r.min)} | ${kb(r.gz)} | ${ratio} |`);
}
console.log("");
console.log("raw: bundled, not minified (ours: the wasm as shipped + the unminified JS bundle).");
console.log("");
console.log("| target | measured | |");
console.log("| --- | --- | --- |");
console.log(
  `| ours ≤ 16 KB min+gz | ${kb(ours.gz)} (${(ours.gz / TARGET_GZ).toFixed(1)}× the target) | ${ours.gz <= TARGET_GZ ? "met" : "NOT met"} |`,
);
// The budget the test command's size guard enforces (scripts/size-guard.mjs measures ours the
// same way, from pkg/).
const budgetFile = join(here, "../size-budget.json");
if (existsSync(budgetFile)) {
  const { limitKiB } = JSON.parse(readFileSync(budgetFile, "utf8")).lean;
  console.log(
    `| ours ≤ the size guard's budget, ${limitKiB} KiB (size-budget.json) | ${(ours.gz / 1024).toFixed(2)} KiB | ${ours.gz <= limitKiB * 1024 ? "within" : "OVER: scripts/test.sh fails"} |`,
  );
}
if (minimum) {
  const withSerde = minimumSerde ? `; ${kb(minimumSerde.gz)} with options decoded by serde-wasm-bindgen instead` : "";
  console.log(
    `| (reference) the stack's minimum, built as the package | ${kb(minimum.gz)} (ours is ${(ours.gz / minimum.gz).toFixed(1)}× it, ${kb(ours.gz - minimum.gz)} more)${withSerde} | ${minimum.gz <= TARGET_GZ ? "below the target" : "above the target: no build on this stack meets it"} |`,
  );
}
// Sanity: the wasm the package ships is the one measured.
statSync(join(pkgDir, "web/resilient_fetch.js"));
