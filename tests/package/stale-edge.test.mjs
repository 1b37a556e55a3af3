// builds: full (a capability of resilient-fetch/full: tests/package/run.mjs)
// Stale answers in a Cloudflare Worker, in the real runtime (workerd, workerd.mjs), against the
// fault server on 127.0.0.1: a good answer, then 503s: the kept answer is served with its Age and
// marker, then, the breaker open, without sending. Two stores: the default, and a store given in
// the isolate's memory. The default is the Cache API (`caches.open`); workerd run locally without
// a cache service has none ("No Cache was configured"), and the default store then keeps answers
// in the isolate's memory instead: the probe below says which this workerd does.
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import * as runtime from "./workerd.mjs";
import { ORIGIN_A, SCRATCH, serverLog, uid } from "./helpers.mjs";

const TOOLS_BIN = path.join(process.env.RF_TOOLS_DIR, "node_modules", ".bin");

const WORKER = `
import { ResilientClient } from "resilient-fetch";

// A store in the isolate's memory: bytes, not Responses (a Worker's I/O objects are its request's).
const kept = new Map();
let waiters = [];
const memory = {
  async get(key) {
    const e = kept.get(key);
    return e && new Response(e.body, { status: e.status, headers: e.headers });
  },
  async put(key, response) {
    const body = await response.arrayBuffer();
    kept.set(key, { body, status: response.status, headers: [...response.headers] });
    for (const w of waiters.splice(0)) w();
  },
  async delete(key) { kept.delete(key); },
};
const policy = { retry: { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0 },
  breaker: { mode: "consecutive", failureThreshold: 1, cooldownMs: 60000 } };
const clients = {
  cache: new ResilientClient({ ...policy, stale: true }),
  memory: new ResilientClient({ ...policy, stale: { store: memory } }),
};
const wait = (ms) => new Promise((r) => setTimeout(r, ms));

export default {
  async fetch(request) {
    const url = new URL(request.url), q = url.searchParams;
    if (url.pathname === "/probe") {
      try {
        const c = await caches.open("probe");
        const key = new Request("https://resilient-fetch.invalid/probe");
        await c.put(key, new Response("v", { headers: { "cache-control": "max-age=60" } }));
        return Response.json({ cache: (await c.match(key)) !== undefined ? "keeps" : "keeps nothing" });
      } catch (e) {
        return Response.json({ cache: String(e) });
      }
    }
    if (url.pathname !== "/call") return new Response("", { status: 404 });
    const name = q.get("store"), client = clients[name];
    const put = new Promise((r) => waiters.push(r));
    const r = await client.fetch(q.get("url"));
    const answer = [r.status, await r.text(), (r.headers.get("age") === "0" || r.headers.get("age") === "1" ? "0-1" : r.headers.get("age")), r.headers.get("resilient-fetch-stale")];
    // A fresh answer is kept after the call resolved: this request lasts until it is (or 1 s).
    if (r.status === 200 && answer[3] === null) {
      if (name === "memory") await Promise.race([put, wait(1000)]);
      else {
        try {
          const cache = await caches.open(["resilient", "fetch"].join("-"));
          for (let i = 0; i < 20 && (await cache.keys()).length === 0; i++) await wait(10);
        } catch {
          // No Cache API: the default store's memory keeps it as soon as its copy is read.
        }
      }
    }
    return Response.json({ answer, stale: client.stats()[new URL(q.get("url")).origin]?.stale ?? 0 });
  },
};
`;

let workerd;
before(async () => {
  const dir = path.join(SCRATCH, "stale-edge");
  runtime.bundle({ source: WORKER, project: SCRATCH, out: dir, bin: TOOLS_BIN });
  workerd = await runtime.serve(dir, { worker: {} }, { bin: TOOLS_BIN, classes: [] });
});
after(async () => {
  await workerd?.stop();
});

async function call(store, url) {
  const res = await fetch(`http://127.0.0.1:${workerd.ports.worker}/call?store=${store}&url=${encodeURIComponent(url)}`);
  assert.equal(res.status, 200, await res.clone().text());
  return res.json();
}

for (const store of ["memory", "cache"]) {
  test(`workerd (${store} store): the last good answer is served for 503s, then without sending while the breaker is open`, { timeout: 30_000 }, async (t) => {
    const probe = await fetch(`http://127.0.0.1:${workerd.ports.worker}/probe`);
    assert.equal(probe.status, 200, workerd.logs());
    const { cache } = await probe.json();
    if (store === "cache") t.diagnostic(`this workerd's Cache API: ${cache}`);
    const id = uid(`stale-edge-${store}`);
    const url = `${ORIGIN_A}/kept?id=${id}`;
    assert.deepEqual((await call(store, url)).answer, [200, "kept 1", null, null]);
    if (store === "cache" && cache === "keeps nothing") {
      // A Cache API that takes puts and keeps nothing (Cloudflare's on *.workers.dev): nothing served.
      assert.deepEqual((await call(store, url)).answer, [503, "fault 503", null, null]);
      return;
    }
    assert.deepEqual((await call(store, url)).answer, [200, "kept 1", "0-1", "status"]);
    const sent = (await serverLog(ORIGIN_A, id)).length;
    const open = await call(store, url);
    assert.deepEqual(open.answer, [200, "kept 1", "0-1", "breakerOpen"]);
    assert.equal(open.stale, 2);
    assert.equal((await serverLog(ORIGIN_A, id)).length, sent, "nothing sent while open");
  });
}
