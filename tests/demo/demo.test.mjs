// The demo page as a person would use it, in headless Chromium: served by the
// same program as the README's demo command, against its chaos backend.
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const tools = createRequire(path.join(process.env.RF_TOOLS_DIR || path.join(root, "tools"), "package.json"));
const OUT = process.env.RF_OUT || path.join(root, "test-output");

let server, urls, browser, page;

before(async () => {
  server = spawn(process.execPath, [path.join(root, "www-demo", "serve.mjs"), "--port", "0", "--backend-ports", "0,0"],
    { stdio: ["ignore", "pipe", "inherit"] });
  const line = await new Promise((resolve, reject) => {
    readline.createInterface({ input: server.stdout }).once("line", resolve);
    server.once("exit", (code) => reject(new Error(`demo server exited ${code}`)));
  });
  urls = JSON.parse(line);
  const { chromium } = tools("playwright-core");
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"],
  });
  page = await browser.newPage({ viewport: { width: 1400, height: 1300 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(urls.demo);
  await page.waitForFunction(() => window.__demoReady === true, null, { timeout: 15000 })
    .catch((e) => { throw new Error(`${e.message}\npage errors: ${errors.join("\n")}`); });
});

after(async () => {
  if (page) await page.screenshot({ path: path.join(OUT, "demo.png"), fullPage: true }).catch(() => {});
  await browser?.close();
  server?.kill();
});

const light = (o) => page.locator(`.light[data-origin="${o}"]`).getAttribute("data-state");
const settled = (n) => page.waitForFunction((n) => window.__demo.settled >= n, n, { timeout: 30000 });

test("an origin in outage: its breaker light turns open, the other origin's stays closed", async () => {
  await page.check('.origin[data-origin="a"] input[name=outage]');
  await page.fill("#fire-n", "8");
  await page.selectOption("#fire-origin", "a");
  await page.click("#fire-button");
  await page.waitForSelector('.light[data-origin="a"][data-state="open"]', { timeout: 30000 });
  await settled(8);
  assert.equal(await light("a"), "open");
  assert.match(await page.locator("#transitions").textContent(), /Origin A: closed → open/);
  // Calls after the breaker opened were short-circuited: they show "circuit open".
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
  // every POST row shows the start of its key
  const keys = await page.locator(".trow .key").allTextContents();
  assert.equal(keys.slice(0, 10).filter((k) => /^[0-9a-f]{8}…$/.test(k)).length, 10);
});

test("the retry-storm chart: resilientFetch sends far fewer requests than a naive retry loop", async () => {
  // the storm uses the page's policy: back to a breaker that opens after 5 failures
  await page.fill('input[name=failureThreshold]', "5");
  await page.fill('input[name=maxAttempts]', "3");
  await page.selectOption("#storm-origin", "a");
  await page.click("#storm-button");
  await page.waitForFunction(() => document.querySelector("#storm-summary").textContent.length > 0, null, { timeout: 30000 });
  const summary = await page.locator("#storm-summary").textContent();
  const perCall = Object.fromEntries([...summary.matchAll(/([^:·]+): ([\d.]+) requests per logical call/g)]
    .map((m) => [m[1].trim(), Number(m[2])]));
  // (a browser may itself resend a request whose reused keep-alive socket was closed: allow a little)
  assert.ok(Math.abs(perCall["plain fetch"] - 1) < 0.1, summary);
  assert.ok(Math.abs(perCall["naive retry ×3"] - 4) < 0.2, summary);
  assert.ok(perCall.resilientFetch < 0.5, summary);
  assert.ok(await page.locator("#storm-chart rect").count() > 10, "no bars drawn");
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

test("jitter lane: 'none' sends every retry at once, 'full' spreads them over the window", async () => {
  await page.click("#jitter-button");
  await page.waitForFunction(() => document.querySelector("#jitter-summary").dataset.spreads !== undefined, null,
    { timeout: 30000 });
  const spreads = JSON.parse(await page.locator("#jitter-summary").getAttribute("data-spreads"));
  assert.equal(spreads.none, 0, JSON.stringify(spreads));
  assert.ok(spreads.full > 100, JSON.stringify(spreads));
  assert.equal(await page.locator("#jitter-chart circle").count(), 160);
});

test("throttle lane: throttling cuts what reaches the overloaded origin", async () => {
  await page.click("#throttle-button");
  await page.waitForFunction(() => document.querySelector("#throttle-summary").dataset.onSent !== undefined, null,
    { timeout: 30000 });
  const data = await page.locator("#throttle-summary").evaluate((p) => ({ ...p.dataset }));
  assert.equal(data.offSent, "300", JSON.stringify(data));
  assert.ok(Number(data.onSent) < 200 && Number(data.onRefused) > 100, JSON.stringify(data));
});

test("every invalid policy field is listed, not only the first", async () => {
  await page.fill('input[name=timeoutMs]', "0");
  await page.fill('input[name=maxAttempts]', "99");
  await page.waitForFunction(() => document.querySelector("#policy-error").dataset.count === "2", null, { timeout: 5000 });
  const text = await page.locator("#policy-error").textContent();
  assert.match(text, /timeoutMs must be an integer from 1 to 2147483647 \(got 0\)/);
  assert.match(text, /retry\.maxAttempts must be an integer from 1 to 20 \(got 99\)/);
  await page.fill('input[name=timeoutMs]', "2000");
  await page.fill('input[name=maxAttempts]', "3");
  await page.waitForFunction(() => document.querySelector("#policy-error").hidden, null, { timeout: 5000 });
});

