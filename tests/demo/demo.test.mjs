// The demo page as a person would use it, in headless Chromium: served by the
// same program as the README's demo command, against its chaos backend.
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import readline from "node:readline";
import { OUT, openDemo, outageLane, pacedBurstLane, hedgeLane, layoutLane, outboxLane, postEffectsLane, root,
  shareLane, shootLane, stormLane } from "./lanes.mjs";

let server, urls, browser, page;
/** test-output/demo-lane-NN.png: lane `n` as it looks once its test ran. */
const shot = (n) => shootLane(page, "demo", n);

before(async () => {
  server = spawn(process.execPath, [path.join(root, "www-demo", "serve.mjs"), "--port", "0", "--backend-ports", "0,0"],
    { stdio: ["ignore", "pipe", "inherit"] });
  const line = await new Promise((resolve, reject) => {
    readline.createInterface({ input: server.stdout }).once("line", resolve);
    server.once("exit", (code) => reject(new Error(`demo server exited ${code}`)));
  });
  urls = JSON.parse(line);
  ({ browser, page } = await openDemo(urls.demo, 15000));
});

after(async () => {
  if (page) await page.screenshot({ path: path.join(OUT, "demo.png"), fullPage: true }).catch(() => {});
  await browser?.close();
  server?.kill();
});


test("an origin in outage: its breaker light turns open, the other origin's stays closed", async () => {
  await outageLane(page);
  await shot(1);
});

test("POSTs through a flaky origin: effects equal the logical calls (one key per call)", async () => {
  await postEffectsLane(page);
  await shot(3);
});

test("the retry-storm chart: resilientFetch sends far fewer requests than a naive retry loop", async () => {
  await stormLane(page, 0.1);
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

test("the outbox: 5 POSTs kept while origin B is down, each applied once when it is back", async () => {
  await outboxLane(page);
  await shot(9);
});

test("jitter lane: 'none' sends every retry at once, 'full' spreads them over the window", async () => {
  await page.click("#jitter-button");
  await page.waitForFunction(() => document.querySelector("#jitter-summary").dataset.spreads !== undefined, null,
    { timeout: 30000 });
  const spreads = JSON.parse(await page.locator("#jitter-summary").getAttribute("data-spreads"));
  assert.equal(spreads.none, 0, JSON.stringify(spreads));
  assert.ok(spreads.full > 100, JSON.stringify(spreads));
  assert.equal(await page.locator("#jitter-chart circle").count(), 160);
  await shot(5);
});

test("throttle lane: throttling cuts what reaches the overloaded origin", async () => {
  await page.click("#throttle-button");
  await page.waitForFunction(() => document.querySelector("#throttle-summary").dataset.onSent !== undefined, null,
    { timeout: 30000 });
  const data = await page.locator("#throttle-summary").evaluate((p) => ({ ...p.dataset }));
  assert.equal(data.offSent, "300", JSON.stringify(data));
  assert.ok(Number(data.onSent) < 200 && Number(data.onRefused) > 100, JSON.stringify(data));
  await shot(6);
});

test("every invalid policy field is listed, not only the first", async () => {
  await page.fill('input[name=timeoutMs]', "0");
  await page.fill('input[name=maxAttempts]', "99");
  await page.waitForFunction(() => document.querySelector("#policy-error").dataset.count === "2", null, { timeout: 5000 });
  const text = await page.locator("#policy-error").textContent();
  assert.match(text, /timeoutMs must be an integer from 1 to 2147483647 \(got 0\)/);
  assert.match(text, /retry\.maxAttempts must be an integer from 1 to 20 \(got 99\)/);
  await shot(2);
  await page.fill('input[name=timeoutMs]', "2000");
  await page.fill('input[name=maxAttempts]', "3");
  await page.waitForFunction(() => document.querySelector("#policy-error").hidden, null, { timeout: 5000 });
});

test("the layout: lanes in numbered order, the timeline beside the fire panel (a phone: right after it)",
  () => layoutLane(page, "demo-phone.png"));
