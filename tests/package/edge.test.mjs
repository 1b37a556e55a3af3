// builds: full (a capability of resilient-fetch/full: tests/package/run.mjs)
// The edge fleet: shared origin health and the outbox across the isolates of a Cloudflare
// Worker, over Durable Objects, in the real runtime: workerd, with one service per isolate
// (each its own globals), one Durable Object namespace per class, the package bundled as
// wrangler bundles it, and the fault server on 127.0.0.1. Every call is a request of its own
// to an isolate (Workers forbid I/O objects across requests).
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import * as runtime from "./workerd.mjs";
import { ORIGIN_A, SCRATCH, serverLog, sleep, uid } from "./helpers.mjs";
import { checkFleet, fleetVerdict } from "./share-tab.mjs";

const TOOLS_BIN = path.join(process.env.RF_TOOLS_DIR, "node_modules", ".bin");

// One module for every service: an isolate's client is made at module load (the README's
// Worker), from `env` (cloudflare:workers); MODE says which client the service has.
export const WORKER = `
import { env } from "cloudflare:workers";
import { DurableObject } from "cloudflare:workers";
import { ResilientClient, OriginHealth, DurableOutbox, durableOutbox } from "resilient-fetch";
export { OriginHealth, DurableOutbox };

/** An object that fails every exchange, and one that never answers: the object unreachable. */
export class FailingHealth extends DurableObject { exchange() { throw new Error("down"); } }
export class HangingHealth extends DurableObject { exchange() { return new Promise(() => {}); } }
/** OriginHealth, counting the exchanges it answers (what the fleet costs the object). */
export class CountingHealth extends OriginHealth {
  exchange(batch) { this.exchanges = (this.exchanges ?? 0) + 1; return super.exchange(batch); }
  count() { return this.exchanges ?? 0; }
}

const moves = [];
const share = env.RF_HEALTH ? { share: { name: env.SHARE_NAME, durableObject: env.RF_HEALTH } } : {};
const client = new ResilientClient({
  ...share,
  retry: false,
  timeoutMs: 2000,
  breaker: { mode: "consecutive", failureThreshold: 5, cooldownMs: Number(env.COOLDOWN_MS ?? 1000) },
  onEvent: (e) => { if (e.type === "breakerTransition") moves.push({ to: e.to, at: Date.now() }); },
});
const outbox = env.RF_OUTBOX && new ResilientClient({
  retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 },
  breaker: false,
  outbox: { name: env.OUTBOX_NAME, store: durableOutbox(env.RF_OUTBOX) },
});

export default {
  async fetch(request) {
    const url = new URL(request.url), q = url.searchParams;
    if (url.pathname === "/call") {
      const started = performance.now();
      const outcome = await client.fetch(q.get("url")).then(async (r) => { await r.text(); return r.status; }, (e) => e.name);
      return Response.json({ outcome, ms: performance.now() - started });
    }
    if (url.pathname === "/report") return Response.json({ moves, state: client.breakerState(q.get("url")) });
    if (url.pathname === "/keep") {
      const outcome = await outbox.fetch(q.get("url"), {
        method: "POST", body: q.get("body"), headers: { authorization: "Bearer s3cr3t", "content-type": "text/plain" },
      }).then((r) => ({ status: r.status }), (e) => ({ error: e.name, id: e.id, reason: e.reason }));
      return Response.json(outcome);
    }
    if (url.pathname === "/outbox") return Response.json(await outbox.outbox.list());
    if (url.pathname === "/dead") return Response.json(await outbox.outbox.deadLetters());
    if (url.pathname === "/exchanges") return Response.json(await env.RF_HEALTH.get(env.RF_HEALTH.idFromName(q.get("name"))).count());
    if (url.pathname === "/exchange") {
      // Straight to the object, as anything that can reach it could.
      const stub = env.RF_HEALTH.get(env.RF_HEALTH.idFromName(q.get("name")));
      return Response.json(await stub.exchange(JSON.parse(q.get("batch"))));
    }
    return new Response("not found", { status: 404 });
  },
};
`;

/** Bundles WORKER into `dir` as wrangler would, from the packed package installed in SCRATCH. */
const bundle = (dir) => runtime.bundle({ source: WORKER, project: SCRATCH, out: dir, bin: TOOLS_BIN });

/** `isolates` served by workerd in `dir` (workerd.mjs): { ports, stop(), logs() }. */
const serve = (dir, isolates, options = {}) => runtime.serve(dir, isolates, { ...options, bin: TOOLS_BIN,
  classes: ["OriginHealth", "DurableOutbox", "FailingHealth", "HangingHealth", "CountingHealth"] });

/** One call through isolate `port`: { outcome (a status or an error's name), ms (in the isolate) }. */
async function call(port, url) {
  const res = await fetch(`http://127.0.0.1:${port}/call?url=${encodeURIComponent(url)}`);
  return res.json();
}

/**
 * Drives `services` (ports by name) through one outage of `ms` from 1.5 s on: each sends a GET
 * every `everyMs` to `urlOf(service)`, each a request of its own, none waiting for another.
 * Resolves with { from, reports: per service { moves, state, calls: [{ at, sent }] } }.
 */
async function outage(ports, services, urlOf, { ms, everyMs }) {
  const from = Date.now() + 1500, stopAt = from + ms + 1500;
  // Each call: when the driver asked (before the isolate decided), and whether it was sent.
  const drive = async (service) => {
    const pending = [];
    await sleep(from - 500 - Date.now());
    while (Date.now() < stopAt) {
      const at = Date.now();
      pending.push(call(ports[service], urlOf(service, from)).then((o) => ({ ...o, at, sent: typeof o.outcome === "number" }),
        (e) => ({ outcome: `driver: ${e.message}`, at })));
      await sleep(everyMs);
    }
    return Promise.all(pending);
  };
  const calls = await Promise.all(services.map(drive));
  const outcomes = calls.flat();
  assert.ok(outcomes.every((o) => typeof o.outcome === "number" || o.outcome === "CircuitOpenError"),
    `every call answered or was refused: ${JSON.stringify(outcomes.filter((o) => typeof o.outcome !== "number").slice(0, 5))}`);
  const reports = {};
  for (const [i, service] of services.entries()) {
    reports[service] = await (await fetch(`http://127.0.0.1:${ports[service]}/report?url=${encodeURIComponent(urlOf(service, from))}`)).json();
    reports[service].calls = calls[i].map(({ at, sent }) => ({ at, sent }));
  }
  return { from, reports };
}

// The promises (share-tab.mjs, checkFleet; docs/edge.md), read from each isolate's breaker
// events, the driver's call times and the origin's log: no isolate sends after it heard the open
// breaker but the fleet's probes, one per cooldown from each probe's answer, the leader's as soon
// as its cooldown has run; one successful probe closes every isolate. The fleet without the
// object is the control: the same check finds its isolates probing on their own. The count
// bounds are ones only broken sharing crosses, past the trip (5 isolates sharing nothing probe 5x
// one alone; over the object about 1x; the bound is 3x). The whole outage's ratio is the bench's
// (bench/share.mjs) and this test's diagnostic. The exchanges per isolate
// per second are a cost ceiling (docs/edge.md: at most 4 refreshes a second while calling through
// trouble, and a few around each told failure): a busier machine calls less, never more.
test("five isolates through a 10 s outage over one OriginHealth object: none sends after it heard the open breaker but one probe per cooldown from the last one's answer, one successful probe closes all, probing under 3x one isolate's; without it each probes on its own", { timeout: 120_000 }, async (t) => {
  const dir = path.join(SCRATCH, "edge-fleet");
  bundle(dir);
  const N = 5, cooldownMs = 1000, ms = 10_000, everyMs = 50;
  const name = uid("fleet");
  const isolates = { alone: {}, solo: {} };
  for (let i = 0; i < N; i++) {
    isolates[`shared${i}`] = { health: "CountingHealth", vars: { SHARE_NAME: name } };
    isolates[`plain${i}`] = {};
  }
  const group = (prefix) => Object.keys(isolates).filter((s) => s.replace(/\d+$/, "") === prefix);
  const workerd = await serve(dir, isolates);
  const { ports } = workerd;
  try {
    // Each isolate its own id (the origin's log of what it sent), one origin for all.
    const ids = Object.fromEntries(Object.keys(isolates).map((s) => [s, uid(`fleet-${s}`)]));
    const urlOf = (service, from) => `${ORIGIN_A}/outage?id=${ids[service]}&from=${from}&ms=${ms}`;
    // Two outages, one after the other: the fleet over the object beside one isolate alone,
    // then the fleet without it beside another.
    const withObject = await outage(ports, ["alone", ...group("shared")], urlOf, { ms, everyMs });
    // Read now: an object nobody exchanges with is evicted after a few seconds, with its memory.
    const exchanges = await (await fetch(`http://127.0.0.1:${ports.shared0}/exchanges?name=${name}`)).json();
    const seen = await (await fetch(`http://127.0.0.1:${ports.shared0}/exchange?name=${name}&batch=${encodeURIComponent(JSON.stringify({ cursor: 1, notes: [] }))}`)).text();
    const without = await outage(ports, ["solo", ...group("plain")], urlOf, { ms, everyMs });
    const fleet = async (run, services) => fleetVerdict({ from: run.from, ms, cooldownMs,
      members: await Promise.all(services.map(async (s) => ({ name: s, ...run.reports[s], log: await serverLog(ORIGIN_A, ids[s]) }))) });
    const verdict = await fleet(withObject, group("shared")), alone = await fleet(withObject, ["alone"]);
    const plain = await fleet(without, group("plain")), solo = await fleet(without, ["solo"]);
    const perSecond = exchanges / N / ((ms + 2000) / 1000);
    const detail = JSON.stringify({ verdict, alone, exchanges, plainCount: plain.count, soloCount: solo.count });
    const opened = verdict.per.map((m) => m.opened);
    t.diagnostic(`during the outage: ${N} isolates over the object ${verdict.count} requests, one alone ` +
      `${alone.count} (${(verdict.count / alone.count).toFixed(2)}x); ${N} without the object ${plain.count}, ` +
      `one alone ${solo.count} (${(plain.count / solo.count).toFixed(1)}x); all open ${Math.max(...opened) - Math.min(...opened)} ms ` +
      `after the first; past the first cooldown ${verdict.probing} over the object, ${alone.probing} alone, ${plain.probing} without it; ${exchanges} exchanges with the object in ${(ms + 2000) / 1000} s of calls (${perSecond.toFixed(1)} per isolate per second)`);
    assert.ok(alone.count >= 10 && solo.count >= 10, `the lone isolates saw the outage: ${detail}`);
    for (const [what, v] of [["alone", alone], ["solo", solo], ["over the object", verdict]]) {
      checkFleet({ assert, diagnostic: (m) => t.diagnostic(`${what}: ${m}`), verdict: v, cooldownMs, detail });
    }
    // The control: without the object each isolate opens and probes on its own, which the
    // same check refuses (so it can fail), and costs about N times one alone.
    assert.throws(() => checkFleet({ assert, verdict: plain, cooldownMs, detail: "" }), /one probe per cooldown|no member sent/,
      `the isolates without the object probed on their own: ${JSON.stringify(plain.probes.map((p) => [p.member, p.t]))}`);
    // Past the trip (which lasts as long as notes take to cross), what a fleet sends is its
    // probing: over the object under 3x one alone's, without it about N times.
    assert.ok(plain.probing >= 3 * solo.probing, `without the object, about ${N}x: ${plain.probing} vs ${solo.probing} past the first cooldown: ${detail}`);
    assert.ok(verdict.probing < 3 * alone.probing, `over the object ${verdict.probing} vs alone ${alone.probing} past the first cooldown (without it ${N}x): ${detail}`);
    assert.ok(exchanges > 0 && perSecond <= 6, `${perSecond} exchanges per isolate per second: ${detail}`);
    for (const s of group("shared")) assert.equal(withObject.reports[s].state, "closed", `${s}: ${detail}`);
    // What the object holds and answers: origins, states, times and ranks, never a path or query.
    assert.ok(seen.includes(ORIGIN_A) && !seen.includes("outage") && !seen.includes(ids.shared0), seen);
  } finally {
    await workerd.stop();
  }
});

const ledger = async (url) => (await fetch(url)).json();

test("keyed POSTs two isolates kept while the origin is down are delivered once, in order, by the object's alarm when it is back (no request to any isolate, after workerd restarted); a refused one is a dead letter", { timeout: 60_000 }, async () => {
  const dir = path.join(SCRATCH, "edge-outbox");
  bundle(dir);
  const disk = path.join(dir, "disk");
  fs.mkdirSync(disk, { recursive: true });
  const id = uid("edge-ledger"), url = `${ORIGIN_A}/ledger?id=${id}`, refusing = `${url}&refuse=bad`;
  await fetch(`${url}&down=1`, { method: "PUT" });
  // Two isolates keep into one outbox name: one object, one replayer.
  const orders = { outbox: "DurableOutbox", vars: { OUTBOX_NAME: uid("orders") } };
  const isolates = { keeper: orders, other: orders };
  let workerd = await serve(dir, isolates, { disk });
  let { ports } = workerd;
  let kept, all;
  try {
    // Three writes, one after the other: the second is one the server will refuse for good.
    const keep = async (service, body) =>
      (await fetch(`http://127.0.0.1:${ports[service]}/keep?url=${encodeURIComponent(refusing)}&body=${body}`)).json();
    all = [await keep("keeper", "order-1"), await keep("other", "order-bad"), await keep("keeper", "order-2")];
    for (const k of all) assert.equal(k.error, "QueuedError", JSON.stringify(k));
    kept = all[0];
    const listed = await (await fetch(`http://127.0.0.1:${ports.keeper}/outbox`)).json();
    assert.deepEqual(listed.map((e) => e.idempotencyKey).sort(), all.map((k) => k.id).sort(), "kept in the object's storage, listed by the isolate");
    assert.ok(!listed[0].headers.some(([name]) => name === "authorization"), JSON.stringify(listed[0].headers));
    assert.equal((await ledger(url)).order.length, 0, "nothing applied while down");
  } finally {
    await workerd.stop(); // the isolate that kept it, and every other, gone at once
  }
  // The origin is back while nothing runs; workerd starts again and no request reaches it.
  await fetch(`${url}&down=0`, { method: "PUT" });
  workerd = await serve(dir, isolates, { disk, probe: false });
  ({ ports } = workerd);
  try {
    let seen;
    for (let i = 0; i < 100 && !seen?.keys[kept.id]; i++) {
      await sleep(100);
      seen = await ledger(url);
    }
    assert.ok(seen?.keys[kept.id], `delivered after the restart: ${JSON.stringify(seen)}\n${workerd.logs()}`);
    // The rest of the replay (the refused one, then order-2): waited for, not slept on (at most 10 s).
    for (let i = 0; i < 100 && !(seen.order.length >= 2 && seen.refused.length >= 1); i++) {
      await sleep(100);
      seen = await ledger(url);
    }
    assert.deepEqual(seen.order, ["order-1", "order-2"], "in the order they were kept");
    assert.deepEqual(seen.refused, ["order-bad"]);
    assert.equal(seen.keys[kept.id].answers, 1, "exactly once");
    const posts = (await serverLog(ORIGIN_A, id)).filter((e) => e.method === "POST");
    const keys = new Set(all.map((k) => k.id));
    assert.ok(keys.size === 3 && posts.every((e) => keys.has(e.key)), "each with its own key, the one it was kept with");
    assert.equal(seen.keys[all[2].id].answers, 1, "exactly once");
    const delivered = posts.find((e) => e.status === 201);
    assert.ok(!delivered.headers.includes("authorization"), `never stored, so never replayed: ${delivered.headers}`);
    // Now a request: the refused one is a dead letter, as the isolate's client.outbox shows.
    const dead = await (await fetch(`http://127.0.0.1:${ports.keeper}/dead`)).json();
    assert.deepEqual(dead.map((e) => [e.deadLetter.reason, e.deadLetter.status]), [["status", 422]]);
    assert.deepEqual(await (await fetch(`http://127.0.0.1:${ports.keeper}/outbox`)).json(), [], "nothing waits");
  } finally {
    await workerd.stop();
  }
});

test("a write kept while the object's alarm replays another is delivered by a later alarm, with no request to any isolate", { timeout: 60_000 }, async () => {
  const dir = path.join(SCRATCH, "edge-during");
  bundle(dir);
  const first = `${ORIGIN_A}/ledger?id=${uid("edge-first")}`, second = `${ORIGIN_A}/ledger?id=${uid("edge-second")}`;
  await fetch(`${first}&down=1`, { method: "PUT" });
  await fetch(`${second}&down=1`, { method: "PUT" });
  const orders = { outbox: "DurableOutbox", vars: { OUTBOX_NAME: uid("orders") } };
  const workerd = await serve(dir, { keeper: orders });
  const { ports } = workerd;
  const keep = async (url, body) =>
    (await fetch(`http://127.0.0.1:${ports.keeper}/keep?url=${encodeURIComponent(url)}&body=${body}`)).json();
  try {
    assert.equal((await keep(first, "one")).error, "QueuedError");
    // The first origin is back but slow: the alarm's replay of "one" takes 2 s.
    await fetch(`${first}&down=0&delayMs=2000`, { method: "PUT" });
    let seen;
    for (let i = 0; i < 60 && !(await serverLog(ORIGIN_A, new URL(first).searchParams.get("id"))).some((e) => e.method === "POST" && e.status !== 503); i++) await sleep(100);
    // While that replay waits for its answer, another write is kept.
    assert.equal((await keep(second, "two")).error, "QueuedError");
    for (let i = 0; i < 40 && !(seen = await ledger(first)).order.length; i++) await sleep(100);
    assert.deepEqual(seen.order, ["one"]);
    // No request reaches the isolate from here: the object's alarm alone delivers "two".
    await fetch(`${second}&down=0`, { method: "PUT" });
    for (let i = 0; i < 150 && !(seen = await ledger(second)).order.length; i++) await sleep(100);
    assert.deepEqual(seen.order, ["two"], `the write kept during the replay was left with no alarm\n${workerd.logs()}`);
  } finally {
    await workerd.stop();
  }
});

test("the object failing or hanging: calls go exactly as without sharing, and none waits for it", { timeout: 60_000 }, async () => {
  const dir = path.join(SCRATCH, "edge-unreachable");
  bundle(dir);
  const vars = { SHARE_NAME: uid("unreachable") };
  const services = { plain: {}, failing: { health: "FailingHealth", vars }, hanging: { health: "HangingHealth", vars } };
  const workerd = await serve(dir, services);
  const { ports } = workerd;
  try {
    const runs = Object.fromEntries(Object.keys(services).map((s) => [s, { outcomes: [], ms: [] }]));
    const ids = Object.fromEntries(Object.keys(services).map((s) => [s, uid(`unreachable-${s}`)]));
    // Healthy calls, then an origin that is down (its breaker opens after 5), one call per request.
    for (let i = 0; i < 20; i++) {
      for (const service of Object.keys(services)) {
        const target = i < 5 ? `${ORIGIN_A}/ok` : `${ORIGIN_A}/outage?id=${ids[service]}&from=0&ms=${1e13}`;
        const started = performance.now();
        const { outcome } = await call(ports[service], target);
        runs[service].ms.push(performance.now() - started);
        runs[service].outcomes.push(outcome);
      }
    }
    assert.deepEqual(runs.plain.outcomes, [...Array(5).fill(200), ...Array(5).fill(503), ...Array(10).fill("CircuitOpenError")]);
    for (const service of ["failing", "hanging"]) {
      assert.deepEqual(runs[service].outcomes, runs.plain.outcomes, service);
      // None waits for the object: an exchange that hangs counts as failed after 2 s, so a call
      // that waited for it would take at least that long; one that did not takes what a call
      // takes (an isolate's first call once took 1.3 s on a loaded machine, with the failing
      // object, which answers at once). The bound is the one only waiting crosses.
      assert.ok(Math.max(...runs[service].ms) < 2000, `${service}: ${runs[service].ms.map(Math.round)}`);
    }
  } finally {
    await workerd.stop();
  }
});

test("a client made at module load says hello with its first call: an isolate that starts during an outage learns the open breaker from it", { timeout: 60_000 }, async () => {
  const dir = path.join(SCRATCH, "edge-hello");
  bundle(dir);
  const vars = { SHARE_NAME: uid("hello"), COOLDOWN_MS: "30000" };
  // No request reaches an isolate before the test's own (probe: false): each client's hello
  // was posted at module load, where a Worker can do no I/O.
  const workerd = await serve(dir, { early: { health: "OriginHealth", vars }, late: { health: "OriginHealth", vars } }, { probe: false });
  const { ports } = workerd;
  try {
    const failing = `${ORIGIN_A}/status?id=${uid("hello-down")}&code=503`;
    for (let i = 0; i < 5; i++) assert.equal((await call(ports.early, failing)).outcome, 503);
    const early = await (await fetch(`http://127.0.0.1:${ports.early}/report?url=${encodeURIComponent(failing)}`)).json();
    assert.equal(early.state, "open", JSON.stringify(early));
    await sleep(300); // its opening reaches the object in the background
    // The late isolate's first call decides from what it knows (nothing yet) and says hello;
    // the object's answer holds the opening, so its next call is refused without sending.
    const ok = `${ORIGIN_A}/ok?id=${uid("hello-late")}`;
    assert.equal((await call(ports.late, ok)).outcome, 200);
    let second;
    for (let i = 0; i < 20 && second !== "CircuitOpenError"; i++) {
      await sleep(100);
      second = (await call(ports.late, ok)).outcome;
    }
    assert.equal(second, "CircuitOpenError", `the late isolate learnt nothing from its hello\n${workerd.logs()}`);
  } finally {
    await workerd.stop();
  }
});

test("junk and notes of another version sent to the object are dropped", { timeout: 60_000 }, async () => {
  const dir = path.join(SCRATCH, "edge-junk");
  bundle(dir);
  const name = uid("junk");
  const workerd = await serve(dir, { probe: { health: "OriginHealth", vars: { SHARE_NAME: name } } });
  const { ports } = workerd;
  const exchange = async (batch) => {
    const res = await fetch(`http://127.0.0.1:${ports.probe}/exchange?name=${name}&batch=${encodeURIComponent(JSON.stringify(batch))}`);
    assert.equal(res.status, 200, `${JSON.stringify(batch)}: ${await res.clone().text()}`);
    return res.json();
  };
  try {
    for (const batch of ["x", null, 7, [], { notes: "x" }, { cursor: -5, notes: [[1, 3]] }, { cursor: "a", notes: null }]) {
      assert.deepEqual((await exchange(batch)).notes, [], JSON.stringify(batch));
    }
    const until = Date.now() + 60_000;
    const { cursor } = await exchange({ cursor: 0, notes: [
      [2, 3, ORIGIN_A, until, 1], [0, 3, ORIGIN_A, until, 1], [1, 3, `${ORIGIN_A}/path`, until, 1],
      [1, 3, `${ORIGIN_A}/?q=1`, until, 1], [1, 3, "not an origin", until, 1], [1, 3, ORIGIN_A.toUpperCase(), until, 1],
      [1, 3, "ftp://127.0.0.1", until, 1], [1, 3, "http://user:pw@127.0.0.1", until, 1], [1, 9, ORIGIN_A, until, 1],
      [1, 3, ORIGIN_A, null, 1], [1, 3, ORIGIN_A, until, -1], [1, 3, ORIGIN_A, until, 2 ** 32], [1, 3.5, ORIGIN_A, until, 1],
      [1, 3, ORIGIN_A, until], [1, 3, ORIGIN_A, until, 1, 0], [1, 0, ORIGIN_A, 0, 0], { kind: 3 }, "open", null,
      // The one well-formed note, last.
      [1, 3, ORIGIN_A, until, 7],
    ] });
    // A client that starts is told what is open: that note alone; a peer at the cursor before it, that note.
    assert.deepEqual((await exchange({ cursor: 0, notes: [[1, 0, "", 0, 0]] })).notes, [[1, 3, ORIGIN_A, until, 7]]);
    assert.deepEqual((await exchange({ cursor: cursor - 1, notes: [] })).notes, [[1, 3, ORIGIN_A, until, 7]]);
    assert.deepEqual((await exchange({ cursor, notes: [] })).notes, []);
    // Bounded: 1 100 more origins, each open; the object keeps the 1 000 it heard of last.
    for (let i = 0; i < 1100; i += 50) {
      await exchange({ cursor: 0, notes: Array.from({ length: 50 }, (_, j) => [1, 3, `http://127.0.0.1:${20000 + i + j}`, until, 1]) });
    }
    const kept = (await exchange({ cursor: 0, notes: [] })).notes.map((n) => n[2]);
    assert.equal(kept.length, 1000);
    assert.ok(!kept.includes(ORIGIN_A) && !kept.includes("http://127.0.0.1:20099") && kept.includes("http://127.0.0.1:20100") &&
      kept.includes("http://127.0.0.1:21099"), "the least recently heard went");
  } finally {
    await workerd.stop();
  }
});
