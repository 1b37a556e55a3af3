// Startup (bench/README.md): how long after `import` the library can be called, and (in
// Chromium) how long until its first response.
//
// Node: fresh processes, each timing one dynamic `import()` of the library until its function
// is there (ours: resilientFetch, which the package's Node entry makes callable once its import
// resolves: the glue reads and instantiates the wasm synchronously). The same for an empty
// module, whose time (resolving, reading, linking one module) is subtracted. Kinds take turns
// within each run; one run first is not counted (it warms the OS file cache).
//
// Chromium: a fresh headless Chromium (empty profile, so no HTTP or code cache) per sample,
// its page served from 127.0.0.1 (chromium.mjs), beside ky and an empty module:
//   - (a) import → callable: `import()` of a bundle of the library (esbuild, minified, as an
//     app ships it; ours through its browser entry, which loads the wasm next to the bundle,
//     served as application/wasm) until its function is there;
//   - (b) import → first response: the page first puts in a stub `globalThis.fetch` that
//     answers `new Response(null)` for the benchmark's URL (and hands every other request, the
//     wasm's own, to the real fetch), then times `import()` + `await resilientFetch(url)`
//     (ky: `await ky(url)`). With an entry that awaits its wasm at import (top-level await)
//     (a) ≈ (b); with one that does not, (a) is the JS alone and (b) waits for the wasm;
//   - the wasm's own fetch + compile (`WebAssembly.compileStreaming(fetch(wasm))`) and its
//     instantiation (the glue's init() with that module), which (b) is compared with.
//
// Usage: node startup.mjs (from bench/, after run.sh installed the packages).
// Env: BENCH_STARTUP_RUNS (Node, default 21), BENCH_STARTUP_BROWSER_RUNS (Chromium, default 7),
// BENCH_CHROMIUM (default /usr/bin/chromium).

import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { median } from "./cases.mjs";
import { bundle, bundleWithWasm, chromiumVersion, haveChromium, runInChromium, startServer } from "./chromium.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 21);
const BROWSER_RUNS = Number(process.env.BENCH_STARTUP_BROWSER_RUNS ?? 7);
const version = (name) => JSON.parse(readFileSync(join(here, "node_modules", name, "package.json"), "utf8")).version;

const out = join(here, ".out/startup");
mkdirSync(out, { recursive: true });
const emptyModule = join(out, "empty.mjs");
writeFileSync(emptyModule, "export {};\n");

// [label, specifier, the export that must be a function (null: none)]
const kinds = [
  ["empty module", pathToFileURL(emptyModule).href, null],
  [`ours: resilient-fetch ${version("resilient-fetch")}`, "resilient-fetch", "resilientFetch"],
  [`ky ${version("ky")}`, "ky", "default"],
  [`ofetch ${version("ofetch")}`, "ofetch", "ofetch"],
  [`cockatiel ${version("cockatiel")}`, "cockatiel", "retry"],
];
const probe = (specifier, name) => `
const t0 = performance.now();
const m = await import(${JSON.stringify(specifier)});
${name ? `if (typeof m[${JSON.stringify(name)}] !== "function") throw new Error("not callable");` : ""}
const t1 = performance.now();
process.stdout.write(JSON.stringify({ ms: t1 - t0 }));
`;

const ms = (x) => (x < 10 ? x.toFixed(2) : x.toFixed(1));
// a ÷ b; none when b is not above zero (a library no slower than the empty module, in the noise).
const x = (a, b) => (b > 0 ? `${(a / b).toFixed(a / b < 10 ? 2 : 1)}×` : "— (in the noise)");

// ---- Node
const samples = kinds.map(() => []);
for (let run = 0; run <= RUNS; run++) {
  for (let k = 0; k < kinds.length; k++) {
    const i = (k + run) % kinds.length;
    const [, specifier, name] = kinds[i];
    const result = JSON.parse(
      execFileSync(process.execPath, ["--input-type=module", "-e", probe(specifier, name)], { cwd: here, encoding: "utf8" }),
    );
    if (run > 0) samples[i].push(result.ms);
  }
}
const nodeRows = kinds.map(([label], i) => ({ label, ms: median(samples[i]), lo: Math.min(...samples[i]), hi: Math.max(...samples[i]) }));
const empty = nodeRows[0].ms;
const nodeOurs = nodeRows[1].ms - empty;
const nodeKy = nodeRows[2].ms - empty;

console.log(`## Startup: import → callable (Node ${process.version}, fresh processes, median of ${RUNS})`);
console.log("");
console.log("| module | import → callable, ms | min–max | minus the empty module, ms | ours ÷ it |");
console.log("| --- | ---: | ---: | ---: | ---: |");
for (const [i, r] of nodeRows.entries()) {
  const net = r.ms - empty;
  const cells = i === 0 ? "— | —" : `${ms(net)} | ${i === 1 ? "1.0×" : x(nodeOurs, net)}`;
  console.log(`| ${r.label} | ${ms(r.ms)} | ${ms(r.lo)}–${ms(r.hi)} | ${cells} |`);
}
console.log("");
console.log(`Ours takes ${ms(nodeOurs)} ms from import to callable beyond an empty module's import, ${x(nodeOurs, nodeKy)} ky's ${ms(nodeKy)} ms.`);
console.log("");

// ---- Chromium
if (!haveChromium()) {
  console.log("## Startup in Chromium\n\n(skipped: no Chromium; scripts/toolchain.sh installs it)");
  process.exit(0);
}
const pkgWeb = join(here, "node_modules/resilient-fetch/web");
const oursFiles = await bundleWithWasm('export { resilientFetch, default } from "resilient-fetch";', "/bundle/ours.js");
const wasmPaths = [...oursFiles.keys()].filter((p) => p.endsWith(".wasm"));
if (wasmPaths.length !== 1) throw new Error(`the browser entry's bundle loads ${wasmPaths.length} wasm files, not one`);
const [wasmPath] = wasmPaths;
const wasm = oursFiles.get(wasmPath);
const files = new Map([
  ...oursFiles,
  // The glue alone, for the fetch + compile + instantiate measurement (its init() is given the module).
  ["/bundle/glue.js", await bundle(`export { default as init, resilientFetch } from ${JSON.stringify(join(pkgWeb, "resilient_fetch.js"))};`)],
  ["/bundle/empty.js", await bundle("export {};")],
  ["/bundle/warm.js", await bundle("export {};")],
  ["/bundle/ky.js", await bundle('export { default } from "ky";')],
]);
// Never contacted: the stub of (b) answers it.
const TARGET = "http://127.0.0.1:9/startup";
// Untimed first: one request and one module import (of another empty module), so that the
// fresh browser's network and module loading are up and the times are the library's.
const warmUp = `
await (await fetch("/bundle/warm.js")).text();
await import("/bundle/warm.js?import");
await new Promise((resolve) => setTimeout(resolve, 300));`;
// (b)'s stub, in before the import: `new Response(null)` for TARGET, the real fetch for the rest.
const stubFetch = `
const realFetch = globalThis.fetch;
globalThis.fetch = (input, init) =>
  String(input instanceof Request ? input.url : input).startsWith(${JSON.stringify(TARGET)})
    ? Promise.resolve(new Response(null))
    : realFetch(input, init);`;
// (a) with `call` null, (b) with `call` (an expression of the module m). With `preload`, the page
// also has the wasm's <link rel="preload" as="fetch" crossorigin> (put in at the same moment, as
// a page's head would have it parsed with its module script), so the wasm downloads while the
// bundle does, and the entry's fetch takes the preloaded response.
const importPage = (path, name, call, preload) => `${warmUp}
${call ? stubFetch : ""}
const t0 = performance.now();
${preload ? `document.head.append(Object.assign(document.createElement("link"),
  { rel: "preload", as: "fetch", crossOrigin: "anonymous", href: ${JSON.stringify(preload)} }));` : ""}
const m = await import(${JSON.stringify(path)});
const imported = performance.now();
${name ? `if (typeof m[${JSON.stringify(name)}] !== "function") throw new Error("not callable");` : ""}
${call ? `const r = await ${call};\nif (r.status !== 200) throw new Error("status " + r.status);` : ""}
const ms = performance.now() - t0;
// Whether the wasm's response had ended by the time the import resolved.
const wasmBeforeImport = performance.getEntriesByType("resource")
  .some((e) => new URL(e.name).pathname === ${JSON.stringify(wasmPath)} && e.responseEnd > 0 && e.responseEnd <= imported);
return { ms, wasmBeforeImport };`;
const compilePage = `${warmUp}
const glue = await import("/bundle/glue.js");
const t0 = performance.now();
const module = await WebAssembly.compileStreaming(fetch(${JSON.stringify(wasmPath)}));
const t1 = performance.now();
await glue.init({ module_or_path: module });
const t2 = performance.now();
if (typeof glue.resilientFetch !== "function") throw new Error("not callable");
return { fetchCompile: t1 - t0, instantiate: t2 - t1 };`;
// (c) the first call alone, once the wasm is ready (`await ready()`): at once, and after the
// page has been idle for 200 ms (the browser entry warms the call path up when the page is idle).
const firstCallPage = (idleMs) => `${warmUp}
${stubFetch}
const m = await import("/bundle/ours.js");
await m.default();
${idleMs ? `await new Promise((resolve) => setTimeout(resolve, ${idleMs}));` : ""}
const t0 = performance.now();
const r = await m.resilientFetch(${JSON.stringify(TARGET)});
if (r.status !== 200) throw new Error("status " + r.status);
return { ms: performance.now() - t0 };`;
const oursLabel = `ours: resilient-fetch ${version("resilient-fetch")} (wasm ${(wasm.length / 1024).toFixed(1)} KB)`;
const call = `m.resilientFetch(${JSON.stringify(TARGET)})`;
const browserKinds = [
  { id: "empty", label: "empty module (import)", body: importPage("/bundle/empty.js", null) },
  { id: "oursA", label: `${oursLabel}: (a) import → callable`, body: importPage("/bundle/ours.js", "resilientFetch") },
  { id: "oursB", label: `${oursLabel}: (b) import → first response`, body: importPage("/bundle/ours.js", "resilientFetch", call) },
  {
    id: "oursPre",
    label: "ours: (b) import → first response, the wasm preloaded (`<link rel=\"preload\" as=\"fetch\" crossorigin>` in the page)",
    body: importPage("/bundle/ours.js", "resilientFetch", call, wasmPath),
  },
  { id: "kyA", label: `ky ${version("ky")}: (a) import → callable`, body: importPage("/bundle/ky.js", "default") },
  { id: "kyB", label: `ky ${version("ky")}: (b) import → first response`, body: importPage("/bundle/ky.js", "default", `m.default(${JSON.stringify(TARGET)})`) },
  { id: "compile", body: compilePage },
  { id: "firstAtOnce", body: firstCallPage(0) },
  { id: "firstIdle", body: firstCallPage(200) },
];
for (const k of browserKinds) k.samples = [];
const server = await startServer(files);
try {
  for (let run = 0; run < BROWSER_RUNS; run++) {
    for (let j = 0; j < browserKinds.length; j++) {
      const k = browserKinds[(j + run) % browserKinds.length];
      k.samples.push((await runInChromium(server, k.body, { timeoutMs: 60_000 })).result);
    }
  }
} finally {
  await server.close();
}
const kind = Object.fromEntries(browserKinds.map((k) => [k.id, k]));
const med = (id) => median(kind[id].samples.map((s) => s.ms));
const bEmpty = med("empty");
const net = (id) => med(id) - bEmpty;
const compile = kind.compile.samples;
const fetchCompileMs = median(compile.map((s) => s.fetchCompile));
const instantiateMs = median(compile.map((s) => s.instantiate));
const bothMs = median(compile.map((s) => s.fetchCompile + s.instantiate));
const span = (xs) => `${ms(Math.min(...xs))}–${ms(Math.max(...xs))}`;

console.log(`## Startup in ${chromiumVersion()} (headless, a fresh browser and profile per sample, median of ${BROWSER_RUNS}; page on 127.0.0.1)`);
console.log("");
console.log("| ours' wasm, alone | ms | min–max |");
console.log("| --- | ---: | ---: |");
console.log(`| fetch + compile (WebAssembly.compileStreaming(fetch(wasm)), application/wasm from 127.0.0.1) | ${ms(fetchCompileMs)} | ${span(compile.map((s) => s.fetchCompile))} |`);
console.log(`| instantiate (the glue's init with the module) | ${ms(instantiateMs)} | ${span(compile.map((s) => s.instantiate))} |`);
console.log(`| fetch + compile + instantiate | ${ms(bothMs)} | ${span(compile.map((s) => s.fetchCompile + s.instantiate))} |`);
console.log("");
console.log(
  "(a) import → callable: `import()` of the esbuild bundle (minified) until its function is there. (b) import → first response: a stub `globalThis.fetch` " +
    "answering `new Response(null)` is put in before the import, then `import()` + `await resilientFetch(url)` (ky: `await ky(url)`) are timed.",
);
console.log("");
console.log("| cold import (esbuild bundle, minified) | ms | min–max | minus the empty module, ms | ours ÷ ky's, same measure |");
console.log("| --- | ---: | ---: | ---: | ---: |");
const versusKy = { oursA: "kyA", oursB: "kyB", oursPre: "kyB" };
for (const k of browserKinds.filter((k) => k.label !== undefined)) {
  const xs = k.samples.map((s) => s.ms);
  const cells = k.id === "empty" ? "— | —" : `${ms(net(k.id))} | ${versusKy[k.id] ? x(net(k.id), net(versusKy[k.id])) : "—"}`;
  console.log(`| ${k.label} | ${ms(median(xs))} | ${span(xs)} | ${cells} |`);
}
console.log("");
const firstAtOnce = kind.firstAtOnce.samples.map((s) => s.ms);
const firstIdle = kind.firstIdle.samples.map((s) => s.ms);
console.log("| (c) ours' first call alone, once `ready()` has resolved (call → response, stub `fetch`) | ms | min–max |");
console.log("| --- | ---: | ---: |");
console.log(`| made at once (its wasm functions compiled as it first runs them) | ${ms(median(firstAtOnce))} | ${span(firstAtOnce)} |`);
console.log(`| made after 200 ms of an idle page (the entry's warm-up has compiled them) | ${ms(median(firstIdle))} | ${span(firstIdle)} |`);
console.log("");
const aRatio = net("kyA") > 0 ? net("oursA") / net("kyA") : Infinity;
const bOver = net("oursB") - fetchCompileMs;
console.log("| goal (Chromium) | measured | |");
console.log("| --- | --- | --- |");
console.log(
  `| (a) ours' import → callable ≤ 1.2× ky's | ${x(net("oursA"), net("kyA"))} (${ms(net("oursA"))} vs ${ms(net("kyA"))} ms beyond the empty module) | ${net("kyA") <= 0 ? "— (ky's is not above the empty module's: more runs)" : aRatio <= 1.2 ? "met" : "NOT met"} |`,
);
console.log(
  `| (b) ours' import → first response within 2 ms of the wasm's own fetch + compile | ${bOver >= 0 ? "+" : "−"}${ms(Math.abs(bOver))} ms (${ms(net("oursB"))} ms beyond the empty module vs ${ms(fetchCompileMs)} ms fetch + compile; ${ms(bothMs)} with instantiate) | ${bOver <= 2 ? "met" : "NOT met"} |`,
);
console.log("");
const waited = kind.oursA.samples.filter((s) => s.wasmBeforeImport).length;
console.log(
  `Ours (a) is ${ms(net("oursA"))} ms and (b) ${ms(net("oursB"))} ms beyond an empty module's import. ` +
    `In ${waited} of ${BROWSER_RUNS} (a) samples the wasm's response had ended before the import resolved ` +
    (waited === BROWSER_RUNS
      ? `(the browser entry awaits its wasm at import, so (b) − (a), ${ms(net("oursB") - net("oursA"))} ms, is the first call's own time).`
      : `(the browser entry does not wait for its wasm at import: (b) includes the wasm's fetch, compile and instantiation, and the first call).`),
);
