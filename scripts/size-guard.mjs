// Size guard (issues #15, #31): what a browser app ships when it imports each build of the
// package, the lean "resilient-fetch" and "resilient-fetch/full", must stay within that build's
// budget in size-budget.json, the one place the limits are kept; the opt-in
// resilient-fetch/otel entry is never part of either (its own size is shown). A node:test file:
//   node --test --test-reporter=tap scripts/size-guard.mjs      (scripts/test.sh, layer `size`)
//
// Measured as bench/size.mjs measures: esbuild bundles a one-line entry that imports the build
// by name, resolved the way a bundler resolves it for a browser (the package's "browser"
// export: pkg/browser.js, pkg/full/browser.js), minified, ESM; the JS bundle and the wasm file
// the glue fetches (web/resilient_fetch_bg.wasm, full/web/...) each go through gzip -9.
// Total = min+gz JS + gz wasm; over the budget fails.
//
// Needs pkg/ (scripts/build.sh; the `package` layer builds it) and esbuild from tools/
// (scripts/toolchain.sh installs it). Env: RF_PKG_DIR (default pkg/), RF_TOOLS_DIR (default
// tools/), RF_SIZE_BUDGET (default size-budget.json at the repository root).

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const PKG = resolve(process.env.RF_PKG_DIR ?? join(ROOT, "pkg"));
const TOOLS = resolve(process.env.RF_TOOLS_DIR ?? join(ROOT, "tools"));
const BUDGET_FILE = resolve(process.env.RF_SIZE_BUDGET ?? join(ROOT, "size-budget.json"));
const WASM = "web/resilient_fetch_bg.wasm";

/** gzip -9 as bench/size.mjs and scripts/build.sh run it; zlib's level 9 if there is no gzip. */
function gzipped(bytes) {
  try {
    return execFileSync("gzip", ["-9", "-c"], { input: bytes, maxBuffer: 1 << 26 }).length;
  } catch (e) {
    if (e.code !== "ENOENT") throw e;
    return gzipSync(bytes, { level: 9 }).length;
  }
}

const kib = (b) => `${(b / 1024).toFixed(2)} KiB`;

/** `entry` bundled as a browser app's bundler does (esbuild, minified): { js, inputs }. */
async function bundle(entry, external = []) {
  assert.ok(existsSync(join(PKG, "package.json")), `no package in ${PKG}: build it first (scripts/build.sh)`);
  const toolsRequire = createRequire(join(TOOLS, "package.json"));
  let esbuild;
  try {
    esbuild = toolsRequire("esbuild");
  } catch {
    assert.fail(`esbuild is not installed in ${TOOLS}/node_modules: run scripts/toolchain.sh build`);
  }
  // "resilient-fetch" resolved by name, through the package's exports map, as in an app's
  // node_modules: a scratch folder holding a link to the package.
  const modules = mkdtempSync(join(tmpdir(), "rf-size-"));
  try {
    symlinkSync(PKG, join(modules, "resilient-fetch"), "dir");
    const result = await esbuild.build({
      stdin: { contents: entry, resolveDir: ROOT, loader: "js" },
      nodePaths: [modules],
      bundle: true,
      minify: true,
      format: "esm",
      platform: "browser",
      external,
      write: false,
      metafile: true,
      logLevel: "silent",
    });
    const inputs = Object.keys(result.metafile.inputs).map((p) => resolve(ROOT, p));
    return { js: result.outputFiles[0].contents, inputs };
  } finally {
    rmSync(modules, { recursive: true, force: true });
  }
}

const listed = (inputs) => inputs.map((p) => relative(ROOT, p)).join(", ");

/** The builds, as an app imports each: its specifier, its browser entry and its wasm. */
const BUILDS = {
  lean: { specifier: "resilient-fetch", entry: "browser.js", wasm: WASM },
  full: { specifier: "resilient-fetch/full", entry: "full/browser.js", wasm: `full/${WASM}` },
};

/** A build as a browser app's bundle ships it: { js, wasm, total } in gzipped bytes. */
async function measure({ specifier, entry, wasm: wasmFile }) {
  const { js, inputs } = await bundle(`export { resilientFetch, ResilientClient } from "${specifier}";`);
  assert.ok(inputs.includes(join(PKG, entry)), `the bundle did not go through ${entry} (inputs: ${listed(inputs)})`);
  // The opt-in resilient-fetch/otel entry is never part of it, nor the Workers entry's Durable
  // Object code (edge.js) and the entries that load it; the lean bundle holds nothing of the full.
  assert.ok(!inputs.some((p) => p.startsWith(join(PKG, "otel"))), `the bundle holds the otel entry (inputs: ${listed(inputs)})`);
  for (const workers of ["edge.js", "workerd.js", "worker.js"]) {
    assert.ok(!inputs.some((p) => p.endsWith(`/${workers}`) && p.startsWith(PKG)), `the bundle holds ${workers}, Workers-only code (inputs: ${listed(inputs)})`);
  }
  if (entry === "browser.js") assert.ok(!inputs.some((p) => p.startsWith(join(PKG, "full"))), `the lean bundle holds the full build (inputs: ${listed(inputs)})`);
  assert.ok(!/OriginHealth|DurableOutbox/.test(js), "the bundle holds the Durable Object classes");
  const wasm = readFileSync(join(PKG, wasmFile));
  const jsGz = gzipped(js);
  const wasmGz = gzipped(wasm);
  return { jsMin: js.length, jsGz, wasmRaw: wasm.length, wasmGz, total: jsGz + wasmGz };
}

for (const [name, build] of Object.entries(BUILDS)) {
  test(`"${build.specifier}" (${name}) in a browser bundle (esbuild, minified, ESM, gzip -9) within size-budget.json`, async (t) => {
    const budget = JSON.parse(readFileSync(BUDGET_FILE, "utf8"))[name];
    assert.ok(Number.isFinite(budget?.limitKiB) && budget.limitKiB > 0, `${BUDGET_FILE}: ${name}.limitKiB must be a number`);
    const limit = Math.round(budget.limitKiB * 1024);
    const goal = Math.round((budget.goalKiB ?? 0) * 1024);
    const m = await measure(build);
    const row = (what, bytes, gz) => `  ${what.padEnd(40)} ${bytes.padStart(16)} ${String(gz).padStart(7)} B gz  ${kib(gz).padStart(10)}`;
    const where = (p) => (relative(ROOT, p).startsWith("..") ? p : relative(ROOT, p));
    const lines = [
      `${name} build in a browser bundle: "${build.specifier}" -> ${where(join(PKG, build.entry))}; esbuild --bundle --minify --format=esm --platform=browser; gzip -9`,
      row(`JS (${build.entry} + glue + snippets)`, `${m.jsMin} B min`, m.jsGz),
      row(`wasm (${build.wasm})`, `${m.wasmRaw} B raw`, m.wasmGz),
      row("total", "", m.total),
      `  budget ${budget.limitKiB} KiB = ${limit} B (${where(BUDGET_FILE)}, ${name}): ${m.total <= limit ? `within, ${limit - m.total} B to spare` : `OVER by ${m.total - limit} B`}`,
    ];
    if (goal) lines.push(`  goal ${budget.goalKiB} KiB (${goal} B): ${m.total <= goal ? "met" : `${kib(m.total - goal)} to go`}`);
    for (const line of lines) t.diagnostic(line);
    assert.ok(
      m.total <= limit,
      `the ${name} browser bundle is ${m.total} B (${kib(m.total)}) min+gz, over the ${budget.limitKiB} KiB budget (${name}) in ${where(BUDGET_FILE)} by ${m.total - limit} B`,
    );
  });
}

test("resilient-fetch/otel: a bundle of its own, apart from the main one (@opentelemetry/api left to the app)", async (t) => {
  const { js, inputs } = await bundle('export { instrument } from "resilient-fetch/otel";', ["@opentelemetry/api"]);
  assert.deepEqual(inputs.map((p) => relative(PKG, p)).filter((p) => !p.startsWith("..")), ["otel.js"],
    `the otel entry pulls in more of the package (inputs: ${listed(inputs)})`);
  t.diagnostic(`resilient-fetch/otel (pkg/otel.js; esbuild --bundle --minify, @opentelemetry/api external; gzip -9): ${js.length} B min, ${gzipped(js)} B gz; not counted in the budget above`);
});
