// builds: full (a capability of resilient-fetch/full: tests/package/run.mjs)
// Server-sent events that reconnect (policy `events`) in Cloudflare's workerd: a Worker bundled as
// wrangler bundles it reads the fault server's /sse on 127.0.0.1 within one request. The field
// rules, a reconnect with Last-Event-ID after a cut and after an idle gap, the backoff's bounds and
// the breaker's cooldown (from the server's log), 204, and close(), as events.test.mjs checks in Node.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import * as runtime from "./workerd.mjs";
import { ORIGIN_A, SCRATCH, uid } from "./helpers.mjs";
import { checkScenario } from "./events-scenario.mjs";

const TOOLS_BIN = path.join(process.env.RF_TOOLS_DIR, "node_modules", ".bin");

const WORKER = `
import { ResilientClient, resilientEvents } from "resilient-fetch";

const QUICK = { retry: { baseDelayMs: 10, maxDelayMs: 20 }, breaker: false };
async function take(stream, n) {
  const items = [];
  for await (const item of stream) { items.push(item); if (items.length === n) break; }
  return items;
}
async function ending(stream) {
  try { for await (const _ of stream); return null; } catch (e) { return { name: e.name, code: e.code, status: e.status }; }
}

export default {
  async fetch(request) {
    const q = new URL(request.url).searchParams;
    const A = q.get("a"), id = q.get("id");
    if (!A) return new Response("not found", { status: 404 });
    const sse = (name, plans) => A + "/sse?id=" + id + "-" + name + "&script=" + encodeURIComponent(JSON.stringify(plans));
    try {
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
      return Response.json({ fields, heard, idle: idle.map((i) => i.data), noContent, closedAt, closedState: closing.readyState });
    } catch (e) {
      return Response.json({ error: String(e && e.stack || e) }, { status: 500 });
    }
  },
};
`;

test("workerd: the field rules, reconnects with Last-Event-ID after a cut and an idle gap, backoff and breaker bounds, 204, close()", async () => {
  const dir = fs.mkdtempSync(path.join(SCRATCH, "edge-events-"));
  runtime.bundle({ source: WORKER, project: SCRATCH, out: dir, bin: TOOLS_BIN });
  const served = await runtime.serve(dir, { events: {} }, { bin: TOOLS_BIN, classes: [] });
  try {
    const id = uid("edge-events");
    const res = await fetch(`http://127.0.0.1:${served.ports.events}/run?a=${encodeURIComponent(ORIGIN_A)}&id=${id}`);
    const result = await res.json();
    assert.equal(result.error, undefined, `${result.error}\n${served.logs()}`);
    await checkScenario(result, id);
  } finally {
    await served.stop();
  }
});
