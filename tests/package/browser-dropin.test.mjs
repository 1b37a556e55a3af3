// In headless Chromium, a plain page using the package's browser.js: a
// cross-origin POST to a server whose CORS does not list Idempotency-Key
// works as plain fetch does (no key added unless asked for); a same-origin
// POST carries a key; the call's deadline bounds a stalled body. And in Node
// (no CORS) a cross-origin POST still carries a key.
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import {
  ORIGIN_A, SCRATCH, launchChromium, pageResult, serveStatic, serverLog as logOf, uid, waitLog, fullOnly } from "./helpers.mjs";
import { ResilientClient } from "resilient-fetch";

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;


// The page: imports the built package's browser.js as a plain module and runs
// one case (?case=...), setting window.__result (or window.__error).
const PAGE = `<!doctype html><meta charset="utf-8">
<script type="module">
import { ResilientClient, TimeoutError } from "/node_modules/resilient-fetch/browser.js";
const q = new URLSearchParams(location.search);
const A = q.get("a"), id = q.get("id");
const settle = (p) => p.then(
  (r) => ({ ok: true, status: r.status }),
  (e) => ({ ok: false, typeError: e instanceof TypeError, name: e && e.name, message: String(e && e.message) }));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const cases = {
  async strictCors() {
    const url = A + "/strict-cors?id=" + id;
    const plain = await settle(fetch(url, { method: "POST", body: "x" }));
    const client = new ResilientClient({ retry: { baseDelayMs: 1, maxDelayMs: 5 } });
    const viaClient = await settle(client.fetch(url, { method: "POST", body: "x" }));
    return { plain, viaClient, state: client.breakerState(A) };
  },
  async explicitKey() {
    const client = new ResilientClient({ retry: { baseDelayMs: 1, maxDelayMs: 5 } });
    const r = await settle(client.fetch(A + "/strict-cors?id=" + id, { method: "POST", body: "x" }, { idempotencyKey: true }));
    return { r };
  },
  async sameOrigin() {
    const client = new ResilientClient();
    const res = await client.fetch("/echo-key", { method: "POST", body: "x" });
    return { status: res.status, echoed: await res.json() };
  },
  async stalledBody() {
    const client = new ResilientClient({ retry: false });
    const t0 = performance.now();
    const res = await client.fetch(A + "/stalled-body?id=" + id, undefined, { totalTimeoutMs: 1000 });
    const outcome = await Promise.race([
      res.text().then(() => "resolved", (e) => e),
      sleep(3000).then(() => "still pending after 3 s"),
    ]);
    return {
      status: res.status,
      isTimeoutError: outcome instanceof TimeoutError,
      outcome: typeof outcome === "string" ? outcome : outcome.name + ": " + outcome.message,
      ms: performance.now() - t0,
    };
  },
  async hedge() {
    const client = new ResilientClient({ hedge: { delayMs: 50 } });
    const t0 = performance.now();
    const res = await client.fetch(A + "/tail?id=" + id + "&slow=1&ms=3000");
    return { text: await res.text(), ms: performance.now() - t0, stats: client.stats()[A] };
  },
  async otherRealm() {
    // A signal of another realm (an iframe's AbortController) aborts the call at once.
    // Aborted 100 ms after its attempt went out (the call is in flight then, however long the
    // page took to get the wasm ready); timed from the abort.
    const frame = document.body.appendChild(document.createElement("iframe"));
    const controller = new frame.contentWindow.AbortController();
    let aborted;
    const client = new ResilientClient({
      retry: { baseDelayMs: 1, maxDelayMs: 5 },
      onEvent: (e) => {
        if (e.type === "attemptStart") setTimeout(() => { aborted = performance.now(); controller.abort(); }, 100);
      },
    });
    const r = await settle(client.fetch(A + "/hang?id=" + id, { signal: controller.signal }));
    return { r, ms: performance.now() - aborted, state: client.breakerState(A), stats: client.stats()[A] };
  },
  async coalesce() {
    const client = new ResilientClient({ coalesce: true });
    const url = A + "/slow?id=" + id + "&ms=150&bytes=100000";
    const responses = await Promise.all(Array.from({ length: 20 }, () => client.fetch(url)));
    const bodies = await Promise.all(responses.map((r) => r.text()));
    return { distinct: new Set(responses).size, whole: bodies.filter((b) => b.length === 100000).length };
  },
  async coalesceBodies() {
    const errorOf = (p) => p.then(() => null, (e) => e);
    const pause = (ms) => new Promise((r) => setTimeout(r, ms));
    const client = new ResilientClient({ coalesce: true, retry: false, bodyTimeoutMs: 100 });
    const out = {};
    // A lone call aborted after it resolved: its body stops.
    const ac = new AbortController();
    const lone = await client.fetch(A + "/trickle?id=" + id + "-lone&chunks=40&everyMs=50", { signal: ac.signal });
    ac.abort(new Error("left the page"));
    out.lone = (await errorOf(lone.text()))?.message;
    // One caller's body cut by bodyTimeoutMs: the other reads it whole later.
    const trickle = A + "/trickle?id=" + id + "-cut&chunks=3&everyMs=150";
    const [a, b] = await Promise.all([client.fetch(trickle), client.fetch(trickle)]);
    out.cut = (await errorOf(a.text()))?.name;
    await pause(700);
    out.otherUsed = b.bodyUsed;
    out.other = await b.text().catch((e) => "error: " + e);
    // One caller cancels: it settles at once, the other's body stays whole.
    const slow = A + "/slow?id=" + id + "-cancel&ms=50&bytes=100000";
    const [c, d] = await Promise.all([client.fetch(slow), client.fetch(slow)]);
    out.cancel = await Promise.race([c.body.cancel().then(() => "settled"), pause(1000).then(() => "pending")]);
    out.whole = (await d.text()).length;
    return out;
  },
};
try {
  window.__result = await cases[q.get("case")]();
} catch (e) {
  window.__error = String(e && e.stack || e);
}
</script>`;

/** POST /echo-key answers with the request's idempotency-key header ({ method, key }). */
function echoKey(req, res) {
  if (new URL(req.url, "http://x").pathname !== "/echo-key") return false;
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ method: req.method, key: req.headers["idempotency-key"] ?? null }));
  });
  return true;
}

let browser, site;
before(async () => {
  const dir = path.join(SCRATCH, "dropin-page");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "index.html"), PAGE);
  // SCRATCH on a port of its own: another origin than the fault server's.
  site = await serveStatic(SCRATCH, echoKey);
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await site?.close();
});

const runCase = async (name, id) =>
  (await pageResult(browser, `${site.url}/dropin-page/index.html?case=${name}&a=${ORIGIN_A}&id=${id}`)).result;

test("cross-origin POST to a server whose CORS lists only content-type: 201 as with plain fetch, no key, breaker closed", async () => {
  const id = uid("strict-cors");
  const r = await runCase("strictCors", id);
  assert.deepEqual(r.plain, { ok: true, status: 201 }, `plain fetch: ${JSON.stringify(r.plain)}`);
  assert.deepEqual(r.viaClient, { ok: true, status: 201 }, `client.fetch: ${JSON.stringify(r.viaClient)}`);
  assert.equal(r.state, "closed");
  const log = await logOf(ORIGIN_A, id);
  const posts = log.filter((e) => e.method === "POST");
  assert.equal(posts.length, 2, JSON.stringify(log));
  assert.ok(posts.every((e) => e.key === null), `a key was sent: ${JSON.stringify(posts)}`);
  const asked = log.filter((e) => e.method === "OPTIONS" && /idempotency-key/i.test(e.requestHeaders ?? ""));
  assert.deepEqual(asked, [], "a preflight asked to send Idempotency-Key");
});

test("with idempotencyKey: true the key is added cross-origin (so that preflight fails: TypeError)", async () => {
  const id = uid("strict-cors-explicit");
  const { r } = await runCase("explicitKey", id);
  assert.equal(r.ok, false, JSON.stringify(r));
  assert.equal(r.typeError, true, JSON.stringify(r));
  const log = await logOf(ORIGIN_A, id);
  assert.ok(log.some((e) => e.method === "OPTIONS" && /idempotency-key/i.test(e.requestHeaders ?? "")),
    `no preflight asked for Idempotency-Key: ${JSON.stringify(log)}`);
  assert.ok(!log.some((e) => e.method === "POST"), "the POST was sent despite the failed preflight");
});

test("a same-origin POST from the page carries a key", async () => {
  const r = await runCase("sameOrigin", uid("same-origin"));
  assert.equal(r.status, 200);
  assert.equal(r.echoed.method, "POST");
  assert.match(r.echoed.key ?? "", UUID_V4);
});

test("totalTimeoutMs bounds a stalled body in Chromium: TimeoutError, the connection closed", async () => {
  const id = uid("stalled-chromium");
  const r = await runCase("stalledBody", id);
  assert.equal(r.status, 200);
  assert.ok(r.isTimeoutError, `res.text(): ${r.outcome}`);
  assert.ok(r.ms >= 900 && r.ms < 1600, `rejected after ${Math.round(r.ms)} ms`);
  const log = await waitLog(ORIGIN_A, id, (l) => l[0]?.closedEarly);
  assert.ok(log[0]?.closedEarly, "the server never saw the connection closed");
});

test("coalesce in Chromium: 20 identical GETs reach the server once, each caller reads its own whole body", fullOnly(), async () => {
  const id = uid("coalesce-chromium");
  const r = await runCase("coalesce", id);
  assert.deepEqual(r, { distinct: 20, whole: 20 });
  assert.equal((await logOf(ORIGIN_A, id)).length, 1);
});

test("coalesce in Chromium: each caller's body is its own (abort, bodyTimeoutMs, cancel)", fullOnly(), async () => {
  const id = uid("coalesce-bodies-chromium");
  const r = await runCase("coalesceBodies", id);
  assert.deepEqual(r, {
    lone: "left the page", cut: "TimeoutError", otherUsed: false, other: "chunk 0\nchunk 1\nchunk 2\n",
    cancel: "settled", whole: 100000,
  });
  assert.equal((await waitLog(ORIGIN_A, `${id}-lone`, (l) => l[0]?.closedEarly === true))[0]?.closedEarly, true);
});

test("hedge in Chromium: the hedge answers a slow GET, the first attempt's connection is closed", fullOnly(), async () => {
  const id = uid("hedge-chromium");
  const r = await runCase("hedge", id);
  assert.equal(r.text, "tail");
  assert.ok(r.ms < 1000, `answered after ${Math.round(r.ms)} ms`);
  assert.deepEqual([r.stats.hedges, r.stats.hedgeWins, r.stats.inFlight], [1, 1, 0]);
  const log = await waitLog(ORIGIN_A, id, (l) => l[0]?.closedEarly === true);
  assert.equal(log[0]?.closedEarly, true, JSON.stringify(log));
});

test("a signal of another realm (an iframe's) aborts the call in flight at once, as the caller's own", async () => {
  const id = uid("realm-chromium");
  const r = await runCase("otherRealm", id);
  assert.deepEqual([r.r.ok, r.r.name], [false, "AbortError"], JSON.stringify(r));
  // At once: the hanging request never answers, so only the abort can end the call.
  assert.ok(r.ms >= 0 && r.ms < 1000, `rejected ${Math.round(r.ms)} ms after the abort`);
  assert.equal(r.state, "closed");
  assert.deepEqual([r.stats.attempts, r.stats.retries, r.stats.failures], [1, 0, 0]);
  const log = await waitLog(ORIGIN_A, id, (l) => l[0]?.closedEarly === true);
  assert.equal(log.length, 1);
});

test("in Node (no CORS) a cross-origin POST carries a key as before", async () => {
  const id = uid("strict-cors-node");
  const res = await new ResilientClient().fetch(`${ORIGIN_A}/strict-cors?id=${id}`, { method: "POST", body: "x" });
  assert.equal(res.status, 201);
  const [entry] = await logOf(ORIGIN_A, id);
  assert.match(entry?.key ?? "", UUID_V4);
});
