// builds: full (a capability of resilient-fetch/full: tests/package/run.mjs)
// Failover origins (docs/fallback.md) in headless Chromium: a plain page using the installed
// package's browser.js calls the fault server cross-origin, so both the primary and its alternate
// are cross-origin and each answers its own CORS preflight for the key header. The server's logs
// say where each attempt went and what it carried.
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { ORIGIN_A, ORIGIN_B, SCRATCH, launchChromium, pageResult, serveStatic, serverLog, uid } from "./helpers.mjs";

const PAGE = `<!doctype html><meta charset="utf-8">
<script type="module">
import { ResilientClient } from "/node_modules/resilient-fetch/browser.js";
const q = new URLSearchParams(location.search);
const A = q.get("a"), B = q.get("b"), id = q.get("id");
try {
  const events = [];
  const client = new ResilientClient({
    failover: { [A]: [B] },
    idempotencyKey: true, // cross-origin too: both origins allow the header in their preflight
    breaker: { mode: "consecutive", failureThreshold: 1, cooldownMs: 60000 },
    retry: { maxAttempts: 3, baseDelayMs: 0, maxDelayMs: 0 },
    onEvent: (e) => events.push({ type: e.type, origin: e.origin }),
  });
  // A is down: its breaker opens, the retry goes to B.
  const posted = await client.fetch(A + "/down?on=a&id=" + id, { method: "POST", body: "order-1" });
  const first = [posted.status, await posted.text()];
  // A's breaker is open: straight to B.
  const next = await client.fetch(A + "/down?on=a&id=" + id);
  const second = [next.status, await next.text()];
  // A Request of the caller's (the general path), with a body, goes to B as it is.
  const put = await client.fetch(new Request(A + "/down?on=a&id=" + id + "-put", { method: "PUT", body: "put-body" }));
  window.__result = { first, second, put: [put.status, await put.text()], events,
    states: [client.breakerState(A), client.breakerState(B)] };
} catch (e) {
  window.__error = String(e && e.stack || e);
}
</script>`;

let browser, site;
before(async () => {
  fs.writeFileSync(path.join(SCRATCH, "failover-page.html"), PAGE);
  site = await serveStatic(SCRATCH);
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await site?.close();
});

test("Chromium: a cross-origin primary down fails over to its cross-origin alternate with the same key and body; a Request too", async () => {
  const id = uid("browser-failover");
  const { result } = await pageResult(browser, `${site.url}/failover-page.html?a=${ORIGIN_A}&b=${ORIGIN_B}&id=${id}`);
  assert.deepEqual([result.first, result.second, result.put], [[200, "ok b"], [200, "ok b"], [200, "ok b"]]);
  assert.deepEqual(result.states, ["open", "closed"]);
  const [onA, onB] = [await serverLog(ORIGIN_A, id), await serverLog(ORIGIN_B, id)];
  assert.deepEqual(onA.map((e) => [e.method, e.status]), [["POST", 503]]);
  assert.deepEqual(onB.map((e) => [e.method, e.status]), [["POST", 200], ["GET", 200]]);
  assert.ok(onA[0].key, "the POST carried a key");
  assert.equal(onB[0].key, onA[0].key, "the same Idempotency-Key on both origins");
  assert.deepEqual([onA[0].body, onB[0].body], ["order-1", "order-1"]);
  const put = await serverLog(ORIGIN_B, `${id}-put`);
  assert.deepEqual(put.map((e) => [e.method, e.body]), [["PUT", "put-body"]]);
  assert.equal((await serverLog(ORIGIN_A, `${id}-put`)).length, 0, "A's breaker was open: not asked");
  const starts = result.events.filter((e) => e.type === "attemptStart").map((e) => e.origin);
  assert.deepEqual(starts, [ORIGIN_A, ORIGIN_B, ORIGIN_B, ORIGIN_B]);
  assert.deepEqual(result.events.filter((e) => e.type === "retry").map((e) => e.origin), [ORIGIN_B]);
});
