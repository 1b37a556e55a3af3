// builds: full (a capability of resilient-fetch/full: tests/package/run.mjs)
// The outbox in Chromium, with its real IndexedDB: 200 POSTs while the origin is down, part of
// the time with the browser context offline, the page reloaded twice mid-way; then the origin
// comes back. The fault server's /ledger applies each key's effect once and counts answers.
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { EVERY_TAB_AWAKE, ORIGIN_A, SCRATCH, launchChromium, serveStatic, sleep, uid } from "./helpers.mjs";

const PAGE = `<!doctype html><meta charset="utf-8"><title>outbox tab</title>
<script type="module">
import * as api from "/node_modules/resilient-fetch/browser.js";
import { setUp } from "/outbox-tab.mjs";
window.tab = setUp(api, JSON.parse(new URLSearchParams(location.search).get("opts")));
</script>`;

let browser, site;
before(async () => {
  fs.writeFileSync(path.join(SCRATCH, "outbox-tab.html"), PAGE);
  browser = await launchChromium(EVERY_TAB_AWAKE);
  site = await serveStatic(SCRATCH);
});
after(async () => { await browser?.close(); await site?.close(); });

const setDown = (id, down) => fetch(`${ORIGIN_A}/ledger?id=${id}&down=${down ? 1 : 0}`, { method: "PUT" });
const ledger = async (id) => (await fetch(`${ORIGIN_A}/ledger?id=${id}`)).json();

async function open(context, opts) {
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${site.url}/outbox-tab.html?opts=${encodeURIComponent(JSON.stringify(opts))}`);
  await page.waitForFunction(() => window.tab !== undefined, null, { timeout: 20_000 });
  page.errors = errors;
  return page;
}

const post = (page, bodies) => page.evaluate((b) => window.tab.post(b), bodies);
const range = (tag, from, to) => Array.from({ length: to - from }, (_, i) => `${tag}-${String(from + i).padStart(3, "0")}`);

/** Waits until no page's outbox holds a waiting entry (the replays' own triggers, or flush). */
async function drained(pages, ms = 30_000) {
  const until = Date.now() + ms;
  for (;;) {
    const left = (await Promise.all(pages.map((p) => p.evaluate(() => window.tab.list())))).flat();
    if (left.length === 0) return;
    if (Date.now() > until) assert.fail(`${left.length} entries still waiting after ${ms} ms`);
    await sleep(100);
  }
}

/** Every body applied once, under one key each, in the order it was posted; no key answered twice. */
function assertExactlyOnce(seen, bodies, { answeredOnce = true } = {}) {
  const applied = Object.values(seen.keys);
  assert.equal(applied.length, bodies.length, "one key per body, none lost");
  assert.deepEqual(applied.map((k) => k.body).sort(), [...bodies].sort(), "each body applied exactly once");
  if (answeredOnce) assert.deepEqual(applied.filter((k) => k.answers !== 1), [], "no key delivered twice");
  assert.equal(seen.refused.length, 0);
}

test("200 POSTs through an outage, offline for part of it, two reloads: each applied once, in order", { timeout: 120_000 }, async () => {
  const id = uid("outbox-reload"), name = uid("outbox");
  const url = `${ORIGIN_A}/ledger?id=${id}`;
  await setDown(id, true);
  const context = await browser.newContext();
  try {
    // No breaker: the offline calls meet the network (and fail there), not an open breaker.
    const page = await open(context, { url, name, breaker: false });
    const results = [];
    results.push(...await post(page, range("p", 0, 50)));
    await context.setOffline(true);
    results.push(...await post(page, range("p", 50, 100)));
    await context.setOffline(false);
    await page.reload();
    await page.waitForFunction(() => window.tab !== undefined);
    results.push(...await post(page, range("p", 100, 130)));
    await context.setOffline(true);
    results.push(...await post(page, range("p", 130, 170)));
    await context.setOffline(false);
    await page.reload();
    await page.waitForFunction(() => window.tab !== undefined);
    results.push(...await post(page, range("p", 170, 200)));
    const reasons = new Set(results.map((r) => r.split(":")[0] === "kept" ? r : `not kept: ${r}`));
    assert.ok([...reasons].every((r) => r.startsWith("kept:")), [...reasons].join(", "));
    assert.ok(reasons.has("kept:network"), "offline calls were kept (network)");
    assert.ok(reasons.has("kept:status"), "calls answered 503 were kept (status)");
    assert.equal((await page.evaluate(() => window.tab.list())).length, 200, "all 200 in IndexedDB across reloads");
    assert.equal((await ledger(id)).order.length, 0, "nothing applied while down");
    // The origin comes back: the page's own timer replays, or flush() does.
    await setDown(id, false);
    await page.evaluate(() => window.tab.flush());
    await drained([page]);
    const seen = await ledger(id);
    assertExactlyOnce(seen, range("p", 0, 200));
    assert.deepEqual(seen.order, range("p", 0, 200), "delivered in the order they were posted");
    assert.deepEqual(await page.evaluate(() => window.tab.deadLetters()), []);
    assert.deepEqual(page.errors, []);
  } finally {
    await context.close();
  }
});

test("three tabs of one site, all flushing at once: one replayer at a time, each key answered once", { timeout: 120_000 }, async () => {
  const id = uid("outbox-tabs"), name = uid("outbox");
  const url = `${ORIGIN_A}/ledger?id=${id}`;
  await setDown(id, true);
  const context = await browser.newContext();
  try {
    const pages = await Promise.all([0, 1, 2].map(() => open(context, { url, name })));
    const results = await Promise.all(pages.map((p, i) => post(p, range(`t${i}`, 0, 40))));
    assert.ok(results.flat().every((r) => r.startsWith("kept:")), results.flat().find((r) => !r.startsWith("kept:")));
    // One IndexedDB store per name and site: every tab sees all 120.
    assert.equal((await pages[0].evaluate(() => window.tab.list())).length, 120);
    await setDown(id, false);
    const tallies = await Promise.all(pages.map((p) => p.evaluate(() => window.tab.flush())));
    assert.ok(tallies.reduce((n, t) => n + t.delivered, 0) <= 120, JSON.stringify(tallies));
    await drained(pages);
    const seen = await ledger(id);
    const bodies = [0, 1, 2].flatMap((i) => range(`t${i}`, 0, 40));
    assertExactlyOnce(seen, bodies);
    for (let i = 0; i < 3; i++) {
      const mine = seen.order.filter((b) => b.startsWith(`t${i}-`));
      assert.deepEqual(mine, range(`t${i}`, 0, 40), `tab ${i}'s posts in the order it made them`);
    }
    for (const p of pages) assert.deepEqual(p.errors, []);
  } finally {
    await context.close();
  }
});
