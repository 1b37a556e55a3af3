// Startup (bench/README.md): how long after `import` the library can be called.
//
// Node: fresh processes, each timing one dynamic `import()` of the library until its function
// is there (ours: resilientFetch, which the package's Node entry makes callable once its import
// resolves: the glue reads and instantiates the wasm synchronously). The same for an empty
// module, whose time (resolving, reading, linking one module) is subtracted. Kinds take turns
// within each run; one run first is not counted (it warms the OS file cache).
//
// Chromium: a fresh headless Chromium (empty profile, so no HTTP or code cache) per sample,
// its page served from 127.0.0.1 (chromium.mjs). Two measurements:
//   - wasm compile + instantiate: the page fetches the shipped wasm's bytes (untimed), then
//     WebAssembly.compile(bytes), then the glue's init() with that module (instantiate and the
//     glue's start-up);
//   - cold import→callable: the page `import()`s a bundle of the library (esbuild, minified,
//     as an app ships it; ours through its browser entry, which fetches the wasm next to the
//     bundle, served as application/wasm, and awaits its instantiation) until its function is
//     there; the same for an empty module, subtracted.
//
// Usage: node startup.mjs (from bench/, after run.sh installed the packages).
// Env: BENCH_STARTUP_RUNS (Node, default 21), BENCH_STARTUP_BROWSER_RUNS (Chromium, default 7),
// BENCH_CHROMIUM (default /usr/bin/chromium).

import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { median } from "./cases.mjs";
import { bundle, chromiumVersion, haveChromium, runInChromium, startServer } from "./chromium.mjs";

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
const wasm = readFileSync(join(pkgWeb, "resilient_fetch_bg.wasm"));
const files = new Map([
  ["/bundle/resilient_fetch_bg.wasm", wasm],
  // The glue alone, for the compile + instantiate measurement (its init() is given the module).
  ["/bundle/glue.js", await bundle(`export { default as init, resilientFetch } from ${JSON.stringify(join(pkgWeb, "resilient_fetch.js"))};`)],
  ["/bundle/empty.js", await bundle("export {};")],
  ["/bundle/warm.js", await bundle("export {};")],
  ["/bundle/ours.js", await bundle('export { resilientFetch } from "resilient-fetch";')],
  ["/bundle/ky.js", await bundle('export { default } from "ky";')],
]);
// Untimed first: one request and one module import (of another empty module), so that the
// fresh browser's network and module loading are up and the times are the library's.
const warmUp = `
await (await fetch("/bundle/warm.js")).text();
await import("/bundle/warm.js?import");
await new Promise((resolve) => setTimeout(resolve, 300));`;
// With `preload`, the page also has the wasm's <link rel="preload" as="fetch" crossorigin> (put
// in at the same moment, as a page's head would have it parsed with its module script), so the
// wasm downloads while the bundle does, and init()'s fetch takes the preloaded response.
const importPage = (path, name, preload) => `${warmUp}
const t0 = performance.now();
${preload ? `document.head.append(Object.assign(document.createElement("link"),
  { rel: "preload", as: "fetch", crossOrigin: "anonymous", href: ${JSON.stringify(preload)} }));` : ""}
const m = await import(${JSON.stringify(path)});
${name ? `if (typeof m[${JSON.stringify(name)}] !== "function") throw new Error("not callable");` : ""}
return { ms: performance.now() - t0 };`;
const compilePage = `${warmUp}
const bytes = await (await fetch("/bundle/resilient_fetch_bg.wasm")).arrayBuffer();
const glue = await import("/bundle/glue.js");
const t0 = performance.now();
const module = await WebAssembly.compile(bytes);
const t1 = performance.now();
await glue.init({ module_or_path: module });
const t2 = performance.now();
if (typeof glue.resilientFetch !== "function") throw new Error("not callable");
return { compile: t1 - t0, instantiate: t2 - t1 };`;
const browserKinds = [
  { label: "empty module", body: importPage("/bundle/empty.js", null) },
  { label: `ours: resilient-fetch ${version("resilient-fetch")} (wasm ${(wasm.length / 1024).toFixed(1)} KB)`, body: importPage("/bundle/ours.js", "resilientFetch") },
  { label: `ky ${version("ky")}`, body: importPage("/bundle/ky.js", "default") },
  {
    label: "ours, the wasm preloaded (`<link rel=\"preload\" as=\"fetch\" crossorigin>` in the page)",
    body: importPage("/bundle/ours.js", "resilientFetch", "/bundle/resilient_fetch_bg.wasm"),
  },
  { label: "compile", body: compilePage },
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
const [bEmpty, bOurs, bKy, bPre] = browserKinds.map((k) => (k.samples[0].ms === undefined ? null : median(k.samples.map((s) => s.ms))));
const compile = browserKinds.at(-1).samples;
const compileMs = median(compile.map((s) => s.compile));
const instantiateMs = median(compile.map((s) => s.instantiate));
const bothMs = median(compile.map((s) => s.compile + s.instantiate));

console.log(`## Startup in ${chromiumVersion()} (headless, a fresh browser and profile per sample, median of ${BROWSER_RUNS}; page on 127.0.0.1)`);
console.log("");
console.log("| ours' wasm, bytes already fetched | ms | min–max |");
console.log("| --- | ---: | ---: |");
const span = (xs) => `${ms(Math.min(...xs))}–${ms(Math.max(...xs))}`;
console.log(`| WebAssembly.compile | ${ms(compileMs)} | ${span(compile.map((s) => s.compile))} |`);
console.log(`| instantiate (the glue's init with the module) | ${ms(instantiateMs)} | ${span(compile.map((s) => s.instantiate))} |`);
console.log(`| compile + instantiate | ${ms(bothMs)} | ${span(compile.map((s) => s.compile + s.instantiate))} |`);
console.log("");
console.log("| cold import → callable (esbuild bundle, minified) | ms | min–max | minus the empty module, ms | ours ÷ it |");
console.log("| --- | ---: | ---: | ---: | ---: |");
const bOursNet = bOurs - bEmpty;
for (const [i, k] of browserKinds.slice(0, -1).entries()) {
  const xs = k.samples.map((s) => s.ms);
  const m = median(xs);
  const net = m - bEmpty;
  // ky's row compares ours with it; the preloaded row compares itself with ky.
  const cells = i === 0 ? "— | —" : `${ms(net)} | ${i === 1 ? "1.0×" : i === 3 ? `${x(net, bKy - bEmpty)} ky` : x(bOursNet, net)}`;
  console.log(`| ${k.label} | ${ms(m)} | ${span(xs)} | ${cells} |`);
}
console.log("");
console.log(
  `In Chromium, ours takes ${ms(bOursNet)} ms from import to callable beyond an empty module (fetching the wasm from 127.0.0.1 included), ` +
    `${x(bOursNet, bKy - bEmpty)} ky's ${ms(bKy - bEmpty)} ms; with the wasm preloaded ${ms(bPre - bEmpty)} ms ` +
    `(${x(bPre - bEmpty, bKy - bEmpty)} ky's; target ≤ 1.2×: ${(bPre - bEmpty) <= 1.2 * (bKy - bEmpty) ? "met" : "not met"}); ` +
    `compiling and instantiating the wasm alone takes ${ms(bothMs)} ms.`,
);
