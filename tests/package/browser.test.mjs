// Browsers: a plain <script type="module"> page, a Vite app, a webpack app and an esbuild
// bundle (the wasm copied next to it, as the README says), all in
// headless Chromium, using the package installed in the scratch project and
// running the shared smoke checks (smoke.mjs) in the page.
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ORIGIN_A, ORIGIN_B, SCRATCH, launchChromium, pageResult, serveStatic } from "./helpers.mjs";

// The page's script, the same in both apps; it sets window.__result or window.__error.
const pageScript = (smokePath) => `
import * as api from "resilient-fetch";
import { smoke } from "${smokePath}";
const q = new URLSearchParams(location.search);
try {
  const report = await smoke(api, q.get("a"), q.get("b"), "resilient-fetch");
  window.__result = { isBrowser: typeof document, report };
  document.body.innerHTML = "<h1>resilient-fetch smoke</h1><pre>" + JSON.stringify(report, null, 2) + "</pre>";
} catch (e) {
  window.__error = String(e && e.stack || e);
}
`;

function assertSmoke(result) {
  assert.equal(result.isBrowser, "object");
  for (const [name, { ok, detail }] of Object.entries(result.report)) {
    assert.ok(ok, `${name}: ${JSON.stringify(detail)}`);
  }
  assert.deepEqual(Object.keys(result.report), ["imports", "retries", "key", "timeout", "breaker", "share", "outbox"]);
}

/** Serves `dir` on 127.0.0.1 and runs the smoke checks of `page` there in Chromium. */
async function smokeIn(dir, page, screenshot) {
  const server = await serveStatic(dir);
  try {
    const { result } = await pageResult(browser, `${server.url}/${page}?a=${ORIGIN_A}&b=${ORIGIN_B}`, { screenshot });
    assertSmoke(result);
  } finally {
    await server.close();
  }
}

let browser;
before(async () => { browser = await launchChromium(); });
after(async () => { await browser?.close(); });

test("plain <script type=module> page: the web build, wasm found relative to the module", async () => {
  const dir = path.join(SCRATCH, "plain");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "index.html"), `<!doctype html><meta charset="utf-8">
<script type="importmap">{ "imports": { "resilient-fetch": "/node_modules/resilient-fetch/browser.js" } }</script>
<script type="module">${pageScript("/smoke.mjs")}</script>`);
  await smokeIn(SCRATCH, "plain/index.html", "browser-plain.png");
});

test("Vite app: the browser condition resolves and the wasm asset is emitted without plugins", async () => {
  const app = path.join(SCRATCH, "vite-app");
  fs.mkdirSync(app, { recursive: true });
  fs.writeFileSync(path.join(app, "index.html"),
    `<!doctype html><meta charset="utf-8"><script type="module" src="./main.js"></script>`);
  fs.copyFileSync(path.join(SCRATCH, "smoke.mjs"), path.join(app, "smoke.mjs"));
  fs.writeFileSync(path.join(app, "main.js"), pageScript("./smoke.mjs"));
  const viteBin = path.join(process.env.RF_TOOLS_DIR, "node_modules", "vite", "bin", "vite.js");
  execFileSync(process.execPath, [viteBin, "build", "--logLevel", "warn", "--outDir", "dist"],
    { cwd: app, stdio: "inherit" });
  const assets = fs.readdirSync(path.join(app, "dist", "assets"));
  assert.ok(assets.some((f) => f.endsWith(".wasm")), `no .wasm emitted: ${assets}`);
  const js = assets.filter((f) => f.endsWith(".js")).map((f) => fs.readFileSync(path.join(app, "dist", "assets", f), "utf8")).join("");
  assert.ok(!js.includes("node:fs"), "the node build was bundled instead of the browser build");
  await smokeIn(path.join(app, "dist"), "index.html", "browser-vite.png");
});

test("webpack app: the browser condition resolves and the wasm asset is emitted without a loader", async () => {
  const app = path.join(SCRATCH, "webpack-app");
  fs.mkdirSync(app, { recursive: true });
  fs.copyFileSync(path.join(SCRATCH, "smoke.mjs"), path.join(app, "smoke.mjs"));
  fs.writeFileSync(path.join(app, "main.mjs"), pageScript("./smoke.mjs"));
  // webpack's defaults (production, output dist/main.js), nothing configured for the wasm.
  fs.writeFileSync(path.join(app, "webpack.config.cjs"),
    `module.exports = { mode: "production", entry: "./main.mjs", output: { path: __dirname + "/dist" } };\n`);
  const cli = path.join(process.env.RF_TOOLS_DIR, "node_modules", "webpack-cli", "bin", "cli.js");
  execFileSync(process.execPath, [cli, "--config", "webpack.config.cjs", "--no-stats"], { cwd: app, stdio: "inherit" });
  const dist = path.join(app, "dist");
  const emitted = fs.readdirSync(dist);
  assert.ok(emitted.some((f) => f.endsWith(".wasm")), `no .wasm emitted: ${emitted}`);
  assert.ok(!fs.readFileSync(path.join(dist, "main.js"), "utf8").includes("node:fs"), "the node build was bundled");
  fs.writeFileSync(path.join(dist, "index.html"), `<!doctype html><meta charset="utf-8"><script src="./main.js"></script>`);
  await smokeIn(dist, "index.html", "browser-webpack.png");
});

test("esbuild bundle: an ES module, with the wasm copied next to it as the README says", async () => {
  const app = path.join(SCRATCH, "esbuild-app");
  const dist = path.join(app, "dist");
  fs.mkdirSync(dist, { recursive: true });
  fs.copyFileSync(path.join(SCRATCH, "smoke.mjs"), path.join(app, "smoke.mjs"));
  fs.writeFileSync(path.join(app, "main.mjs"), pageScript("./smoke.mjs"));
  const esbuild = path.join(process.env.RF_TOOLS_DIR, "node_modules", ".bin", "esbuild");
  execFileSync(esbuild, ["main.mjs", "--bundle", "--format=esm", "--minify", "--outfile=dist/app.js", "--log-level=warning"],
    { cwd: app, stdio: "inherit" });
  fs.copyFileSync(path.join(SCRATCH, "node_modules", "resilient-fetch", "web", "resilient_fetch_bg.wasm"),
    path.join(dist, "resilient_fetch_bg.wasm"));
  fs.writeFileSync(path.join(dist, "index.html"), `<!doctype html><meta charset="utf-8"><script type="module" src="./app.js"></script>`);
  await smokeIn(dist, "index.html", "browser-esbuild.png");
});
