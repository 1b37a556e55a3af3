// builds: full (a capability of resilient-fetch/full: tests/package/run.mjs)
// Stale answers in a Cloudflare Worker, in the real runtime (workerd, workerd.mjs), against the
// fault server on 127.0.0.1: a good answer, then 503s: the kept answer is served with its Age and
// marker, then, the breaker open, without sending. Three stores: the default over workerd's Cache
// API (`caches.open`), served by a cache service of this test's (CACHE below: workerd's cache
// protocol, entries in memory, no expiry: Cloudflare's own cache is not here); the default where
// workerd has no cache service ("No Cache was configured": the package keeps answers in the
// isolate's memory instead); and a store given in the isolate's memory.
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
    // The key the package's Cache API store puts an answer under (src/stale/stale.js KEY_URL).
    const keyOf = (u) => new Request("https://resilient-fetch.invalid/stale?key=" + encodeURIComponent("GET " + u));
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
          for (let i = 0; i < 50 && (await cache.match(keyOf(q.get("url")))) === undefined; i++) await wait(10);
        } catch {
          // No Cache API: the default store's memory keeps it as soon as its copy is read.
        }
      }
    }
    let inCache = false;
    try {
      inCache = (await (await caches.open(["resilient", "fetch"].join("-"))).match(keyOf(q.get("url")))) !== undefined;
    } catch {
      inCache = null;
    }
    return Response.json({ answer, inCache, stale: client.stats()[new URL(q.get("url")).origin]?.stale ?? 0 });
  },
};
`;

// A cache service as workerd's Cache API speaks to it (cacheApiOutbound): PUT stores the
// serialised response (an HTTP/1.1 message) under the namespace and URL, GET answers it with
// cf-cache-status HIT (else MISS), PURGE deletes it.
const CACHE = `
const kept = new Map();
const text = (bytes) => { let s = ""; for (const b of bytes) s += String.fromCharCode(b); return s; };
function unchunk(bytes) {
  const out = [];
  for (let at = 0; ;) {
    const eol = text(bytes.subarray(at, at + 16)).indexOf("\\r\\n");
    const size = parseInt(text(bytes.subarray(at, at + eol)), 16);
    if (!(size > 0)) return new Uint8Array(out);
    out.push(...bytes.subarray(at + eol + 2, at + eol + 2 + size));
    at += eol + 4 + size;
  }
}
export default {
  async fetch(request) {
    const key = (request.headers.get("cf-cache-namespaces") ?? "") + " " + request.url;
    if (request.method === "PUT") {
      kept.set(key, new Uint8Array(await request.arrayBuffer()));
      return new Response(null, { status: 204 });
    }
    if (request.method === "PURGE") return new Response(null, { status: kept.delete(key) ? 200 : 404 });
    const bytes = kept.get(key);
    if (bytes === undefined) return new Response(null, { headers: { "cf-cache-status": "MISS" } });
    const all = text(bytes), end = all.indexOf("\\r\\n\\r\\n");
    const [start, ...lines] = all.slice(0, end).split("\\r\\n");
    const status = Number(start.split(" ")[1]);
    const headers = new Headers();
    for (const line of lines) {
      const i = line.indexOf(":");
      headers.append(line.slice(0, i), line.slice(i + 1).trim());
    }
    let body = bytes.subarray(end + 4);
    if (/chunked/i.test(headers.get("transfer-encoding") ?? "")) body = unchunk(body);
    headers.delete("transfer-encoding");
    headers.delete("content-length");
    headers.set("cf-cache-status", "HIT");
    return new Response([101, 204, 205, 304].includes(status) ? null : body, { status, headers });
  },
};
`;

let workerd;
before(async () => {
  const dir = path.join(SCRATCH, "stale-edge");
  runtime.bundle({ source: WORKER, project: SCRATCH, out: dir, bin: TOOLS_BIN });
  fs.writeFileSync(path.join(dir, "cache.js"), CACHE);
  const ports = { cached: await runtime.freePort(), plain: await runtime.freePort() };
  const modules = `modules = [
    (name = "worker.js", esModule = embed "worker.js"),
    (name = "web/resilient_fetch_bg.wasm", wasm = embed "web/resilient_fetch_bg.wasm"),
  ], compatibilityDate = "2026-11-01"`;
  const text = `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "cached", worker = (${modules}, cacheApiOutbound = "cache")),
    (name = "plain", worker = (${modules})),
    (name = "cache", worker = (modules = [(name = "cache.js", esModule = embed "cache.js")], compatibilityDate = "2026-11-01")),
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [
    (name = "cached", address = "127.0.0.1:${ports.cached}", http = (), service = "cached"),
    (name = "plain", address = "127.0.0.1:${ports.plain}", http = (), service = "plain"),
  ],
);
`;
  workerd = { ports, ...(await runtime.startWorkerd(dir, text, ports, { bin: TOOLS_BIN })) };
});
after(async () => {
  await workerd?.stop();
});

async function call(port, store, url) {
  const res = await fetch(`http://127.0.0.1:${port}/call?store=${store}&url=${encodeURIComponent(url)}`);
  assert.equal(res.status, 200, workerd.logs());
  return res.json();
}

for (const [service, store, cache] of [
  ["cached", "cache", "keeps"],
  ["plain", "cache", "Error: No Cache was configured"],
  ["plain", "memory", "Error: No Cache was configured"],
]) {
  const what = store === "memory" ? "a given memory store" : cache === "keeps" ? "the Cache API, over a cache service" : "no Cache API: memory";
  test(`workerd (${what}): the last good answer is served for 503s, then without sending while the breaker is open`, { timeout: 30_000 }, async () => {
    const port = workerd.ports[service];
    const probe = await (await fetch(`http://127.0.0.1:${port}/probe`)).json();
    assert.equal(probe.cache, cache, "what this workerd's Cache API does");
    const id = uid(`stale-edge-${service}-${store}`);
    const url = `${ORIGIN_A}/kept?id=${id}`;
    const first = await call(port, store, url);
    assert.deepEqual(first.answer, [200, "kept 1", null, null]);
    assert.equal(first.inCache, store === "cache" && cache === "keeps" ? true : cache === "keeps" ? false : null,
      "kept in the Cache API exactly when the default store has one");
    assert.deepEqual((await call(port, store, url)).answer, [200, "kept 1", "0-1", "status"]);
    const sent = (await serverLog(ORIGIN_A, id)).length;
    const open = await call(port, store, url);
    assert.deepEqual(open.answer, [200, "kept 1", "0-1", "breakerOpen"]);
    assert.equal(open.stale, 2);
    assert.equal((await serverLog(ORIGIN_A, id)).length, sent, "nothing sent while open");
  });
}
