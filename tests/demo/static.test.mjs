// The static build of the demo (scripts/demo-static.sh) in headless Chromium: the page and the
// package from a plain static server, under a sub-path as on GitHub Pages, with the mock backend
// in a service worker. Its origins (https://*.demo.invalid) never resolve: every answer the
// library gets comes from the worker.
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const tools = createRequire(path.join(process.env.RF_TOOLS_DIR || path.join(root, "tools"), "package.json"));
const OUT = process.env.RF_OUT || path.join(root, "test-output");
const BASE = "/resilient-fetch/"; // the site's path on its host, as a GitHub Pages project site's

let site, server, url, browser, page;

/** Serves `dir` under BASE on 127.0.0.1, as a static host would (no other route). */
function serveStatic(dir) {
  const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css",
    ".wasm": "application/wasm", ".json": "application/json" };
  const srv = http.createServer((req, res) => {
    const pathname = decodeURIComponent(new URL(req.url, "http://x").pathname);
    if (!pathname.startsWith(BASE)) { res.writeHead(404); res.end(); return; }
    const file = path.resolve(dir, pathname.slice(BASE.length) || "index.html");
    if (!file.startsWith(dir)) { res.writeHead(403); res.end(); return; }
    fs.readFile(file, (err, data) => {
      if (err) { res.writeHead(404); res.end(); return; }
      res.writeHead(200, { "content-type": TYPES[path.extname(file)] || "application/octet-stream" });
      res.end(data);
    });
  });
  return new Promise((resolve) => srv.listen(0, "127.0.0.1", () => resolve(srv)));
}

before(async () => {
  // The script as a user runs it, minus the package build: pkg/ is already built by the test
  // run, and rebuilding it here would pull it from under the other demo test running alongside.
  site = fs.mkdtempSync(path.join(os.tmpdir(), "rf-demo-static-"));
  const { stdout } = await promisify(execFile)("bash", [path.join(root, "scripts", "demo-static.sh"), "--no-build", site],
    { env: { ...process.env, RF_SKIP_TOOLCHAIN: "1" } });
  assert.equal(stdout.trim(), fs.realpathSync(site));
  server = await serveStatic(fs.realpathSync(site));
  url = `http://127.0.0.1:${server.address().port}${BASE}`;
  const { chromium } = tools("playwright-core");
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"],
  });
  page = await browser.newPage({ viewport: { width: 1400, height: 1300 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(url);
  await page.waitForFunction(() => window.__demoReady === true, null, { timeout: 20000 })
    .catch((e) => { throw new Error(`${e.message}\npage errors: ${errors.join("\n")}`); });
});

after(async () => {
  if (page) await page.screenshot({ path: path.join(OUT, "demo-static.png"), fullPage: true }).catch(() => {});
  await browser?.close();
  server?.closeAllConnections();
  server?.close();
  if (site) fs.rmSync(site, { recursive: true, force: true });
});

const light = (o) => page.locator(`.light[data-origin="${o}"]`).getAttribute("data-state");
const settled = (n) => page.waitForFunction((n) => window.__demo.settled >= n, n, { timeout: 30000 });

test("the static site: relative paths, the package's browser files, the static backend.json", () => {
  const html = fs.readFileSync(path.join(site, "index.html"), "utf8");
  assert.match(html, /"resilient-fetch": "\.\/pkg\/browser\.js"/);
  assert.deepEqual(JSON.parse(fs.readFileSync(path.join(site, "backend.json"), "utf8")),
    { a: "https://a.demo.invalid", b: "https://b.demo.invalid", serviceWorker: "sw.js" });
  for (const f of ["sw.js", "demo.js", "demo.css", "pkg/browser.js", "pkg/errors.js", "pkg/web/resilient_fetch.js",
    "pkg/web/resilient_fetch_bg.wasm"]) {
    assert.ok(fs.existsSync(path.join(site, f)), f);
  }
});

test("the page runs under the service worker, against the mock origins", async () => {
  assert.equal(await page.evaluate(() => navigator.serviceWorker.controller?.scriptURL), `${url}sw.js`);
  assert.match(await page.locator("#status").textContent(), /mock origins https:\/\/a\.demo\.invalid and https:\/\/b\.demo\.invalid/);
  assert.match(await page.locator('.origin[data-origin="a"] h3').textContent(), /https:\/\/a\.demo\.invalid/);
});

test("an origin in outage: its breaker light turns open, the other origin's stays closed", async () => {
  await page.check('.origin[data-origin="a"] input[name=outage]');
  await page.fill("#fire-n", "8");
  await page.selectOption("#fire-origin", "a");
  await page.click("#fire-button");
  await page.waitForSelector('.light[data-origin="a"][data-state="open"]', { timeout: 30000 });
  await settled(8);
  assert.equal(await light("a"), "open");
  assert.match(await page.locator("#transitions").textContent(), /Origin A: closed → open/);
  assert.match(await page.locator("#timeline").textContent(), /circuit open/);

  await page.fill("#fire-n", "3");
  await page.selectOption("#fire-origin", "b");
  await page.click("#fire-button");
  await settled(11);
  assert.equal(await light("b"), "closed");
  const results = await page.locator(".trow .result").allTextContents();
  assert.deepEqual(results.slice(0, 3), ["200", "200", "200"], "the healthy origin answers");
});

test("POSTs through a flaky origin: effects equal the logical calls (one key per call)", async () => {
  await page.locator('.origin[data-origin="b"] input[name=errorRate]').fill("40");
  await page.fill('input[name=failureThreshold]', "100"); // keep B's breaker out of this one
  await page.fill('input[name=maxAttempts]', "8");
  await page.fill('input[name=baseDelayMs]', "10");
  await page.selectOption("#fire-method", "POST");
  await page.selectOption("#fire-origin", "b");
  await page.fill("#fire-n", "10");
  await page.click("#fire-button");
  await page.waitForFunction(() => document.querySelector("#effects").dataset.logical === "10", null, { timeout: 30000 });
  const data = await page.locator("#effects").evaluate((p) => ({ ...p.dataset }));
  assert.equal(data.effects, data.logical, JSON.stringify(data));
  assert.ok(Number(data.attempts) >= 10, JSON.stringify(data));
  assert.match(await page.locator("#effects").textContent(), /exactly once/);
  const keys = await page.locator(".trow .key").allTextContents();
  assert.equal(keys.slice(0, 10).filter((k) => /^[0-9a-f]{8}…$/.test(k)).length, 10);
});

test("the retry-storm chart, from the worker's request log", async () => {
  await page.fill('input[name=failureThreshold]', "5");
  await page.fill('input[name=maxAttempts]', "3");
  await page.selectOption("#storm-origin", "a");
  await page.click("#storm-button");
  await page.waitForFunction(() => document.querySelector("#storm-summary").textContent.length > 0, null, { timeout: 30000 });
  const summary = await page.locator("#storm-summary").textContent();
  const perCall = Object.fromEntries([...summary.matchAll(/([^:·]+): ([\d.]+) requests per logical call/g)]
    .map((m) => [m[1].trim(), Number(m[2])]));
  // no sockets here: the worker sees each request exactly once
  assert.equal(perCall["plain fetch"], 1, summary);
  assert.equal(perCall["naive retry ×3"], 4, summary);
  assert.ok(perCall.resilientFetch < 0.5, summary);
});

test("rate limits: the paced burst gets no 429 where the unpaced one does", async () => {
  await page.selectOption("#pace-origin", "b");
  await page.locator('.origin[data-origin="b"] input[name=errorRate]').fill("0");
  await page.click("#pace-button");
  await page.waitForFunction(() => document.querySelector("#pace-summary").dataset.paced429 !== undefined, null,
    { timeout: 30000 });
  const data = await page.locator("#pace-summary").evaluate((p) => ({ ...p.dataset }));
  assert.equal(data.paced429, "0", JSON.stringify(data));
  assert.equal(data.paced200, "30", JSON.stringify(data));
  assert.ok(Number(data.unpaced429) > 0, JSON.stringify(data));
  assert.match(await page.locator("#pace-summary").textContent(), /With pacing: 30 × 200, 0 × 429/);
});

test("a hang: the attempt times out and the worker still answers the next calls", async () => {
  const hang = '.origin[data-origin="b"] input[name=hang]';
  await page.fill('input[name=timeoutMs]', "300");
  await page.fill('input[name=maxAttempts]', "1");
  await page.selectOption("#fire-method", "GET");
  await page.selectOption("#fire-origin", "b");
  await page.fill("#fire-n", "2");
  await page.check(hang);
  const before = await page.evaluate(() => window.__demo.settled);
  await page.click("#fire-button");
  await settled(before + 2);
  assert.deepEqual((await page.locator(".trow .result").allTextContents()).slice(0, 2), ["TimeoutError", "TimeoutError"]);
  await page.uncheck(hang);
  await page.click("#fire-button");
  await settled(before + 4);
  assert.deepEqual((await page.locator(".trow .result").allTextContents()).slice(0, 2), ["200", "200"]);
});

test("without service workers the page says why it cannot run", async () => {
  const bare = await browser.newPage();
  await bare.addInitScript(() => { delete Navigator.prototype.serviceWorker; });
  await bare.goto(url);
  await bare.waitForFunction(() => document.querySelector("#status").className === "error", null, { timeout: 10000 });
  assert.match(await bare.locator("#status").textContent(), /service worker.*scripts\/demo\.sh/s);
  await bare.close();
});
