// builds: full (a capability of resilient-fetch/full: tests/package/run.mjs)
// Shared origin health across Chromium tabs: five pages of one site, each a client of one
// share name sending a GET every 50 ms (share-tab.mjs), through a 10 s outage of an origin
// of the fault server with a 1 s cooldown, beside one page alone.
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { EVERY_TAB_AWAKE, ORIGIN_A, SCRATCH, launchChromium, serveStatic, serverLog, uid } from "./helpers.mjs";
import { checkFleet, fleetVerdict } from "./share-tab.mjs";

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

// The promises (share-tab.mjs, checkFleet): no tab sends after it heard the open breaker but the
// fleet's probes, one per cooldown from each probe's answer, sent by the leader as soon as its
// cooldown has run; one successful probe closes every tab. The count bound is one only broken
// sharing crosses, past the trip (which lasts as long as notes take to cross: under load five tabs
// sent 34 requests in the whole outage against 13 for one alone): five tabs that share nothing
// probe 5x one tab; sharing about 1x, and the bound is 3x. The whole outage's ratio is the bench's
// (bench/share.mjs) and this test's diagnostic.
test("five tabs through a 10 s outage: no tab sends after it heard the open breaker but one probe per cooldown from the last one's answer, one successful probe closes all; probing under 3x one tab's (5x without sharing)", { timeout: 90_000 }, async (t) => {
  const cooldownMs = 1000, ms = 10_000;
  const from = Date.now() + 3000, stopAt = from + ms + 1500;
  const sharedId = uid("shared"), aloneId = uid("alone"), name = uid("share");
  // Each tab its own id (the origin's log of what that tab sent), one origin for all.
  const url = (id) => `${ORIGIN_A}/outage?id=${id}&from=${from}&ms=${ms}`;
  // The five tabs in one browser context (one site's storage partition, where a
  // BroadcastChannel reaches); the lone tab in another.
  const site5 = await browser.newContext(), lone = await browser.newContext();
  try {
    const [alone, ...tabs] = await Promise.all([
      tab(lone, { url: url(aloneId), cooldownMs, startAt: from - 500, stopAt }),
      ...Array.from({ length: 5 }, (_, k) => tab(site5, { url: url(`${sharedId}-${k}`), share: name, cooldownMs, startAt: from - 500, stopAt })),
    ]);
    const members = await Promise.all(tabs.map(async (x, k) => ({ name: `tab${k}`, ...x, log: await serverLog(ORIGIN_A, `${sharedId}-${k}`) })));
    const verdict = fleetVerdict({ members, from, ms, cooldownMs });
    const lonely = fleetVerdict({ members: [{ name: "alone", ...alone, log: await serverLog(ORIGIN_A, aloneId) }], from, ms, cooldownMs });
    const detail = JSON.stringify({ verdict, lonely });
    t.diagnostic(`during the outage: five tabs ${verdict.count} requests, one alone ${lonely.count} (${(verdict.count / lonely.count).toFixed(2)}x); past the first cooldown ${verdict.probing} and ${lonely.probing}`);
    // Every tab called through the whole outage (the test's own driver, not the package).
    for (const x of [alone, ...tabs]) {
      assert.ok(x.calls.filter((c) => c.at >= from && c.at < from + ms).length >= 10, `every tab called through the outage: ${detail}`);
    }
    assert.ok(lonely.count >= 10, `the lone tab saw the outage: ${detail}`);
    checkFleet({ assert, diagnostic: (m) => t.diagnostic(`alone: ${m}`), verdict: lonely, cooldownMs, detail });
    checkFleet({ assert, diagnostic: (m) => t.diagnostic(`five tabs: ${m}`), verdict, cooldownMs, detail });
    // Past the trip (which lasts as long as notes take to cross), what the fleet sends is its probing:
    // under 3x one alone's (sharing nothing: 5x).
    assert.ok(verdict.probing < 3 * lonely.probing, `five tabs sent ${verdict.probing} requests past the first cooldown vs one alone ${lonely.probing} (without sharing 5x): ${detail}`);
    for (const x of tabs) assert.equal(x.state, "closed", detail);
  } finally {
    await site5.close();
    await lone.close();
  }
});
