// The static build of the demo (scripts/demo-static.sh) in headless Chromium: the page and the
// package from a plain static server, under a sub-path as on GitHub Pages, with the mock backend
// in a service worker. Its origins (https://*.demo.invalid) never resolve: every answer the
// library gets comes from the worker.
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { OUT, openDemo, outageLane, pacedBurstLane, hedgeLane, breakerLane, staleLane, failoverLane, resumeLane, eventsLane, layoutLane, outboxLane, postEffectsLane, root,
  settled, shareLane, shootLane, stormLane } from "./lanes.mjs";

const BASE = "/resilient-fetch/"; // the site's path on its host, as a GitHub Pages project site's

let site, server, url, browser, page;
/** test-output/demo-static-lane-NN.png: lane `n` as it looks once its test ran. */
const shot = (n) => shootLane(page, "demo-static", n);

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
  ({ browser, page } = await openDemo(url));
});

after(async () => {
  if (page) await page.screenshot({ path: path.join(OUT, "demo-static.png"), fullPage: true }).catch(() => {});
  await browser?.close();
  server?.closeAllConnections();
  server?.close();
  if (site) fs.rmSync(site, { recursive: true, force: true });
});


test("the static site: relative paths, the package's browser files, the static backend.json", () => {
  const html = fs.readFileSync(path.join(site, "index.html"), "utf8");
  assert.match(html, /"resilient-fetch": "\.\/pkg\/full\/browser\.js"/);
  assert.deepEqual(JSON.parse(fs.readFileSync(path.join(site, "backend.json"), "utf8")),
    { a: "https://a.demo.invalid", b: "https://b.demo.invalid", serviceWorker: "sw.js" });
  for (const f of ["sw.js", "demo.js", "demo.css", "pkg/full/browser.js", "pkg/full/errors.js", "pkg/full/web/resilient_fetch.js",
    "pkg/full/web/resilient_fetch_bg.wasm"]) {
    assert.ok(fs.existsSync(path.join(site, f)), f);
  }
});

test("the page runs under the service worker, against the mock origins", async () => {
  assert.equal(await page.evaluate(() => navigator.serviceWorker.controller?.scriptURL), `${url}sw.js`);
  assert.match(await page.locator("#status").textContent(), /mock origins https:\/\/a\.demo\.invalid and https:\/\/b\.demo\.invalid/);
  assert.match(await page.locator('.origin[data-origin="a"] h3').textContent(), /https:\/\/a\.demo\.invalid/);
});

test("an origin in outage: its breaker light turns open, the other origin's stays closed", async () => {
  await outageLane(page);
  await shot(1);
});

test("POSTs through a flaky origin: effects equal the logical calls (one key per call)", async () => {
  await postEffectsLane(page);
  await shot(3);
});

test("the retry-storm chart, from the worker's request log", async () => {
  await stormLane(page, 0);
  await shot(10);
});

test("rate limits: the paced burst gets no 429 where the unpaced one does", async () => {
  await pacedBurstLane(page);
  await shot(4);
});

test("two tabs sharing breakers: one opens with the other without sending; one probe closes both", async () => {
  await shareLane(page);
  await shot(7);
});

test("hedged reads: the slow tail cut for a few extra requests", async () => {
  await hedgeLane(page);
  await shot(8);
});

test("breaker rules: slow answers open the breaker, failed probes grow its cooldown", async () => {
  await breakerLane(page);
});

test("stale answers: the last good answer served for each failure, nothing sent while open", async () => {
  await staleLane(page);
});

test("failover: a backup origin answers while the primary is down, then the primary again", async () => {
  await failoverLane(page);
});

test("resumed downloads: a file whose connection breaks three times is read whole", async () => {
  await resumeLane(page);
});

test("event streams: a stream that drops reconnects with Last-Event-ID, each event once, and ends at 204", async () => {
  await eventsLane(page);
});

test("the outbox: 5 POSTs kept while origin B is down, each applied once when it is back", async () => {
  await outboxLane(page);
  await shot(9);
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
  await settled(page, before + 2);
  assert.deepEqual((await page.locator(".trow .result").allTextContents()).slice(0, 2), ["TimeoutError", "TimeoutError"]);
  await page.uncheck(hang);
  await page.click("#fire-button");
  await settled(page, before + 4);
  assert.deepEqual((await page.locator(".trow .result").allTextContents()).slice(0, 2), ["200", "200"]);
});

test("the Workers lane says it needs ./scripts/demo.sh, and shows no numbers", async () => {
  const note = page.locator("#edge-note");
  assert.equal(await note.getAttribute("data-off"), "static");
  assert.match(await note.textContent(), /needs \.\/scripts\/demo\.sh/);
  assert.ok(await page.locator("#edge-button").isDisabled());
  assert.ok(await page.locator("#edge .fleets").isHidden());
  assert.equal(await page.locator("#edge-summary").textContent(), "");
  await shot(11);
});

test("the layout: the same page, the same order, at a laptop's and a phone's width", () => layoutLane(page));

test("without service workers the page says why it cannot run", async () => {
  const bare = await browser.newPage();
  await bare.addInitScript(() => { delete Navigator.prototype.serviceWorker; });
  await bare.goto(url);
  await bare.waitForFunction(() => document.querySelector("#status").className === "error", null, { timeout: 10000 });
  assert.match(await bare.locator("#status").textContent(), /service worker.*scripts\/demo\.sh/s);
  await bare.close();
});
