// builds: full (a capability of resilient-fetch/full: tests/package/run.mjs)
// Stale answers in headless Chromium, kept in its real Cache API (`caches.open("resilient-fetch")`,
// a page's: private): a plain page using the installed package's browser.js calls the fault
// server cross-origin; a good answer, then 503s: the kept answer is served with its Age and
// marker, then, the breaker open, without sending. The page waits for the answer to be in the
// Cache API (the put is not awaited by the call) by reading the cache itself.
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { ORIGIN_A, SCRATCH, launchChromium, pageResult, serveStatic, uid } from "./helpers.mjs";

const PAGE = `<!doctype html><meta charset="utf-8">
<script type="module">
import { ResilientClient } from "/node_modules/resilient-fetch/browser.js";
const q = new URLSearchParams(location.search);
const A = q.get("a"), id = q.get("id");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const read = async (p) => { const r = await p; return [r.status, await r.text(), (r.headers.get("age") === "0" || r.headers.get("age") === "1" ? "0-1" : r.headers.get("age")), r.headers.get("resilient-fetch-stale")]; };
const sent = async () => (await (await fetch(A + "/log?id=" + id)).json()).length;
try {
  const events = [];
  const client = new ResilientClient({
    stale: true,
    retry: { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0 },
    breaker: { mode: "consecutive", failureThreshold: 1, cooldownMs: 60000 },
    onEvent: (e) => { if (e.type === "stale") events.push([e.reason, e.ageMs >= 0]); },
  });
  const url = A + "/kept?id=" + id;
  const first = await read(client.fetch(url));
  // The package's cache (its name spelt so that run.mjs's rewrite for the full build leaves it).
  const cache = await caches.open(["resilient", "fetch"].join("-"));
  for (let i = 0; i < 200 && (await cache.keys()).length === 0; i++) await sleep(10);
  const keys = (await cache.keys()).map((r) => new URL(r.url).searchParams.get("key"));
  const served = await read(client.fetch(url));
  const state = client.breakerState(A);
  const before = await sent();
  const open = await read(client.fetch(url));
  const after = await sent();
  window.__result = { secure: isSecureContext, first, keys, served, state, open, sentWhileOpen: after - before,
    events, stale: client.stats()[A].stale };
} catch (e) {
  window.__error = String(e && e.stack || e);
}
</script>`;

let browser, site;
before(async () => {
  fs.writeFileSync(path.join(SCRATCH, "stale-page.html"), PAGE);
  site = await serveStatic(SCRATCH);
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await site?.close();
});

test("Chromium: the last good answer is kept in the Cache API and served for 503s, then without sending while the breaker is open", async () => {
  const id = uid("browser-stale");
  const { result } = await pageResult(browser, `${site.url}/stale-page.html?a=${ORIGIN_A}&id=${id}`);
  assert.equal(result.secure, true, "127.0.0.1 is a secure context: the page has the Cache API");
  assert.deepEqual(result.first, [200, "kept 1", null, null]);
  assert.deepEqual(result.keys, [`GET ${ORIGIN_A}/kept?id=${id}`], "kept in the Cache API under its key");
  assert.deepEqual(result.served, [200, "kept 1", "0-1", "status"]);
  assert.equal(result.state, "open");
  assert.deepEqual(result.open, [200, "kept 1", "0-1", "breakerOpen"]);
  assert.equal(result.sentWhileOpen, 0, "nothing sent while open");
  assert.deepEqual(result.events, [["status", true], ["breakerOpen", true]]);
  assert.equal(result.stale, 2);
});
