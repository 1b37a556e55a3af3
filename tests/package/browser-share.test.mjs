// builds: full (a capability of resilient-fetch/full: tests/package/run.mjs)
// Shared origin health across Chromium tabs: five pages of one site, each a client of one
// share name sending a GET every 50 ms (share-tab.mjs), through a 10 s outage of an origin
// of the fault server with a 1 s cooldown, beside one page alone.
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { EVERY_TAB_AWAKE, ORIGIN_A, SCRATCH, launchChromium, serveStatic, serverLog, uid } from "./helpers.mjs";
import { checkProof, judge } from "./share-tab.mjs";

const PAGE = `<!doctype html><meta charset="utf-8"><title>share tab</title>
<script type="module">
import * as api from "/node_modules/resilient-fetch/browser.js";
import { runTab } from "/share-tab.mjs";
try {
  window.__result = await runTab(api, JSON.parse(new URLSearchParams(location.search).get("opts")));
} catch (e) {
  window.__error = String(e && e.stack || e);
}
</script>`;

let browser, site;
before(async () => {
  fs.writeFileSync(path.join(SCRATCH, "share-tab.html"), PAGE);
  browser = await launchChromium(EVERY_TAB_AWAKE);
  site = await serveStatic(SCRATCH);
});
after(async () => { await browser?.close(); await site?.close(); });

/** Opens a page of `context` running one tab with `opts`; resolves with its result. */
async function tab(context, opts) {
  const page = await context.newPage();
  const logs = [];
  page.on("pageerror", (e) => logs.push(e.message));
  page.on("console", (m) => logs.push(m.text()));
  await page.goto(`${site.url}/share-tab.html?opts=${encodeURIComponent(JSON.stringify(opts))}`);
  await page.waitForFunction(() => window.__result !== undefined || window.__error !== undefined, null,
    { timeout: 60_000, polling: 200 });
  const { result, error } = await page.evaluate(() => ({ result: window.__result, error: window.__error }));
  await page.close();
  if (error) throw new Error(`${error}\n${logs.join("\n")}`);
  return result;
}

test("five tabs through a 10 s outage: at most 1.2x one tab's requests, one probe per cooldown, all closed within 200 ms of the probe", { timeout: 90_000 }, async (t) => {
  const cooldownMs = 1000, ms = 10_000;
  const from = Date.now() + 3000, stopAt = from + ms + 1500;
  const sharedId = uid("shared"), aloneId = uid("alone"), name = uid("share");
  const url = (id) => `${ORIGIN_A}/outage?id=${id}&from=${from}&ms=${ms}`;
  // The five tabs in one browser context (one site's storage partition, where a
  // BroadcastChannel reaches); the lone tab in another.
  const site5 = await browser.newContext(), lone = await browser.newContext();
  try {
    const [alone, ...tabs] = await Promise.all([
      tab(lone, { url: url(aloneId), cooldownMs, startAt: from - 500, stopAt }),
      ...Array.from({ length: 5 }, () => tab(site5, { url: url(sharedId), share: name, cooldownMs, startAt: from - 500, stopAt })),
    ]);
    const verdict = judge({
      shared: await serverLog(ORIGIN_A, sharedId), alone: await serverLog(ORIGIN_A, aloneId), from, ms,
      firstOpen: Math.min(...tabs.flatMap((x) => x.opened)),
    });
    const detail = JSON.stringify({ ...verdict, alone, tabs });
    assert.ok(tabs.every((x) => x.sent >= 200), `every tab sent through the outage: ${detail}`);
    checkProof({ assert, diagnostic: (m) => t.diagnostic(m), verdict, tabs, cooldownMs, detail });
  } finally {
    await site5.close();
    await lone.close();
  }
});
