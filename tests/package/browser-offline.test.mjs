// Offline is not an outage (docs/behaviour.md, "Offline"), in headless Chromium with its offline
// emulation (playwright's context.setOffline: navigator.onLine turns false, fetch fails with a
// TypeError, going back online fires `online`). A plain page using the installed package's
// browser.js calls the fault server cross-origin.
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { ORIGIN_A, SCRATCH, launchChromium, serveStatic, serverLog, uid } from "./helpers.mjs";

const PAGE = `<!doctype html><meta charset="utf-8">
<script type="module">
import { ResilientClient } from "/node_modules/resilient-fetch/browser.js";
const A = new URLSearchParams(location.search).get("a");
const now = () => Math.round(performance.now());
const log = [];
addEventListener("online", () => log.push({ type: "online", t: now() }));
// A breaker one failure would open, and a budget a retry would charge.
const client = new ResilientClient({
  breaker: { failureThreshold: 1 },
  onEvent: (e) => log.push({ type: e.type, attempt: e.attempt, outcome: e.outcome, t: now() }),
});
window.client = client;
window.log = log;
window.A = A;
window.settle = (p) => p.then((r) => ({ status: r.status }), (e) => ({ name: e.name, message: e.message }));
window.__ready = true;
</script>`;

let browser, site;
before(async () => {
  fs.writeFileSync(path.join(SCRATCH, "offline-page.html"), PAGE);
  site = await serveStatic(SCRATCH);
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await site?.close();
});

// Promise: while offline, a failed attempt holds nothing against the origin (breaker closed,
// budget whole, no failure counted; an `offline` event and stat say so), and its retry goes
// when the network is back, not before, and not refused for being offline.
test("Chromium offline: a GET's failure counts for nothing and its retry goes after the online event; a POST without key fails at once, uncounted", async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    await page.goto(`${site.url}/offline-page.html?a=${ORIGIN_A}`);
    await page.waitForFunction(() => window.__ready === true);
    const id = uid("offline");
    await context.setOffline(true);
    assert.equal(await page.evaluate(() => navigator.onLine), false);
    // The call is made while offline, and waits.
    await page.evaluate((id) => { window.get = settle(client.fetch(A + "/ok?id=" + id)); }, id);
    await page.waitForFunction(() => log.some((e) => e.type === "offline"));
    const post = await page.evaluate(() => settle(client.fetch(A + "/ok", { method: "POST", body: "x" }, { idempotencyKey: false })));
    assert.equal(post.name, "TypeError", JSON.stringify(post));
    assert.equal(await page.evaluate(() => client.breakerState(A)), "closed", "offline failures open no breaker");
    await context.setOffline(false);
    const got = await page.evaluate(() => window.get);
    assert.deepEqual(got, { status: 200 });
    const log = await page.evaluate(() => window.log);
    const online = log.find((e) => e.type === "online");
    const starts = log.filter((e) => e.type === "attemptStart");
    const waited = log.find((e) => e.type === "offline");
    assert.ok(online && waited, JSON.stringify(log));
    assert.equal(waited.attempt, 2, "the attempt that waits for the network");
    const retry = starts.find((e) => e.attempt === 2 && e.t >= waited.t);
    assert.ok(retry && retry.t >= online.t, `the retry went after the online event: ${JSON.stringify(log)}`);
    assert.ok(!log.some((e) => e.type === "retry"), "no backoff: it waited for the network");
    const stats = await page.evaluate(() => client.stats()[A]);
    assert.equal(stats.breakerState, "closed");
    assert.equal(stats.failures, 0);
    assert.equal(stats.offline, 2, "the GET's first attempt and the POST");
    assert.equal(stats.budgetTokens, 500, "the budget is whole");
    assert.equal((await serverLog(ORIGIN_A, id)).length, 1, "one request reached the server: the retry");
  } finally {
    await context.close();
  }
});
