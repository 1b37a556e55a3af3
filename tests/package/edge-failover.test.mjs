// builds: full (a capability of resilient-fetch/full: tests/package/run.mjs)
// Failover origins (docs/fallback.md) in Cloudflare's workerd: a Worker bundled as wrangler
// bundles it (workerd.mjs) calls the fault server's origin a, down, with b as its alternate; the
// server's logs say where each attempt went and what it carried.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import * as runtime from "./workerd.mjs";
import { ORIGIN_A, ORIGIN_B, SCRATCH, serverLog, uid } from "./helpers.mjs";

const TOOLS_BIN = path.join(process.env.RF_TOOLS_DIR, "node_modules", ".bin");

const WORKER = `
import { ResilientClient } from "resilient-fetch";

export default {
  async fetch(request) {
    const q = new URL(request.url).searchParams;
    if (new URL(request.url).pathname !== "/call") return new Response("not found", { status: 404 });
    const [a, b, id] = [q.get("a"), q.get("b"), q.get("id")];
    const events = [];
    const client = new ResilientClient({
      failover: { [a]: [b] },
      breaker: { mode: "consecutive", failureThreshold: 1, cooldownMs: 60000 },
      retry: { maxAttempts: 3, baseDelayMs: 0, maxDelayMs: 0 },
      onEvent: (e) => events.push([e.type, e.origin]),
    });
    const answer = async (p) => p.then(async (r) => [r.status, await r.text()], (e) => [e.name, e.message]);
    // a is down: its breaker opens and the retry goes to b; then straight to b; a Request too.
    const first = await answer(client.fetch(a + "/down?on=a&id=" + id, { method: "POST", body: "w-1" }));
    const second = await answer(client.fetch(a + "/down?on=a&id=" + id));
    const put = await answer(client.fetch(new Request(a + "/down?on=a&id=" + id + "-put", { method: "PUT", body: "put-body" })));
    return Response.json({ first, second, put, events, state: client.breakerState(a) });
  },
};
`;

test("workerd: a primary down fails over to its alternate with the same key and body; a Request too", { timeout: 60_000 }, async () => {
  const dir = fs.mkdtempSync(path.join(SCRATCH, "edge-failover-"));
  runtime.bundle({ source: WORKER, project: SCRATCH, out: dir, bin: TOOLS_BIN });
  const worker = await runtime.serve(dir, { edge: {} }, { bin: TOOLS_BIN, classes: [] });
  try {
    const id = uid("edge-failover");
    const q = new URLSearchParams({ a: ORIGIN_A, b: ORIGIN_B, id });
    const res = await fetch(`http://127.0.0.1:${worker.ports.edge}/call?${q}`);
    const text = await res.text();
    assert.equal(res.status, 200, `${text}\n${worker.logs()}`);
    const result = JSON.parse(text);
    assert.deepEqual([result.first, result.second, result.put], [[200, "ok b"], [200, "ok b"], [200, "ok b"]]);
    assert.equal(result.state, "open");
    const [onA, onB] = [await serverLog(ORIGIN_A, id), await serverLog(ORIGIN_B, id)];
    assert.deepEqual(onA.map((e) => [e.method, e.status, e.body]), [["POST", 503, "w-1"]]);
    assert.deepEqual(onB.map((e) => [e.method, e.status, e.body]), [["POST", 200, "w-1"], ["GET", 200, ""]]);
    assert.ok(onA[0].key && onB[0].key === onA[0].key, "the same Idempotency-Key on both origins");
    assert.deepEqual((await serverLog(ORIGIN_B, `${id}-put`)).map((e) => [e.method, e.body]), [["PUT", "put-body"]]);
    const starts = result.events.filter(([type]) => type === "attemptStart").map(([, origin]) => origin);
    assert.deepEqual(starts, [ORIGIN_A, ORIGIN_B, ORIGIN_B, ORIGIN_B]);
  } finally {
    await worker.stop();
  }
});
