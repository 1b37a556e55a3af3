// builds: lean (each snippet names its own build, "resilient-fetch" or "resilient-fetch/full": run once, as written)
// Every example of the package's pages runs as written (issue #39). The fenced js, ts, toml
// and html blocks of README.md and docs/*.md, read from the installed package, each run in
// the runtime it is written for: an ES module or a CommonJS script in Node, TypeScript type-checked then run in
// Node, a page in Chromium (served as written, with its import map), browser code bundled by
// Vite and run in Chromium, a Worker (with the wrangler.toml above it) bundled as wrangler
// bundles it and run in workerd; only their URLs are rewritten, to the fault server
// (snippets.mjs). A block that is deliberately a fragment says so just above it
// (`<!-- fragment: why -->`). One Chromium, one Vite build and one workerd for all.
// Then every link of the installed package's pages: to a file it carries and a heading of it.
import test from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ORIGIN_A, ORIGIN_B, SCRATCH, compileTs, launchChromium, linkTools, pageResult, serveStatic } from "./helpers.mjs";
import { PRELUDE, PRELUDE_TYPES, RUN_LANGUAGES, blocksOf, rewriteUrls, runtimeOf, workerConfig } from "./snippets.mjs";
import * as workerd from "./workerd.mjs";

const PACKAGE = path.join(SCRATCH, "node_modules", "resilient-fetch");
const TOOLS = process.env.RF_TOOLS_DIR;
const TOOLS_BIN = path.join(TOOLS, "node_modules", ".bin");
const origins = { a: ORIGIN_A, b: ORIGIN_B };

const pages = ["README.md", ...fs.readdirSync(path.join(PACKAGE, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`)];
const blocks = pages.flatMap((page) => blocksOf(page, fs.readFileSync(path.join(PACKAGE, page), "utf8")));
const runnable = blocks.filter((b) => RUN_LANGUAGES.includes(b.lang) && !b.fragment);
for (const b of runnable) b.runtime = runtimeOf(b);
const name = (b) => `${b.page}:${b.line}`;
const slug = (b) => `snippet-${b.page.replace(/\W+/g, "-")}-${b.line}`;
const inRuntime = (...runtimes) => runnable.filter((b) => runtimes.includes(b.runtime));

/** The Workers: each js Worker, with the wrangler.toml block just before it on its page. */
const workers = inRuntime("workerd").map((b) => {
  const before = blocks[blocks.indexOf(b) - 1];
  return { block: b, toml: before?.page === b.page && before.lang === "toml" ? before : null };
});

test("the pages' code blocks: each is run in its runtime or says it is a fragment", () => {
  const rows = pages.map((page) => {
    const of = blocks.filter((b) => b.page === page);
    const code = of.filter((b) => RUN_LANGUAGES.includes(b.lang));
    const run = code.filter((b) => !b.fragment);
    return { page, found: code.length, run: run.length, fragment: code.length - run.length,
      notCode: of.length - code.length, runtimes: [...new Set(run.map((b) => b.runtime))].join(" ") };
  });
  console.log("# snippets per page (found = js/ts/toml/html blocks; notCode = sh, not run)");
  for (const r of rows) console.log(`#   ${r.page}: found ${r.found}, run ${r.run}, fragment ${r.fragment}, notCode ${r.notCode} (${r.runtimes})`);
  const sum = (k) => rows.reduce((n, r) => n + r[k], 0);
  console.log(`#   total: found ${sum("found")}, run ${sum("run")}, fragment ${sum("fragment")}, notCode ${sum("notCode")}`);
  // The pages hold about thirty blocks: far fewer found means the extraction broke.
  assert.ok(sum("found") >= 25 && sum("run") >= 20, `only ${sum("found")} blocks found, ${sum("run")} to run`);
  for (const b of blocks.filter((x) => x.fragment !== null)) assert.ok(b.fragment.length > 0, `${name(b)}: a fragment marker without its reason`);
  // Every runtime named here has a runner below; a snippet written for another fails.
  for (const b of runnable) assert.ok(["node", "cjs", "ts", "page", "vite", "workerd", "wrangler.toml"].includes(b.runtime), `${name(b)}: no runner for ${b.runtime}`);
  for (const b of inRuntime("wrangler.toml")) {
    assert.ok(workers.some((w) => w.toml === b), `${name(b)}: a wrangler.toml with no Worker just after it`);
  }
  // Each URL is placed on the fault server (this throws for one it cannot place).
  for (const b of runnable) rewriteUrls(b, origins);
});

/** Runs `file` (a module in SCRATCH) in Node after the prelude: { status, output }. */
function runInNode(file) {
  const r = spawnSync(process.execPath, ["--import", "./snippet-prelude.mjs", "./snippet-run.mjs", `./${file}`],
    { cwd: SCRATCH, encoding: "utf8", timeout: 20_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}${r.error ? r.error.message : ""}` };
}

test("Node: every ES module, CommonJS and TypeScript snippet runs as written", { timeout: 180_000 }, async (t) => {
  linkTools(["@opentelemetry/api", "@opentelemetry/sdk-trace-base", "@opentelemetry/sdk-metrics"]);
  fs.writeFileSync(path.join(SCRATCH, "snippet-prelude.mjs"), `${PRELUDE}
// OpenTelemetry's SDK, for the otel snippets' providers.
import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
globalThis.tracerProvider = new BasicTracerProvider();
globalThis.meterProvider = new MeterProvider();
`);
  // The snippet as the program's module; done once it has run to its end (a client's timers
  // or channel would keep the process alive).
  fs.writeFileSync(path.join(SCRATCH, "snippet-run.mjs"), `
process.on("unhandledRejection", (e) => { console.error("unhandled rejection:", e); process.exit(1); });
try { await import(process.argv[2]); } catch (e) { console.error(e); process.exit(1); }
console.log("snippet ran to its end: " + JSON.stringify(globalThis.snippetCalls));
process.exit(0);
`);
  for (const b of inRuntime("node", "cjs", "ts")) {
    await t.test(`${name(b)} (${b.runtime})`, () => {
      const source = rewriteUrls(b, origins);
      const file = `${slug(b)}.${b.runtime === "cjs" ? "cjs" : "mjs"}`;
      if (b.runtime === "ts") {
        const dir = path.join(SCRATCH, `ts-${slug(b)}`);
        fs.mkdirSync(dir, { recursive: true });
        fs.writeFileSync(path.join(dir, "globals.d.ts"), PRELUDE_TYPES);
        const tsc = compileTs(slug(b), source, "main.ts", {}, ["globals.d.ts"]);
        assert.equal(tsc.status, 0, `${name(b)} does not type-check:\n${tsc.stdout}${tsc.stderr}`);
        const js = spawnSync(path.join(TOOLS_BIN, "esbuild"), [path.join(dir, "main.ts"), `--outfile=${path.join(SCRATCH, file)}`,
          "--format=esm", "--log-level=warning"], { encoding: "utf8" });
        assert.equal(js.status, 0, js.stderr);
      } else {
        fs.writeFileSync(path.join(SCRATCH, file), source);
      }
      const { status, output } = runInNode(file);
      assert.equal(status, 0, `${name(b)} failed in Node:\n${output}`);
      assert.match(output, /snippet ran to its end/);
    });
  }
});

/** `<script type="module">` bodies of a page moved to modules it imports, so the page says when they ran. */
function pageOf(b, source) {
  let n = 0;
  const modules = [];
  const html = source.replace(/<script type="module">([\s\S]*?)<\/script>/g, (all, code) => {
    const file = `${slug(b)}.inline-${n++}.mjs`;
    modules.push([file, code]);
    return `<script type="module">import("./${file}").then(() => { window.__result = "ran"; }, (e) => { window.__error = String(e?.stack ?? e); });</script>`;
  });
  assert.equal(n, 1, `${name(b)}: a page snippet with ${n} module scripts (the harness waits for one)`);
  return { html: `<!doctype html><meta charset="utf-8"><script>${PRELUDE}</script>\n${html}`, modules };
}

test("Chromium: the page snippets as served, the browser snippets bundled by Vite", { timeout: 180_000 }, async (t) => {
  const pagesToRun = inRuntime("page");
  for (const b of pagesToRun) {
    const { html, modules } = pageOf(b, rewriteUrls(b, origins));
    fs.writeFileSync(path.join(SCRATCH, `${slug(b)}.html`), html);
    for (const [file, code] of modules) fs.writeFileSync(path.join(SCRATCH, file), code);
  }
  // One Vite build for every browser snippet: a page each.
  const bundled = inRuntime("vite");
  const app = path.join(SCRATCH, "snippets-vite");
  fs.mkdirSync(app, { recursive: true });
  const input = {};
  for (const b of bundled) {
    fs.writeFileSync(path.join(app, `${slug(b)}.mjs`), rewriteUrls(b, origins));
    fs.writeFileSync(path.join(app, `${slug(b)}.html`), `<!doctype html><meta charset="utf-8"><script>${PRELUDE}</script>
<script type="module">import("./${slug(b)}.mjs").then(() => { window.__result = "ran"; }, (e) => { window.__error = String(e?.stack ?? e); });</script>`);
    input[slug(b)] = path.join(app, `${slug(b)}.html`);
  }
  fs.writeFileSync(path.join(app, "vite.config.mjs"),
    `export default { logLevel: "warn", build: { target: "esnext", outDir: "dist", rollupOptions: { input: ${JSON.stringify(input)} } } };`);
  const vite = spawnSync(process.execPath, [path.join(TOOLS, "node_modules", "vite", "bin", "vite.js"), "build"], { cwd: app, encoding: "utf8" });
  const built = vite.status === 0;
  const served = await serveStatic(SCRATCH);
  const bundles = built ? await serveStatic(path.join(app, "dist")) : null;
  const browser = await launchChromium();
  try {
    for (const b of pagesToRun) {
      await t.test(`${name(b)} (a page, its import map as written)`, async () => {
        await pageResult(browser, `${served.url}/${slug(b)}.html`);
      });
    }
    for (const b of bundled) {
      await t.test(`${name(b)} (Vite, then Chromium)`, async () => {
        assert.ok(built, `Vite could not build the browser snippets:\n${vite.stdout}${vite.stderr}`);
        await pageResult(browser, `${bundles.url}/${slug(b)}.html`);
      });
    }
  } finally {
    await browser.close();
    await served.close();
    await bundles?.close();
  }
});

test("workerd: the Workers snippets, with their wrangler.toml, bundled as wrangler bundles them", { timeout: 120_000 }, async (t) => {
  const root = path.join(SCRATCH, "snippets-workerd");
  const services = [];
  for (const [i, { block, toml }] of workers.entries()) {
    // A Worker with no wrangler.toml on its page (no bindings): the defaults wrangler would need.
    let conf = { main: "worker.js", compatibilityDate: "2026-11-01", bindings: [], classes: [] };
    const dir = path.join(root, `w${i}`);
    let failed = null;
    try {
      if (toml) conf = workerConfig(toml.text, name(toml));
      // wrangler builds a module without a default export as a service worker, which can
      // neither bind Durable Objects nor import cloudflare:workers; workerd serves it nothing.
      if (!/^export default\b/m.test(block.text)) throw new Error("no `export default { fetch }`: wrangler would build it as a service worker");
      workerd.bundle({ source: rewriteUrls(block, origins), project: SCRATCH, out: dir, bin: TOOLS_BIN });
    } catch (e) {
      failed = e; // esbuild's own message is above, on stderr
    }
    await t.test(`${name(block)} builds${toml ? ` with the wrangler.toml of ${name(toml)}` : ""}`, () => {
      assert.equal(failed, null, `${name(block)} does not build as a Worker: ${failed?.message}`);
    });
    if (failed) continue;
    const main = conf.main.replace(/^\.\//, "");
    const wasm = path.posix.join(path.posix.dirname(main), "web/resilient_fetch_bg.wasm");
    fs.mkdirSync(path.join(dir, path.posix.dirname(main)), { recursive: true });
    if (main !== "worker.js") fs.renameSync(path.join(dir, "worker.js"), path.join(dir, main));
    if (wasm !== "web/resilient_fetch_bg.wasm") fs.cpSync(path.join(dir, "web"), path.join(dir, path.posix.dirname(main), "web"), { recursive: true });
    services.push({ block, dir: `w${i}`, main, wasm, conf, port: await workerd.freePort() });
  }
  if (services.length === 0) return;
  const text = `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    ${services.map((s) => `(name = "${s.dir}", worker = (
      modules = [(name = "${s.main}", esModule = embed "${s.dir}/${s.main}"), (name = "${s.wasm}", wasm = embed "${s.dir}/${s.wasm}")],
      compatibilityDate = "${s.conf.compatibilityDate}",
      bindings = [${s.conf.bindings.map((b) => `(name = "${b.name}", durableObjectNamespace = "${b.className}")`).join(", ")}],
      durableObjectNamespaces = [${s.conf.classes.map((c) => `(className = "${c}", uniqueKey = "${s.dir}-${c}")`).join(", ")}],
      durableObjectStorage = (inMemory = void)))`).join(",\n    ")},
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [${services.map((s) => `(name = "${s.dir}", address = "127.0.0.1:${s.port}", http = (), service = "${s.dir}")`).join(", ")}],
);
`;
  const ports = Object.fromEntries(services.map((s) => [s.dir, s.port]));
  const running = await workerd.startWorkerd(root, text, ports, { bin: TOOLS_BIN, probe: false });
  try {
    for (const s of services) {
      await t.test(`${name(s.block)} answers a request`, async () => {
        // A Worker that reads its request's body is sent a POST with one; the others a GET.
        const post = /request\.(arrayBuffer|text|json|formData|blob)\(\)/.test(s.block.text);
        const res = await fetch(`http://127.0.0.1:${s.port}/ok`, post
          ? { method: "POST", body: JSON.stringify({ item: "book" }), headers: { "content-type": "application/json" } }
          : undefined).catch((e) => assert.fail(`${name(s.block)} did not answer (${e.message}):\n${running.logs()}`));
        const text = await res.text();
        assert.ok(res.status >= 200 && res.status < 300, `${name(s.block)} answered ${res.status}: ${text}\n${running.logs()}`);
        // docs/edge.md's origin fails (snippets.mjs PAGE_PATHS): its outbox kept the write.
        if (s.block.page === "docs/edge.md") assert.equal(res.status, 202, `${name(s.block)}: ${text}`);
      });
    }
  } finally {
    await running.stop();
  }
});

// GitHub's (and npm's) anchor for a heading: lower case, spaces to hyphens, every character
// but letters, digits, `-` and `_` dropped; a repeated one numbered.
const anchorOf = (heading) => heading.replace(/`/g, "").toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replace(/ /g, "-");
function anchors(markdown) {
  const seen = new Set();
  for (const line of markdown.replace(/^\s*```[\s\S]*?^\s*```/gm, "").split("\n")) {
    const h = /^#{1,6} (.+?)\s*#*\s*$/.exec(line);
    if (!h) continue;
    const base = anchorOf(h[1]);
    let a = base;
    for (let n = 1; seen.has(a); n++) a = `${base}-${n}`;
    seen.add(a);
  }
  return seen;
}

test("every link of the installed package's pages leads to a file it carries, and to a heading of it", () => {
  const mdFiles = (dir) => fs.readdirSync(path.join(PACKAGE, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? mdFiles(path.posix.join(dir, e.name)) : e.name.endsWith(".md") ? [path.posix.join(dir, e.name)] : []);
  const shipped = mdFiles(".").map((f) => path.posix.normalize(f)).sort();
  const broken = [];
  let local = 0, external = 0;
  for (const page of shipped) {
    const markdown = fs.readFileSync(path.join(PACKAGE, page), "utf8");
    // Links outside code: fenced blocks and inline code spans dropped first.
    const prose = markdown.replace(/^\s*```[\s\S]*?^\s*```/gm, "").replace(/`[^`\n]*`/g, "");
    for (const [, target] of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) { external++; continue; }
      local++;
      const [file, anchor] = target.split("#");
      const to = file ? path.posix.normalize(path.posix.join(path.posix.dirname(page), file)) : page;
      if (!fs.existsSync(path.join(PACKAGE, to))) { broken.push(`${page}: ${target} (no ${to} in the package)`); continue; }
      if (anchor !== undefined && to.endsWith(".md") && !anchors(fs.readFileSync(path.join(PACKAGE, to), "utf8")).has(anchor)) {
        broken.push(`${page}: ${target} (no heading #${anchor} in ${to})`);
      }
    }
  }
  console.log(`# links in the installed package: ${shipped.length} pages (${shipped.join(", ")}), ${local} links within the package checked, ${external} external left alone, ${broken.length} broken`);
  assert.ok(local >= 40, `only ${local} links within the package found`);
  assert.deepEqual(broken, [], "links that lead nowhere in node_modules/resilient-fetch");
});
