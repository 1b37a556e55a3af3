// builds: full (a capability of resilient-fetch/full: tests/package/run.mjs)
// Server-sent events that reconnect (policy `events`) in headless Chromium: a plain page using the
// installed package's browser.js reads the fault server's /sse cross-origin. The field rules, a
// reconnect with Last-Event-ID after a cut and after an idle gap, the backoff's bounds and the
// breaker's cooldown (from the server's log), 204, and close(), as events.test.mjs checks in Node.
import test, { after, before } from "node:test";
import fs from "node:fs";
import path from "node:path";
import { ORIGIN_A, SCRATCH, launchChromium, pageResult, serveStatic, uid } from "./helpers.mjs";
import { checkScenario } from "./events-scenario.mjs";

const PAGE = `<!doctype html><meta charset="utf-8">
<script type="module">
import ready, { ResilientClient, resilientEvents } from "/node_modules/resilient-fetch/browser.js";
const q = new URLSearchParams(location.search);
const A = q.get("a"), id = q.get("id");
const sse = (name, plans) => A + "/sse?id=" + id + "-" + name + "&script=" + encodeURIComponent(JSON.stringify(plans));
const QUICK = { retry: { baseDelayMs: 10, maxDelayMs: 20 }, breaker: false };
async function take(stream, n) {
  const items = [];
  for await (const item of stream) { items.push(item); if (items.length === n) break; }
  return items;
}
async function ending(stream) {
  try { for await (const _ of stream); return null; } catch (e) { return { name: e.name, code: e.code, status: e.status }; }
}
try {
  await ready();
  const fields = await take(new ResilientClient(QUICK).events(sse("fields", [{ everyMs: 5, then: "hang", chunks: [
    "\\uFEFFdata: a\\r", "\\n\\r\\n", ": comment\\n", "data:b1\\nda", "ta: b2\\n\\n", "event: ping\\ndata\\n\\n",
    "id: 7\\u0000x\\ndata: c\\n\\n", "id: 8\\rdata: d\\r\\r", "retry: 1x\\nretry: 250\\ndata: e\\n\\n", "id: 9\\n\\n", "data: g\\n\\n",
  ] }])), 7);
  const heard = [];
  const cut = new ResilientClient(QUICK).events(sse("cut", [
    { chunks: ["id: 1\\ndata: one\\n\\n"], then: "drop" },
    { chunks: ["data: two\\n\\n"], then: "hang" },
  ]));
  cut.addEventListener("error", () => heard.push("error " + cut.readyState));
  cut.onopen = () => heard.push("open");
  cut.onmessage = (e) => heard.push("message " + e.data + " " + e.lastEventId);
  await take(cut, 2);
  const idle = await take(new ResilientClient({ ...QUICK, events: { idleMs: 1000 } }).events(sse("idle", [
    { chunks: ["id: a\\ndata: x\\n\\n"], then: "beat", beatMs: 200, beatForMs: 1600 },
    { chunks: ["data: y\\n\\n"], then: "hang" },
  ])), 2);
  await take(new ResilientClient({ retry: { baseDelayMs: 50, maxDelayMs: 1000 }, breaker: false }).events(sse("backoff", [
    { chunks: ["retry: 300\\n\\n"], then: "drop" }, { status: 503 }, { status: 503 }, { chunks: ["data: up\\n\\n"], then: "hang" },
  ])), 1);
  await take(new ResilientClient({ retry: { baseDelayMs: 10, maxDelayMs: 20 },
    breaker: { mode: "consecutive", failureThreshold: 2, cooldownMs: 1500 } }).events(sse("breaker", [
    { status: 503 }, { status: 503 }, { chunks: ["data: back\\n\\n"], then: "hang" },
  ])), 1);
  const noContent = await ending(resilientEvents(sse("204", [{ status: 204 }])));
  const closing = new ResilientClient(QUICK).events(sse("close", [{ chunks: ["data: x\\n\\n"], then: "hang" }]));
  await new Promise((resolve) => closing.addEventListener("message", resolve, { once: true }));
  const closedAt = Date.now();
  closing.close();
  window.__result = { fields, heard, idle: idle.map((i) => i.data), noContent, closedAt, closedState: closing.readyState };
} catch (e) {
  window.__error = String(e && e.stack || e);
}
</script>`;

let browser, site;
before(async () => {
  fs.writeFileSync(path.join(SCRATCH, "events-page.html"), PAGE);
  site = await serveStatic(SCRATCH);
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await site?.close();
});

test("Chromium: the field rules, reconnects with Last-Event-ID after a cut and an idle gap, backoff and breaker bounds, 204, close()", async () => {
  const id = uid("browser-events");
  const { result } = await pageResult(browser, `${site.url}/events-page.html?a=${ORIGIN_A}&id=${id}`, { timeout: 30_000 });
  await checkScenario(result, id);
});
