// builds: full (a capability of resilient-fetch/full: tests/package/run.mjs)
// The outbox (policy `outbox`): a keyed write that got no definite answer is kept before its
// call settles, and delivered later with the same key, exactly once per key at an idempotent
// server (the fault server's /ledger), through the package used by name on 127.0.0.1.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import { ORIGIN_A, ORIGIN_B, SCRATCH, errorOf, sleep, uid, within } from "./helpers.mjs";
import { QueuedError, ResilientClient, TimeoutError, resilientFetch } from "resilient-fetch";

const FAST = { retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 }, breaker: false, timeoutMs: 2000 };

// A replay on the client's own timer (0.5 s after a call is kept, at the earliest) may deliver
// before an explicit flush() does: assertions are on what the server and the store hold after
// it, and a flush's tally on what no other replay could have changed.
/** The tally of a flush: `{ delivered, deadLettered, waiting }`, none more than `most`. */
function assertTally(tally, most) {
  assert.deepEqual(Object.keys(tally), ["delivered", "deadLettered", "waiting"]);
  for (const [k, n] of Object.entries(tally)) assert.ok(Number.isInteger(n) && n >= 0 && n <= most[k], `${k}: ${n}`);
}

const ledger = async (origin, id) => (await fetch(`${origin}/ledger?id=${id}`)).json();
const setDown = (origin, id, down, drop = false) =>
  fetch(`${origin}/ledger?id=${id}&down=${down ? 1 : 0}&drop=${drop ? 1 : 0}`, { method: "PUT" });

/** A store in a plain Map that counts its calls (what a user's adapter looks like). */
function mapStore() {
  const entries = new Map();
  const calls = [];
  return {
    entries,
    calls,
    async put(entry) { calls.push("put"); entries.set(entry.id, structuredClone(entry)); },
    async delete(id) { calls.push("delete"); entries.delete(id); },
    async list() { calls.push("list"); return [...entries.values()].map((e) => structuredClone(e)); },
  };
}

test("a POST to a down origin is kept before the call settles, and the error says so with its id and key", async () => {
  const id = uid("outbox"), store = mapStore(), events = [];
  await setDown(ORIGIN_A, id, true);
  const client = new ResilientClient({ ...FAST, outbox: { name: id, store }, onEvent: (e) => events.push(e) });
  const error = await errorOf(client.fetch(`${ORIGIN_A}/ledger?id=${id}`, {
    method: "POST", body: "order-1", headers: { authorization: "Bearer secret", "x-trace": "t1" } }));
  assert.ok(error instanceof QueuedError, String(error));
  assert.equal(error.name, "QueuedError");
  assert.equal(error.reason, "status");
  assert.equal(error.response.status, 503, "the last answer rides along");
  assert.match(error.idempotencyKey, /^[0-9a-f-]{36}$/);
  assert.equal(error.id, error.idempotencyKey);
  // Stored before the call settled: the entry is there now, without the credentials.
  const [entry] = [...store.entries.values()];
  assert.equal(entry.id, error.id);
  assert.equal(entry.method, "POST");
  assert.equal(entry.url, `${ORIGIN_A}/ledger?id=${id}`);
  assert.equal(new TextDecoder().decode(entry.body), "order-1");
  assert.equal(entry.attempts, 2);
  assert.equal(entry.reason, "status");
  const headers = new Map(entry.headers);
  assert.equal(headers.get("idempotency-key"), error.idempotencyKey);
  assert.equal(headers.get("x-trace"), "t1");
  assert.ok(!headers.has("authorization"), "credentials are never stored");
  assert.deepEqual((await client.outbox.list()).map((e) => e.id), [error.id]);
  const queued = events.find((e) => e.type === "queued");
  assert.deepEqual({ ...queued }, { type: "queued", origin: ORIGIN_A, idempotencyKey: error.id, id: error.id, reason: "status" });
  // Back up: flush delivers it once, with the same key, and the entry leaves.
  await setDown(ORIGIN_A, id, false);
  assertTally(await client.outbox.flush(), { delivered: 1, deadLettered: 0, waiting: 0 });
  const seen = await ledger(ORIGIN_A, id);
  assert.deepEqual(Object.keys(seen.keys), [error.idempotencyKey]);
  assert.equal(seen.keys[error.idempotencyKey].answers, 1);
  assert.deepEqual(seen.order, ["order-1"]);
  assert.equal(store.entries.size, 0);
  assert.deepEqual(events.filter((e) => e.type !== "queued" && ["replayed", "delivered"].includes(e.type))
    .map((e) => [e.type, e.id, e.attempt ?? e.status]), [["replayed", error.id, 3], ["delivered", error.id, 201]]);
  client.free();
});

test("what is kept: network errors, timeouts, an open breaker; not a 4xx, an abort, a GET or a call without a key", async () => {
  const id = uid("outbox"), store = mapStore();
  const client = new ResilientClient({ ...FAST, timeoutMs: 100, outbox: { name: id, store } });
  await setDown(ORIGIN_A, id, true, true);
  const dropped = await errorOf(client.fetch(`${ORIGIN_A}/ledger?id=${id}`, { method: "POST", body: "a" }));
  assert.equal(dropped.reason, "network");
  assert.ok(dropped.cause instanceof TypeError, "the network error is its cause");
  const slow = await errorOf(client.fetch(`${ORIGIN_A}/hang?id=${id}`, { method: "PATCH", body: "b" }));
  assert.equal(slow.reason, "timeout");
  assert.ok(slow.cause instanceof TimeoutError);
  const breaker = new ResilientClient({ ...FAST, breaker: { mode: "consecutive", failureThreshold: 1 },
    outbox: { name: id, store } });
  await errorOf(breaker.fetch(`${ORIGIN_A}/ledger?id=${id}`, { method: "POST", body: "c" }));
  const open = await errorOf(breaker.fetch(`${ORIGIN_A}/ledger?id=${id}`, { method: "POST", body: "d" }));
  assert.equal(open.reason, "breakerOpen");
  assert.equal(open.cause.name, "CircuitOpenError");
  assert.equal(store.entries.size, 4);
  // Not kept: a definite answer, a GET, no key, the caller's abort.
  assert.equal((await client.fetch(`${ORIGIN_A}/status?code=404&id=${id}`, { method: "POST" })).status, 404);
  assert.equal((await client.fetch(`${ORIGIN_A}/status?code=503&id=${id}`)).status, 503);
  const unkeyed = await client.fetch(`${ORIGIN_A}/status?code=503&id=${id}`, { method: "POST" }, { idempotencyKey: false });
  assert.equal(unkeyed.status, 503);
  const controller = new AbortController();
  const aborted = client.fetch(`${ORIGIN_A}/hang?id=${id}`, { method: "POST", signal: controller.signal });
  setTimeout(() => controller.abort(), 20);
  assert.equal((await errorOf(aborted)).name, "AbortError");
  assert.equal(store.entries.size, 4);
  client.free();
  breaker.free();
});

test("a stream body, a body over maxBodyBytes and a full outbox are not kept, and the error says why", async () => {
  const id = uid("outbox"), store = mapStore();
  await setDown(ORIGIN_A, id, true, true);
  const client = new ResilientClient({ ...FAST, outbox: { name: id, store, maxBodyBytes: 10, maxEntries: 1 } });
  const url = `${ORIGIN_A}/ledger?id=${id}`;
  const big = await errorOf(client.fetch(url, { method: "POST", body: "x".repeat(11) }));
  assert.ok(!(big instanceof QueuedError));
  assert.match(big.notQueued, /body \(11 bytes\) is larger than outbox.maxBodyBytes \(10\)/);
  const stream = new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode("s")); c.close(); } });
  const streamed = await errorOf(client.fetch(url, { method: "POST", body: stream, duplex: "half" }));
  assert.match(streamed.notQueued, /stream/);
  assert.ok((await errorOf(client.fetch(url, { method: "POST", body: "one" }))) instanceof QueuedError);
  const full = await errorOf(client.fetch(url, { method: "POST", body: "two" }));
  assert.match(full.notQueued, /the outbox is full \(outbox.maxEntries: 1\)/);
  assert.equal(store.entries.size, 1);
  client.free();
});

test("replay: oldest first per origin, 409 waits, 422 is a dead letter, the rest of the origin waits behind", async () => {
  const id = uid("outbox"), store = mapStore(), events = [];
  await setDown(ORIGIN_A, id, true);
  await setDown(ORIGIN_B, id, true);
  const client = new ResilientClient({ ...FAST, outbox: { name: id, store }, onEvent: (e) => events.push(e) });
  const post = (origin, body, q = "") => errorOf(client.fetch(`${origin}/ledger?id=${id}${q}`, { method: "POST", body }));
  const kept = [];
  for (const body of ["a1", "a2", "a3"]) kept.push(await post(ORIGIN_A, body));
  kept.push(await post(ORIGIN_B, "b1", "&refuse=b1"));
  kept.push(await post(ORIGIN_B, "b2"));
  assert.ok(kept.every((e) => e instanceof QueuedError));
  await setDown(ORIGIN_A, id, false);
  await setDown(ORIGIN_B, id, false);
  assertTally(await client.outbox.flush(), { delivered: 4, deadLettered: 1, waiting: 0 });
  assert.deepEqual((await ledger(ORIGIN_A, id)).order, ["a1", "a2", "a3"]);
  assert.deepEqual((await ledger(ORIGIN_B, id)).order, ["b2"]);
  const [dead] = await client.outbox.deadLetters();
  assert.equal(dead.id, kept[3].id);
  assert.deepEqual({ reason: dead.deadLetter.reason, status: dead.deadLetter.status }, { reason: "status", status: 422 });
  assert.deepEqual(events.filter((e) => e.type === "deadLettered").map((e) => [e.id, e.status, e.reason]),
    [[kept[3].id, 422, "status"]]);
  assert.deepEqual(await client.outbox.list(), []);
  // discard removes a dead letter; retry of an unknown id says false.
  assert.equal(await client.outbox.discard(dead.id), true);
  assert.equal(await client.outbox.discard(dead.id), false);
  assert.equal(await client.outbox.retry("no-such-id"), false);
  client.free();
});

test("calls kept one after another within a millisecond replay in that order; a request kept again keeps its place", async () => {
  const id = uid("outbox"), store = mapStore();
  await setDown(ORIGIN_A, id, true, true);
  // The first call fails and opens the breaker: the next ones are refused (and kept) within
  // microseconds of each other, many in one millisecond of the wall clock.
  const client = new ResilientClient({ retry: false, timeoutMs: 2000,
    breaker: { mode: "consecutive", failureThreshold: 1, cooldownMs: 60_000 }, outbox: { name: id, store } });
  const url = `${ORIGIN_A}/ledger?id=${id}`;
  const bodies = Array.from({ length: 30 }, (_, i) => `c${i}`);
  const reasons = [];
  for (const body of bodies) reasons.push((await errorOf(client.fetch(url, { method: "POST", body }))).reason);
  assert.deepEqual([reasons[0], ...new Set(reasons.slice(1))], ["network", "breakerOpen"]);
  // The first request kept again (a caller's own retry with its key): it keeps its place.
  const [first] = [...store.entries.values()].filter((e) => new TextDecoder().decode(e.body) === "c0");
  const again = await errorOf(client.fetch(url, { method: "POST", body: "c0" }, { idempotencyKey: first.idempotencyKey }));
  assert.ok(again instanceof QueuedError, String(again));
  const entry = store.entries.get(first.id);
  assert.equal(entry.firstAttemptAt, first.firstAttemptAt, "its place in the order");
  assert.equal(entry.attempts, 1, "c0's attempt, and none of the refused call's");
  await setDown(ORIGIN_A, id, false);
  client.reset(ORIGIN_A);
  assertTally(await client.outbox.flush(), { delivered: 30, deadLettered: 0, waiting: 0 });
  assert.deepEqual((await ledger(ORIGIN_A, id)).order, bodies);
  client.free();
});

test("calls that read one start time (a coarse clock) are kept in the order they came; a place that expired is not kept", async () => {
  const id = uid("outbox"), store = mapStore();
  await setDown(ORIGIN_A, id, true, true);
  const client = new ResilientClient({ retry: false, timeoutMs: 2000, outbox: { name: id, store, maxAgeMs: 60_000 },
    breaker: { mode: "consecutive", failureThreshold: 1, cooldownMs: 60_000 } });
  const url = `${ORIGIN_A}/ledger?id=${id}`;
  assert.ok((await errorOf(client.fetch(url, { method: "POST", body: "t0" }))) instanceof QueuedError);
  // The breaker is open: the next calls are refused without a timer, each reading the clock,
  // which says the same for all of them (a browser's clock is coarse: 100 µs to 1 ms).
  const now = performance.now();
  const frozen = now + 1;
  performance.now = () => frozen;
  const bodies = ["t1", "t2", "t3", "t4", "t5", "t6"];
  try {
    for (const body of bodies) assert.ok((await errorOf(client.fetch(url, { method: "POST", body }))) instanceof QueuedError);
  } finally {
    delete performance.now;
  }
  assert.equal(typeof performance.now(), "number");
  const times = [...store.entries.values()].map((e) => e.firstAttemptAt);
  assert.equal(new Set(times).size, times.length, "every kept call has a time of its own");
  // A request whose entry expired, sent again with its key, is kept anew, from now.
  const [first] = [...store.entries.values()];
  first.firstAttemptAt -= 120_000;
  const again = await errorOf(client.fetch(url, { method: "POST", body: "t0" }, { idempotencyKey: first.idempotencyKey }));
  assert.ok(again instanceof QueuedError, String(again));
  assert.ok(Date.now() - store.entries.get(first.id).firstAttemptAt < 10_000, "a new life, not the expired place");
  await setDown(ORIGIN_A, id, false);
  client.reset(ORIGIN_A);
  assertTally(await client.outbox.flush(), { delivered: 7, deadLettered: 0, waiting: 0 });
  assert.deepEqual((await ledger(ORIGIN_A, id)).order, [...bodies, "t0"]);
  client.free();
});

test("two calls that read one start time keep the order they were made in, not the order they were kept in", async () => {
  const id = uid("outbox"), store = mapStore();
  await setDown(ORIGIN_A, id, true, true);
  const client = new ResilientClient({ retry: false, timeoutMs: 300, breaker: false, outbox: { name: id, store } });
  const frozen = performance.now();
  performance.now = () => frozen;
  let slow, fast;
  try {
    slow = errorOf(client.fetch(`${ORIGIN_A}/hang?id=${id}`, { method: "POST", body: "made first" })); // kept after 300 ms
    fast = errorOf(client.fetch(`${ORIGIN_A}/ledger?id=${id}`, { method: "POST", body: "made second" })); // kept at once
  } finally {
    delete performance.now;
  }
  const [a, b] = [await slow, await fast];
  assert.deepEqual([a.reason, b.reason], ["timeout", "network"]);
  const at = (e) => store.entries.get(e.id).firstAttemptAt;
  assert.ok(at(a) < at(b), `${at(a)} < ${at(b)}`);
  client.free();
});

test("a dead letter stays a dead letter when a new call with its key is not answered", async () => {
  const id = uid("outbox"), store = mapStore();
  await setDown(ORIGIN_A, id, true, true);
  const client = new ResilientClient({ ...FAST, outbox: { name: id, store } });
  const url = `${ORIGIN_A}/ledger?id=${id}&refuse=d1`;
  const kept = await errorOf(client.fetch(url, { method: "POST", body: "d1" }));
  assert.ok(kept instanceof QueuedError, String(kept));
  await setDown(ORIGIN_A, id, false);
  assertTally(await client.outbox.flush(), { delivered: 0, deadLettered: 1, waiting: 0 });
  await setDown(ORIGIN_A, id, true, true);
  const error = await errorOf(client.fetch(url, { method: "POST", body: "d1" }, { idempotencyKey: kept.idempotencyKey }));
  assert.ok(!(error instanceof QueuedError), String(error));
  assert.match(error.notQueued, new RegExp(`dead letter \\(${kept.id}\\): retry\\(id\\) or discard\\(id\\) it`));
  const [dead] = await client.outbox.deadLetters();
  assert.deepEqual([dead.id, dead.deadLetter.reason, dead.deadLetter.status], [kept.id, "status", 422]);
  assert.deepEqual(await client.outbox.list(), []);
  client.free();
});

test("an entry that must wait holds back the later ones of its origin; retry() revives a dead letter", async () => {
  const id = uid("outbox"), store = mapStore();
  await setDown(ORIGIN_A, id, true);
  const client = new ResilientClient({ ...FAST, outbox: { name: id, store } });
  const first = await errorOf(client.fetch(`${ORIGIN_A}/ledger?id=${id}`, { method: "POST", body: "p1" }));
  await errorOf(client.fetch(`${ORIGIN_A}/ledger?id=${id}`, { method: "POST", body: "p2" }));
  // Still down: the first waits, the second is not even sent.
  const before = (await (await fetch(`${ORIGIN_A}/log?id=${id}`)).json()).filter((e) => e.method === "POST").length;
  assert.deepEqual({ ...(await client.outbox.flush()) }, { delivered: 0, deadLettered: 0, waiting: 2 });
  const sent = (await (await fetch(`${ORIGIN_A}/log?id=${id}`)).json()).filter((e) => e.method === "POST").length - before;
  assert.equal(sent, 2, "the head entry's two attempts, nothing of the one behind it");
  assert.equal((await client.outbox.list()).find((e) => e.id === first.id).attempts, 3);
  // Expired entries are dead letters; retry() gives one a new life and delivers it.
  client.free();
  for (const e of store.entries.values()) e.firstAttemptAt -= 5000;
  await setDown(ORIGIN_A, id, false);
  const old = new ResilientClient({ ...FAST, outbox: { name: id, store, maxAgeMs: 1000 } });
  assertTally(await old.outbox.flush(), { delivered: 0, deadLettered: 2, waiting: 0 });
  assert.deepEqual((await old.outbox.deadLetters()).map((e) => e.deadLetter.reason), ["expired", "expired"]);
  assert.equal((await ledger(ORIGIN_A, id)).order.length, 0, "an expired entry is never sent");
  assert.equal(await old.outbox.retry(first.id), true);
  assert.deepEqual((await ledger(ORIGIN_A, id)).order, ["p1"]);
  old.free();
});

test("onReplay attaches a fresh credential; a client of the same name after a restart delivers what was kept", async () => {
  const id = uid("outbox"), store = mapStore();
  await setDown(ORIGIN_A, id, true);
  const first = new ResilientClient({ ...FAST, outbox: { name: id, store } });
  const kept = await errorOf(first.fetch(`${ORIGIN_A}/ledger?id=${id}`, {
    method: "POST", body: "with-token", headers: { authorization: "Bearer old" } }));
  assert.ok(kept instanceof QueuedError);
  first.free();
  await setDown(ORIGIN_A, id, false);
  const seen = [];
  // A new client (the page after a reload) replays on its own, soon after it starts.
  const second = new ResilientClient({ ...FAST, outbox: { name: id, store, onReplay: (request) => {
    seen.push(request.headers.get("authorization"));
    const fresh = new Request(request);
    fresh.headers.set("authorization", "Bearer fresh");
    return fresh;
  } }, onEvent: (e) => e.type === "delivered" && delivered(e) });
  let delivered;
  const done = new Promise((resolve) => { delivered = resolve; });
  // The outbox's timers never keep Node alive: this test's own deadline does.
  const event = await Promise.race([done, sleep(10_000).then(() => assert.fail("no replay 10 s after the client started"))]);
  assert.equal(event.id, kept.id);
  assert.deepEqual(seen, [null], "the stored request has no credential");
  const { keys } = await ledger(ORIGIN_A, id);
  assert.equal(keys[kept.idempotencyKey].answers, 1);
  const log = await (await fetch(`${ORIGIN_A}/log?id=${id}`)).json();
  const delivery = log.filter((e) => e.method === "POST" && e.status === 201);
  assert.equal(delivery.length, 1);
  assert.ok(delivery[0].headers.includes("authorization"), "onReplay's request was sent");
  second.free();
});

test("the built-in memory store in Node, the default client's resilientFetch is not kept, and policy errors", async () => {
  const id = uid("outbox");
  await setDown(ORIGIN_A, id, true);
  const client = new ResilientClient({ ...FAST, outbox: true });
  const kept = await errorOf(client.fetch(`${ORIGIN_A}/ledger?id=${id}`, { method: "POST", body: "m" }));
  assert.ok(kept instanceof QueuedError);
  assert.equal((await client.outbox.list()).length, 1);
  const other = new ResilientClient({ outbox: { name: "default" } });
  assert.equal((await other.outbox.list())[0].id, kept.id, "one memory store per name in a realm");
  await client.outbox.discard(kept.id);
  assert.equal(new ResilientClient().outbox, undefined);
  assert.equal((await resilientFetch(`${ORIGIN_A}/ledger?id=${id}`, { method: "POST", body: "n" }, FAST)).status, 503);
  assert.throws(() => new ResilientClient({ outbox: { maxEntries: 0 } }), /outbox.maxEntries must be an integer from 1 to 100000/);
  assert.throws(() => new ResilientClient({ outbox: { store: {} } }), /policy.outbox.store must be an object with put, delete and list methods/);
  assert.throws(() => new ResilientClient({ outbox: { onReplay: 1 } }), /policy.outbox.onReplay must be a function/);
  await assert.rejects(resilientFetch(`${ORIGIN_A}/ok`, {}, { outbox: true }), /outbox keeps a client's writes/);
  client.free();
  other.free();
});

/** The outbox page's file store (the code block after `<!-- outbox-file-store -->` in docs/outbox.md), imported. */
async function readmeFileStore() {
  const page = fs.readFileSync(new URL("./node_modules/resilient-fetch/docs/outbox.md", `file://${SCRATCH}/`), "utf8");
  const block = /<!-- outbox-file-store -->\s*```js\n([\s\S]*?)```/.exec(page);
  assert.ok(block, "docs/outbox.md shows a file store");
  const file = path.join(SCRATCH, "file-store.mjs");
  fs.writeFileSync(file, block[1]);
  return (await import(file)).fileStore;
}

test("the outbox page's file store for Node works as its OutboxStore", async () => {
  const fileStore = await readmeFileStore();
  const dir = fs.mkdtempSync(path.join(SCRATCH, "outbox-"));
  const id = uid("outbox");
  await setDown(ORIGIN_A, id, true);
  const client = new ResilientClient({ ...FAST, outbox: { name: id, store: fileStore(dir) } });
  const kept = await errorOf(client.fetch(`${ORIGIN_A}/ledger?id=${id}`, { method: "POST", body: "on-disk" }));
  assert.ok(kept instanceof QueuedError);
  client.free();
  // Another process would read it back: a new store over the same directory.
  const again = new ResilientClient({ ...FAST, outbox: { name: id, store: fileStore(dir) } });
  assert.equal(new TextDecoder().decode((await again.outbox.list())[0].body), "on-disk");
  await setDown(ORIGIN_A, id, false);
  assertTally(await again.outbox.flush(), { delivered: 1, deadLettered: 0, waiting: 0 });
  assert.deepEqual((await ledger(ORIGIN_A, id)).order, ["on-disk"]);
  assert.deepEqual(fs.readdirSync(dir), []);
  again.free();
});

test("the outbox page's file store: an entry another process delivered meanwhile is no error, a corrupt file costs itself only", async () => {
  const fileStore = await readmeFileStore();
  const dir = fs.mkdtempSync(path.join(SCRATCH, "outbox-"));
  const id = uid("outbox");
  await setDown(ORIGIN_A, id, true);
  const client = new ResilientClient({ ...FAST, outbox: { name: id, store: fileStore(dir) } });
  const url = `${ORIGIN_A}/ledger?id=${id}`;
  const kept = [];
  for (const body of ["f1", "f2", "f3"]) kept.push(await errorOf(client.fetch(url, { method: "POST", body })));
  assert.ok(kept.every((e) => e instanceof QueuedError));
  fs.writeFileSync(path.join(dir, "corrupt.json"), "{ not json");
  await setDown(ORIGIN_A, id, false);
  // Another process delivers f1: its file goes between this list()'s readdir and its readFile.
  const readdir = fsp.readdir;
  let raced = false;
  fsp.readdir = async (at, ...rest) => {
    const names = await readdir(at, ...rest);
    if (at === dir && !raced) {
      raced = true;
      fs.rmSync(path.join(dir, `${encodeURIComponent(kept[0].id)}.json`));
    }
    return names;
  };
  let tally;
  try {
    tally = await client.outbox.flush();
  } finally {
    fsp.readdir = readdir;
  }
  assert.ok(raced, "the flush's list() met the race");
  assertTally(tally, { delivered: 2, deadLettered: 0, waiting: 1 });
  assert.equal(tally.waiting, 1, "the corrupt file waits, the others go");
  assert.deepEqual((await ledger(ORIGIN_A, id)).order, ["f2", "f3"]);
  assert.deepEqual(fs.readdirSync(dir), ["corrupt.json"]);
  client.free();
});

/** Resolves once `check()` holds, polled every 20 ms; fails the test after `ms`. */
function eventually(label, ms, check) {
  return Promise.race([
    (async () => { while (!check()) await sleep(20); })(),
    sleep(ms).then(() => { if (!check()) assert.fail(`${label}: not within ${ms} ms`); }),
  ]);
}

test("a store that fails in the background does not crash the process; the replay is tried again", async () => {
  const id = uid("outbox"), store = mapStore(), events = [];
  await setDown(ORIGIN_A, id, true);
  const client = new ResilientClient({ ...FAST, outbox: { name: id, store }, onEvent: (e) => events.push(e) });
  const kept = await errorOf(client.fetch(`${ORIGIN_A}/ledger?id=${id}`, { method: "POST", body: "s1" }));
  assert.ok(kept instanceof QueuedError);
  // From now on the store's list() throws twice, then answers again.
  let failures = 0;
  const list = store.list;
  store.list = async () => {
    if (failures < 2) { failures++; throw new Error("disk unavailable"); }
    return list();
  };
  await setDown(ORIGIN_A, id, false);
  await eventually("delivered after the store came back", 15_000, () => events.some((e) => e.type === "delivered"));
  assert.equal(failures, 2);
  assert.deepEqual((await ledger(ORIGIN_A, id)).order, ["s1"]);
  client.free();
});

test("a client freed while its replay is on the wire: nothing breaks, the next client delivers", async () => {
  const id = uid("outbox"), store = mapStore();
  await setDown(ORIGIN_A, id, true);
  const first = new ResilientClient({ ...FAST, outbox: { name: id, store } });
  const kept = await errorOf(first.fetch(`${ORIGIN_A}/ledger?id=${id}`, { method: "POST", body: "f1" }));
  first.free();
  await setDown(ORIGIN_A, id, false);
  let release, entered;
  const gate = new Promise((resolve) => { release = resolve; });
  const inHook = new Promise((resolve) => { entered = resolve; });
  const second = new ResilientClient({ ...FAST, outbox: { name: id, store, onReplay: async (request) => {
    entered();
    await gate;
    return request;
  } } });
  await Promise.race([inHook, sleep(10_000).then(() => assert.fail("no replay"))]);
  const outbox = second.outbox;
  second.free(); // while its replay waits in onReplay
  release();
  await assert.rejects(outbox.flush(), /was freed/);
  const third = new ResilientClient({ ...FAST, outbox: { name: id, store } });
  await third.outbox.flush();
  const { keys } = await ledger(ORIGIN_A, id);
  assert.equal(keys[kept.idempotencyKey].answers, 1);
  assert.equal(store.entries.size, 0);
  third.free();
});

test("discard() and retry() take their turn after a replay at work, and are not undone by it", async () => {
  const id = uid("outbox"), store = mapStore();
  await setDown(ORIGIN_A, id, true);
  const client = new ResilientClient({ ...FAST, outbox: { name: id, store } });
  const kept = await errorOf(client.fetch(`${ORIGIN_A}/ledger?id=${id}`, { method: "POST", body: "d1" }));
  const replay = client.outbox.flush(); // the origin is down: the entry will wait (put back)
  const discarded = client.outbox.discard(kept.id);
  assert.deepEqual(await Promise.all([replay.then((t) => t.waiting), discarded]), [1, true]);
  assert.deepEqual(await client.outbox.list(), []);
  assert.equal(store.entries.size, 0);
  client.free();
});

test("many kept calls do not push the replays back: the next one comes within seconds", async () => {
  const id = uid("outbox"), store = mapStore(), events = [];
  await setDown(ORIGIN_A, id, true);
  const client = new ResilientClient({ ...FAST, outbox: { name: id, store }, onEvent: (e) => events.push(e) });
  const url = `${ORIGIN_A}/ledger?id=${id}`;
  for (let i = 0; i < 12; i++) await errorOf(client.fetch(url, { method: "POST", body: `m${i}` }));
  // The first timer replay meets the outage; the next (no flush) delivers all twelve.
  await eventually("a replay while down", 5_000, () => events.some((e) => e.type === "replayed"));
  await setDown(ORIGIN_A, id, false);
  await eventually("twelve delivered", 8_000, () => events.filter((e) => e.type === "delivered").length === 12);
  assert.deepEqual((await ledger(ORIGIN_A, id)).order, Array.from({ length: 12 }, (_, i) => `m${i}`));
  client.free();
});

test("maxEntries holds when kept calls overlap; a key another kept request has is not kept again", async () => {
  const id = uid("outbox"), inner = mapStore();
  const slow = (f) => async (...args) => { await sleep(30); return f(...args); };
  const store = { put: slow(inner.put), delete: slow(inner.delete), list: slow(inner.list) };
  await setDown(ORIGIN_A, id, true, true); // network errors: a call not kept rejects (a 503 would resolve)
  const client = new ResilientClient({ ...FAST, outbox: { name: id, store, maxEntries: 2 } });
  const url = `${ORIGIN_A}/ledger?id=${id}`;
  const errors = await Promise.all(Array.from({ length: 6 }, (_, i) => errorOf(client.fetch(url, { method: "POST", body: `c${i}` }))));
  assert.equal(errors.filter((e) => e instanceof QueuedError).length, 2);
  assert.equal(errors.filter((e) => /outbox is full/.test(e.notQueued)).length, 4);
  assert.equal(inner.entries.size, 2);
  const big = new ResilientClient({ ...FAST, outbox: { name: uid("outbox"), store: mapStore() } });
  const one = await errorOf(big.fetch(url, { method: "POST", body: "k" }, { idempotencyKey: "shared-key" }));
  assert.ok(one instanceof QueuedError);
  const again = await errorOf(big.fetch(url, { method: "POST", body: "k" }, { idempotencyKey: "shared-key" }));
  assert.ok(again instanceof QueuedError, "the same request again: the same entry");
  const other = await errorOf(big.fetch(`${url}&other=1`, { method: "POST", body: "k" }, { idempotencyKey: "shared-key" }));
  assert.match(other.notQueued, /another kept request \(POST .*ledger\?id=.*\) has the same idempotency key/);
  const payload = await errorOf(big.fetch(url, { method: "POST", body: "another" }, { idempotencyKey: "shared-key" }));
  assert.match(payload.notQueued, /same idempotency key and another payload/, "the first write is not replaced");
  assert.equal(new TextDecoder().decode((await big.outbox.list())[0].body), "k");
  client.free();
  big.free();
});

test("a stored request that cannot be sent any more is a dead letter (invalid), not a blocked queue", async () => {
  const id = uid("outbox"), store = mapStore(), events = [];
  await setDown(ORIGIN_A, id, true);
  const client = new ResilientClient({ ...FAST, outbox: { name: id, store }, onEvent: (e) => events.push(e) });
  const url = `${ORIGIN_A}/ledger?id=${id}`;
  const broken = await errorOf(client.fetch(url, { method: "POST", body: "i1" }));
  await errorOf(client.fetch(url, { method: "POST", body: "i2" }));
  store.entries.get(broken.id).headers.push(["not a header name", "x"]);
  await setDown(ORIGIN_A, id, false);
  await client.outbox.flush();
  const dead = await client.outbox.deadLetters();
  assert.deepEqual(dead.map((e) => [e.id, e.deadLetter.reason]), [[broken.id, "invalid"]]);
  assert.ok(events.some((e) => e.type === "deadLettered" && e.reason === "invalid" && e.status === undefined));
  assert.deepEqual((await ledger(ORIGIN_A, id)).order, ["i2"], "the one behind it was delivered");
  client.free();
});

test("onReplay: a non-Request is a dead letter (invalid), a throw makes the entry wait; Cookie and Proxy-Authorization are not stored", async () => {
  const id = uid("outbox"), store = mapStore();
  await setDown(ORIGIN_A, id, true, true);
  const url = `${ORIGIN_A}/ledger?id=${id}`;
  const writer = new ResilientClient({ ...FAST, outbox: { name: id, store } });
  const kept = await errorOf(writer.fetch(url, { method: "POST", body: "r1",
    headers: { cookie: "session=1", "proxy-authorization": "Basic x", "x-keep": "yes" } }));
  assert.ok(kept instanceof QueuedError, String(kept));
  const headers = new Map(store.entries.get(kept.id).headers);
  assert.deepEqual([headers.has("cookie"), headers.has("proxy-authorization"), headers.get("x-keep")], [false, false, "yes"]);
  writer.free();
  await setDown(ORIGIN_A, id, false);
  // An onReplay that throws: the entry waits, nothing is sent.
  const throwing = new ResilientClient({ ...FAST, outbox: { name: id, store, onReplay: () => { throw new Error("no token yet"); } } });
  assertTally(await throwing.outbox.flush(), { delivered: 0, deadLettered: 0, waiting: 1 });
  assert.deepEqual((await throwing.outbox.list()).map((e) => e.id), [kept.id]);
  assert.deepEqual((await ledger(ORIGIN_A, id)).order, []);
  throwing.free();
  // One that returns something else: a dead letter, with the time it became one.
  const before = Date.now();
  const wrong = new ResilientClient({ ...FAST, outbox: { name: id, store, onReplay: () => "not a request" } });
  assertTally(await wrong.outbox.flush(), { delivered: 0, deadLettered: 1, waiting: 0 });
  const [dead] = await wrong.outbox.deadLetters();
  assert.equal(dead.deadLetter.reason, "invalid");
  assert.ok(dead.deadLetter.at >= before && dead.deadLetter.at <= Date.now(), String(dead.deadLetter.at));
  assert.deepEqual((await ledger(ORIGIN_A, id)).order, []);
  wrong.free();
});

test("dead letters count toward maxEntries; a transient status that is not kept resolves with its Response", async () => {
  const id = uid("outbox"), store = mapStore();
  await setDown(ORIGIN_A, id, true);
  const client = new ResilientClient({ ...FAST, outbox: { name: id, store, maxEntries: 1 } });
  const url = `${ORIGIN_A}/ledger?id=${id}`;
  const kept = await errorOf(client.fetch(`${url}&refuse=x1`, { method: "POST", body: "x1" }));
  assert.ok(kept instanceof QueuedError, String(kept));
  await setDown(ORIGIN_A, id, false);
  assertTally(await client.outbox.flush(), { delivered: 0, deadLettered: 1, waiting: 0 });
  await setDown(ORIGIN_A, id, true);
  // The outbox holds one dead letter, so it is full: the 503 is the call's answer, as without it.
  const res = await client.fetch(url, { method: "POST", body: "x2" });
  assert.equal(res.status, 503);
  assert.equal(store.entries.size, 1);
  client.free();
});

test("a store or an onReplay that never answers fails after 30 s, and frees the name's turn", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  // A store whose list() never answers: flush() rejects once the fake clock passes 30 s.
  const stuck = { put: async () => {}, delete: async () => {}, list: () => new Promise(() => {}) };
  const a = new ResilientClient({ outbox: { name: uid("outbox"), store: stuck } });
  const flushed = a.outbox.flush().then(() => "settled", (e) => e.message);
  await turn();
  t.mock.timers.tick(30_000);
  assert.match(await flushed, /list\(\) did not answer in 30000 ms/);
  a.free();
  // An onReplay that never answers: the entry waits, and discard() gets its turn.
  const id = uid("outbox"), store = mapStore();
  await setDown(ORIGIN_A, id, true);
  const b = new ResilientClient({ retry: false, breaker: false, outbox: { name: id, store, onReplay: () => new Promise(() => {}) } });
  const kept = await errorOf(b.fetch(`${ORIGIN_A}/ledger?id=${id}`, { method: "POST", body: "h" }));
  assert.ok(kept instanceof QueuedError, String(kept));
  const replay = b.outbox.flush();
  const discarded = b.outbox.discard(kept.id);
  for (let i = 0; i < 20 && store.calls.filter((c) => c === "list").length < 1; i++) await turn();
  await turn();
  t.mock.timers.tick(30_000);
  assert.deepEqual({ ...(await replay) }, { delivered: 0, deadLettered: 0, waiting: 1 });
  assert.equal(await discarded, true);
  assert.equal(store.entries.size, 0);
  b.free();
});

/** A store over `inner` (a mapStore) whose put() lands only when `land()` lets it (or never). */
function heldPut(inner) {
  const held = [];
  return {
    held,
    store: { ...inner,
      put(entry) {
        return new Promise((resolve) => {
          held.push(async () => { await inner.put(entry); resolve(); });
        });
      } },
    /** Lands the put()s held so far. */
    land: () => Promise.all(held.splice(0).map((f) => f())),
  };
}

test("a store whose put() never answers does not hold the call past its deadline: it settles then, not kept", async () => {
  const id = uid("outbox"), inner = mapStore(), { store } = heldPut(inner);
  await setDown(ORIGIN_A, id, true, true); // network errors at once: the call's time is its own
  const client = new ResilientClient({ retry: false, breaker: false, totalTimeoutMs: 1000, outbox: { name: id, store } });
  const started = performance.now();
  const error = await within(errorOf(client.fetch(`${ORIGIN_A}/ledger?id=${id}`, { method: "POST", body: "n1" })),
    5000, "the call (totalTimeoutMs: 1000)");
  const took = performance.now() - started;
  assert.ok(took >= 900 && took < 1500, `settled after ${Math.round(took)} ms`);
  assert.ok(!(error instanceof QueuedError), String(error));
  assert.ok(error instanceof TypeError, "the error it would have thrown: the network's");
  assert.match(error.notQueued, /its store did not keep it by the call's deadline \(totalTimeoutMs: 1000\)/);
  client.free();
});

test("a put() that lands after the call settled is taken back: nothing the caller was told is not kept is replayed", async () => {
  const id = uid("outbox"), inner = mapStore(), { store, held, land } = heldPut(inner);
  await setDown(ORIGIN_A, id, true, true);
  const client = new ResilientClient({ retry: false, breaker: false, totalTimeoutMs: 500, outbox: { name: id, store } });
  const url = `${ORIGIN_A}/ledger?id=${id}`;
  const error = await within(errorOf(client.fetch(url, { method: "POST", body: "late" })), 5000, "the call");
  assert.match(error.notQueued, /did not keep it by the call's deadline/);
  assert.equal(held.length, 1, "its put() is still out");
  await land(); // the store answers at last: the entry lands...
  await eventually("taken back", 5000, () => inner.entries.size === 0); // ...and leaves again
  assert.deepEqual(inner.calls.slice(-2), ["put", "delete"]);
  await setDown(ORIGIN_A, id, false);
  assertTally(await client.outbox.flush(), { delivered: 0, deadLettered: 0, waiting: 0 });
  assert.deepEqual((await ledger(ORIGIN_A, id)).order, [], "never sent");
  client.free();
});

test("a put() that has landed but not answered is not replayed, and is taken back once it answers", async () => {
  const id = uid("outbox"), inner = mapStore();
  let answer;
  const answered = new Promise((resolve) => { answer = resolve; });
  const store = { ...inner, put: async (entry) => { await inner.put(entry); await answered; } };
  await setDown(ORIGIN_A, id, true, true);
  const client = new ResilientClient({ retry: false, breaker: false, totalTimeoutMs: 500, outbox: { name: id, store } });
  const error = await within(errorOf(client.fetch(`${ORIGIN_A}/ledger?id=${id}`, { method: "POST", body: "unsure" })), 5000, "the call");
  assert.match(error.notQueued, /did not keep it by the call's deadline/);
  assert.equal(inner.entries.size, 1, "written, not answered");
  await setDown(ORIGIN_A, id, false);
  assertTally(await client.outbox.flush(), { delivered: 0, deadLettered: 0, waiting: 0 });
  assert.deepEqual((await ledger(ORIGIN_A, id)).order, [], "not replayed while its put has not answered");
  answer();
  await eventually("taken back", 5000, () => inner.entries.size === 0);
  assert.deepEqual((await ledger(ORIGIN_A, id)).order, []);
  client.free();
});

test("a late put() whose take-back fails is never replayed; the next replay takes it back", async () => {
  const id = uid("outbox"), inner = mapStore(), { store, land } = heldPut(inner);
  let refusals = 1;
  store.delete = async (key) => {
    if (refusals > 0) { refusals--; throw new Error("disk busy"); }
    return inner.delete(key);
  };
  await setDown(ORIGIN_A, id, true, true);
  const client = new ResilientClient({ retry: false, breaker: false, totalTimeoutMs: 500, outbox: { name: id, store } });
  const error = await within(errorOf(client.fetch(`${ORIGIN_A}/ledger?id=${id}`, { method: "POST", body: "twice" })), 5000, "the call");
  assert.match(error.notQueued, /did not keep it by the call's deadline/);
  await land();
  await eventually("the take-back tried", 5000, () => refusals === 0);
  assert.equal(inner.entries.size, 1, "the failed take-back left it in the store");
  await setDown(ORIGIN_A, id, false);
  assertTally(await client.outbox.flush(), { delivered: 0, deadLettered: 0, waiting: 0 });
  assert.deepEqual((await ledger(ORIGIN_A, id)).order, [], "not replayed");
  await eventually("taken back by the replay", 5000, () => inner.entries.size === 0);
  client.free();
});

test("a call whose attempts took all its time still gets a second to be kept, and no more", async () => {
  const id = uid("outbox"), inner = mapStore();
  const slow = { ...inner, put: async (entry) => { await sleep(200); return inner.put(entry); } };
  const client = new ResilientClient({ retry: false, breaker: false, timeoutMs: 5000, totalTimeoutMs: 300,
    outbox: { name: id, store: slow } });
  const url = `${ORIGIN_A}/hang?id=${id}`;
  const kept = await errorOf(client.fetch(url, { method: "POST", body: "h1" }));
  assert.ok(kept instanceof QueuedError, String(kept));
  assert.equal(kept.reason, "timeout");
  assert.equal(inner.entries.size, 1);
  const { store } = heldPut(inner);
  const stuck = new ResilientClient({ retry: false, breaker: false, timeoutMs: 5000, totalTimeoutMs: 300,
    outbox: { name: uid("outbox"), store } });
  const started = performance.now();
  const error = await within(errorOf(stuck.fetch(url, { method: "POST", body: "h2" })), 5000, "the call");
  const took = performance.now() - started;
  assert.ok(took >= 1200 && took < 1900, `settled after ${Math.round(took)} ms: its 300 ms, then a second to keep it`);
  assert.ok(error instanceof TimeoutError, String(error));
  assert.match(error.notQueued, /did not keep it by the call's deadline \(totalTimeoutMs: 300\)/);
  client.free();
  stuck.free();
});

test("one entry the store cannot read costs that entry only: the others are replayed, it waits", async () => {
  const id = uid("outbox"), inner = mapStore();
  await setDown(ORIGIN_A, id, true);
  const client = new ResilientClient({ ...FAST, outbox: { name: id, store: inner } });
  const url = `${ORIGIN_A}/ledger?id=${id}`;
  const kept = [];
  for (const body of ["u1", "u2", "u3"]) kept.push(await errorOf(client.fetch(url, { method: "POST", body })));
  assert.ok(kept.every((e) => e instanceof QueuedError));
  client.free();
  // A store whose list() gives one promise per entry (a read each): u2's read fails, one
  // entry was delivered by another process meanwhile (undefined), one item is not an entry.
  let unreadable = kept[1].id;
  const store = { ...inner, list: async () => [
    ...(await inner.list()).map((e) => (e.id === unreadable ? Promise.reject(new Error("bad sector")) : Promise.resolve(e))),
    Promise.resolve(undefined), "not an entry"] };
  await setDown(ORIGIN_A, id, false);
  const again = new ResilientClient({ ...FAST, outbox: { name: id, store } });
  assert.deepEqual((await again.outbox.list()).map((e) => e.id).sort(), [kept[0].id, kept[2].id].sort());
  const tally = await again.outbox.flush();
  assertTally(tally, { delivered: 2, deadLettered: 0, waiting: 1 });
  assert.equal(tally.waiting, 1, "the unreadable entry waits");
  assert.deepEqual((await ledger(ORIGIN_A, id)).order, ["u1", "u3"]);
  assert.deepEqual([...inner.entries.keys()], [kept[1].id], "it stays, to be read again");
  unreadable = undefined; // it reads again
  assertTally(await again.outbox.flush(), { delivered: 1, deadLettered: 0, waiting: 0 });
  assert.deepEqual((await ledger(ORIGIN_A, id)).order, ["u1", "u3", "u2"]);
  again.free();
});

test("a store whose list() fails: flush() rejects saying the store could not list its entries", async () => {
  const inner = mapStore();
  const store = { ...inner, list: async () => { throw new Error("ENOENT: no such directory"); } };
  const client = new ResilientClient({ outbox: { name: uid("outbox"), store } });
  const error = await errorOf(client.outbox.flush());
  assert.match(String(error?.message), /the outbox store's list\(\) failed, nothing was replayed: ENOENT: no such directory/);
  assert.equal(error.cause?.message, "ENOENT: no such directory");
  client.free();
});

test("with get() and count(), keeping a call and discard() read one entry, not the whole store", async () => {
  const id = uid("outbox"), store = mapStore();
  store.get = async (key) => { store.calls.push("get"); return structuredClone(store.entries.get(key)); };
  store.count = async () => { store.calls.push("count"); return store.entries.size; };
  await setDown(ORIGIN_A, id, true, true); // network errors: a call not kept rejects
  let started;
  const listed = new Promise((resolve) => { started = resolve; });
  const list = store.list;
  store.list = () => { started(); return list(); };
  const client = new ResilientClient({ ...FAST, retry: false, outbox: { name: id, store, maxEntries: 2 } });
  await listed; // the client's start-up replay has begun
  await client.outbox.flush(); // and ended (replays take turns); this one lists too
  store.calls.length = 0;
  const url = `${ORIGIN_A}/ledger?id=${id}`;
  const kept = await errorOf(client.fetch(url, { method: "POST", body: "g1" }));
  await errorOf(client.fetch(url, { method: "POST", body: "g2" }));
  const full = await errorOf(client.fetch(url, { method: "POST", body: "g3" }));
  assert.ok(kept instanceof QueuedError);
  assert.match(full.notQueued, /the outbox is full \(outbox.maxEntries: 2\)/);
  assert.equal(await client.outbox.discard(kept.id), true);
  assert.equal(await client.outbox.discard("no-such-id"), false);
  assert.ok(!store.calls.includes("list"), store.calls.join(", "));
  assert.deepEqual(store.calls.filter((c) => c === "count").length, 3);
  client.free();
});
