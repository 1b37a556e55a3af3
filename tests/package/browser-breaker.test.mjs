// The breaker's slow-call rule and growing cooldowns in headless Chromium (docs/behaviour.md,
// "Circuit breaker per origin"): a plain page using the installed package's browser.js calls the
// fault server cross-origin. As in breaker-rules.test.mjs, every time judged is one the package
// reports: attemptEnd's durationMs, and the wait of a call refused in the transition's own task.
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
const errorOf = (p) => p.then(() => null, (e) => e);
try {
  // The slow-call rule: answers held 400 ms by the server are slow (slowCallMs 150).
  const events = [];
  const slowClient = new ResilientClient({
    retry: false,
    breaker: { slowCallMs: 150, slowCallRateThreshold: 0.5, minimumCalls: 4, windowType: "count", windowSize: 4 },
    onEvent: (e) => events.push({ type: e.type, to: e.to, reason: e.reason, durationMs: e.durationMs }),
  });
  const statuses = [];
  for (const p of ["/ok", "/slow?ms=400&id=" + id, "/ok", "/slow?ms=400&id=" + id, "/ok"]) {
    statuses.push(await slowClient.fetch(A + p).then((r) => r.status, (e) => e.name));
  }
  // Growing cooldowns: 100 ms, doubled per failed probe up to 800 ms, read from a call refused in
  // the transition's listener.
  const openings = [];
  const growing = new ResilientClient({
    retry: false,
    bulkhead: false,
    breaker: { failureThreshold: 1, cooldownMs: 100, maxCooldownMs: 800 },
    onEvent: (e) => {
      if (e.type === "breakerTransition" && e.to === "open") {
        openings.push({ reason: e.reason, refused: errorOf(growing.fetch(A + "/ok")) });
      }
    },
  });
  const down = A + "/status?code=503&id=" + id + "-down";
  await growing.fetch(down);
  for (let n = 1; n <= 3; n++) {
    await sleep((await openings.at(-1).refused).retryAfterMs + 5);
    await growing.fetch(down);
  }
  const refusals = await Promise.all(openings.map((o) => o.refused));
  // breaker.key: a breaker per route; the failing one opens alone.
  const route = (url) => new URL(url).origin + "/" + new URL(url).pathname.split("/")[1];
  const keyed = new ResilientClient({ retry: false, breaker: { failureThreshold: 1, cooldownMs: 60000, key: route } });
  await keyed.fetch(A + "/status?code=503&id=" + id + "-key");
  const keyRefused = await errorOf(keyed.fetch(A + "/status?code=503&id=" + id + "-key"));
  const keyOk = (await keyed.fetch(A + "/ok")).status;
  const badKey = await errorOf(new ResilientClient({ breaker: { key: () => "" } }).fetch(A + "/ok"));
  window.__result = {
    key: { refused: keyRefused && keyRefused.name, origin: keyRefused && keyRefused.origin, ok: keyOk,
      states: [keyed.breakerState(A + "/status"), keyed.breakerState(A + "/ok")], stats: Object.keys(keyed.stats()).sort(),
      bad: badKey && badKey.name + ": " + badKey.message },
    statuses, events, openedBy: slowClient.stats()[A].openedBy,
    reasons: openings.map((o) => o.reason),
    waits: refusals.map((e) => e && e.name === "CircuitOpenError" ? e.retryAfterMs : String(e)),
  };
} catch (e) {
  window.__error = String(e && e.stack || e);
}
</script>`;

let browser, site;
before(async () => {
  fs.writeFileSync(path.join(SCRATCH, "breaker-page.html"), PAGE);
  site = await serveStatic(SCRATCH);
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await site?.close();
});

// Promises: slow answers open the breaker on the call whose slow share reaches the threshold
// ("slowCallRate"); each reopening doubles the cooldown within its upper half, up to the cap.
test("Chromium: slow calls open the breaker by their share of the window; reopenings grow the cooldown up to maxCooldownMs; breaker.key names a breaker per route", async () => {
  const { result } = await pageResult(browser, `${site.url}/breaker-page.html?a=${ORIGIN_A}&id=${uid("browser-breaker")}`);
  const ends = result.events.filter((e) => e.type === "attemptEnd");
  const slow = ends.map((e) => e.durationMs > 150);
  let expected = -1;
  for (let i = 0; i < slow.length && expected < 0; i++) {
    const window = slow.slice(Math.max(0, i - 3), i + 1);
    if (window.length >= 4 && slow[i] && window.filter(Boolean).length / window.length >= 0.5) expected = i;
  }
  assert.ok(expected >= 0 && expected <= 3, JSON.stringify(slow));
  const opened = result.events.findIndex((e) => e.type === "breakerTransition" && e.to === "open");
  assert.deepEqual(result.events[opened - 1], ends[expected], "opened right after the attempt that reached the share");
  assert.equal(result.events[opened].reason, "slowCallRate");
  assert.equal(result.openedBy, "slowCallRate");
  assert.deepEqual(result.statuses.slice(expected + 1), Array(result.statuses.length - expected - 1).fill("CircuitOpenError"));
  assert.deepEqual(result.reasons, ["failures", "probe", "probe", "probe"]);
  const bounds = [[100, 100], [100, 200], [200, 400], [400, 800]];
  result.waits.forEach((w, n) => assert.ok(w >= bounds[n][0] - 1 && w <= bounds[n][1], `cooldown ${n}: ${w} in ${bounds[n]}`));
  // breaker.key: the failing route's breaker opened alone, named by its key.
  assert.deepEqual(result.key, {
    refused: "CircuitOpenError", origin: `${ORIGIN_A}/status`, ok: 200, states: ["open", "closed"],
    stats: [`${ORIGIN_A}/ok`, `${ORIGIN_A}/status`],
    bad: "RangeError: breaker.key must return a string of 1 to 256 characters (got 0 characters)",
  });
});
