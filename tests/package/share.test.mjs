// builds: full (a capability of resilient-fetch/full: tests/package/run.mjs)
// Shared origin health (policy `share`): clients of one share name in one process, in
// Node worker_threads, and what crosses their BroadcastChannel, through the package used
// by name against the fault server on 127.0.0.1. (Chromium tabs: browser-share.test.mjs.)
import test from "node:test";
import assert from "node:assert/strict";
import { Worker } from "node:worker_threads";
import { ORIGIN_A, serverLog, uid } from "./helpers.mjs";
import { CLOCK_MS, checkFleet, fleetVerdict, sleep } from "./share-tab.mjs";
import { ResilientClient } from "resilient-fetch";

/** A client of share `name` whose breaker transitions are kept: { client, moves }. */
function member(name, breaker = {}) {
  const moves = [];
  const client = new ResilientClient({
    share: name, retry: false, breaker: { mode: "consecutive", failureThreshold: 3, ...breaker },
    onEvent: (e) => e.type === "breakerTransition" && moves.push({ to: e.to, at: Date.now() }),
  });
  return { client, moves };
}

/** Resolves when pred() holds (checked every 5 ms), or fails after ms. */
async function until(pred, ms, what) {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) assert.fail(`${what}: not within ${ms} ms`);
    await sleep(5);
  }
}

/** A channel that listens to share `name` as a peer would: { messages, close }. */
function listen(name) {
  const channel = new BroadcastChannel(`resilient-fetch/${name}`);
  const messages = [];
  channel.onmessage = (e) => messages.push(e.data);
  return { messages, channel, close: () => channel.close() };
}

test("one client's breaker opening opens its peers', a new peer learns it, a successful probe closes them all", async () => {
  const name = uid("share"), id = uid("outage");
  const url = `${ORIGIN_A}/outage?id=${id}&from=${Date.now()}&ms=700`;
  const a = member(name, { cooldownMs: 500 }), b = member(name, { cooldownMs: 500 });
  for (let i = 0; i < 3; i++) await a.client.fetch(url);
  await until(() => b.client.breakerState(url) === "open", 500, "b opens with a");
  assert.equal(a.client.breakerState(url), "open");
  // b sent nothing, and still refuses at once.
  await assert.rejects(b.client.fetch(url), { name: "CircuitOpenError" });
  const c = member(name, { cooldownMs: 500 });
  await until(() => c.client.breakerState(url) === "open", 500, "a new client learns the open breaker");
  // a leads: after its cooldown its probe goes; b and c wait a cooldown longer.
  await until(() => a.client.breakerState(url) === "half-open", 1000, "a's cooldown ends");
  assert.equal(b.client.breakerState(url), "open");
  await sleep(Math.max(0, 750 - (Date.now() - Number(new URL(url).searchParams.get("from")))));
  const probe = await a.client.fetch(url);
  assert.equal(probe.status, 200);
  // b and c send nothing from here, so only the probe's note can close them (their own
  // cooldowns would leave them half-open, not closed): the wait is a bound on the test, the
  // cause is that they closed after the probe's answer with no request of their own.
  await until(() => b.client.breakerState(url) === "closed" && c.client.breakerState(url) === "closed",
    2000, "every peer closes after the probe");
  const log = await serverLog(ORIGIN_A, id);
  assert.equal(log.length, 4, `3 failures and one probe reached the origin: ${JSON.stringify(log.map((e) => e.status))}`);
  assert.ok(b.moves.at(-1).to === "closed" && b.moves.at(-1).at >= log[3].answered - CLOCK_MS,
    `b closed on the probe's answer: ${JSON.stringify({ moves: b.moves, answered: log[3].answered })}`);
  for (const m of [a, b, c]) m.client.free();
});

test("peers' failures count: a client that sends nothing learns the origin is down from the others", async () => {
  const name = uid("share"), id = uid("outage");
  const url = `${ORIGIN_A}/outage?id=${id}&from=0&ms=${1e13}`;
  const quiet = member(name), busy = member(name, { failureThreshold: 1000 });
  for (let i = 0; i < 3; i++) await busy.client.fetch(url);
  await until(() => quiet.client.breakerState(url) === "open", 500, "the quiet client's breaker opens");
  // The quiet one tripped first (its threshold is 3): it leads, and the busy one follows it.
  await until(() => busy.client.breakerState(url) === "open", 500, "the busy client follows");
  await assert.rejects(quiet.client.fetch(url), { name: "CircuitOpenError" });
  assert.equal((await serverLog(ORIGIN_A, id)).length, 3);
  quiet.client.free(); busy.client.free();
});

test("only origins, states and times cross the channel: no path, query, header, body or key", async () => {
  const name = uid("share"), id = uid("secret-query");
  const peer = listen(name);
  const { client } = member(name);
  const url = `${ORIGIN_A}/outage?id=${id}&from=0&ms=${1e13}&token=hunter2`;
  for (let i = 0; i < 4; i++) {
    await client.fetch(url, { method: "POST", body: "card=4242", headers: { authorization: "Bearer s3cr3t", "idempotency-key": "key-123" } })
      .catch((e) => e);
  }
  await until(() => peer.messages.length >= 4, 500, "the peer hears the notes");
  const text = JSON.stringify(peer.messages);
  for (const secret of ["secret-query", "outage", "hunter2", "4242", "s3cr3t", "key-123", "authorization"]) {
    assert.ok(!text.includes(secret), `${secret} crossed: ${text}`);
  }
  for (const m of peer.messages) {
    assert.ok(Array.isArray(m) && m.length === 5 && m[0] === 1, JSON.stringify(m));
    assert.ok(Number.isInteger(m[1]) && typeof m[3] === "number" && Number.isInteger(m[4]), JSON.stringify(m));
    assert.ok(m[2] === "" || m[2] === ORIGIN_A, `an origin, nothing more: ${m[2]}`);
  }
  // A client without share sends nothing; the listener still hears a sharing one after it.
  const before = peer.messages.length;
  const loner = new ResilientClient({ retry: false });
  for (let i = 0; i < 3; i++) await loner.fetch(url);
  const { client: other } = member(name);
  await until(() => peer.messages.length > before, 500, "the sharing client's hello");
  // The new member's hello (0), and the open member's answer (3: opened); nothing of the loner's.
  await until(() => peer.messages.length >= before + 2, 500, "the answer to the hello");
  await sleep(50);
  assert.deepEqual(peer.messages.slice(before).map((m) => m[1]), [0, 3], JSON.stringify(peer.messages.slice(before)));
  peer.close(); client.free(); loner.free(); other.free();
});

test("malformed notes and notes of another version are ignored; an 'open for a day' lasts the receiver's cooldown", async () => {
  const name = uid("share");
  const peer = listen(name);
  const { client } = member(name, { cooldownMs: 200 });
  const url = `${ORIGIN_A}/ok`;
  const day = Date.now() + 86_400_000;
  for (const junk of [
    [2, 3, ORIGIN_A, day, 1], [1, 3, `${ORIGIN_A}/path`, day, 1], [1, 3, "not an origin", day, 1],
    [1, 3, ORIGIN_A.toUpperCase(), day, 1], [1, 9, ORIGIN_A, day, 1], [1, 3, ORIGIN_A, null, 1],
    [1, 3, ORIGIN_A, day, -1], [1, 3, ORIGIN_A, day, 2 ** 32], [1, 3.5, ORIGIN_A, day, 1],
    [1, 3, ORIGIN_A, day], { kind: 3 }, "open", null,
  ]) peer.channel.postMessage(junk);
  // A well-formed note of another client after them: once it has arrived, so have they.
  peer.channel.postMessage([1, 5, "http://127.0.0.1:1", Date.now() + 100, 0]);
  await until(() => "http://127.0.0.1:1" in client.stats(), 500, "the last note arrives");
  assert.equal(client.breakerState(url), "closed", "no junk opened it");
  peer.channel.postMessage([1, 3, ORIGIN_A, day, 1]);
  await until(() => client.breakerState(url) === "open", 500, "a well-formed open note");
  const opened = Date.now();
  // A follower: open for the leader's cooldown (capped at its own, 200 ms) and one more.
  await until(() => client.breakerState(url) === "half-open", 1000, "its own cooldowns end");
  assert.ok(Date.now() - opened <= 600, `half-open after ${Date.now() - opened} ms, not a day`);
  peer.close(); client.free();
});

test("a Retry-After one client got holds the origin in its peers and in a peer that starts later, capped by each one's maxRetryAfterMs", async () => {
  const name = uid("share"), id = uid("share-wait");
  const policy = (maxRetryAfterMs) => ({ share: name, breaker: false, rateLimit: { maxWaitMs: 0 },
    retry: { maxAttempts: 1, maxRetryAfterMs } });
  const told = new ResilientClient(policy(30_000));
  const peer = new ResilientClient(policy(30_000));
  const capped = new ResilientClient(policy(300));
  assert.equal((await told.fetch(`${ORIGIN_A}/retry-after?id=${id}&value=20`)).status, 503);
  const held = (client) => () => client.stats()[ORIGIN_A]?.waitMs > 0;
  await until(held(peer), 2000, "the peer is told");
  await until(held(capped), 2000, "the capped peer is told");
  const late = new ResilientClient(policy(30_000));
  await until(held(late), 2000, "the late joiner asks, and is told");
  for (const [who, client, most] of [["peer", peer, 20_000], ["late joiner", late, 20_000], ["capped peer", capped, 300]]) {
    const error = await client.fetch(`${ORIGIN_A}/retry-after?id=${id}`).then(() => null, (e) => e);
    assert.equal(error?.name, "RateLimitError", `${who}: ${error}`);
    assert.equal(error.reason, "retryAfter", who);
    assert.ok(error.retryAfterMs > most / 2 && error.retryAfterMs <= most, `${who}: ${error.retryAfterMs} ms`);
  }
  assert.equal((await serverLog(ORIGIN_A, id)).length, 1, "only the first answer was asked for");
  for (const c of [told, peer, capped, late]) c.free();
});

test("where there is no BroadcastChannel, share is accepted and does nothing", async () => {
  const saved = globalThis.BroadcastChannel;
  delete globalThis.BroadcastChannel;
  let a;
  try {
    a = member(uid("share"));
  } finally {
    globalThis.BroadcastChannel = saved;
  }
  const name = uid("share");
  const b = member(name);
  const url = `${ORIGIN_A}/outage?id=${uid("o")}&from=0&ms=${1e13}`;
  for (let i = 0; i < 3; i++) await a.client.fetch(url);
  assert.equal(a.client.breakerState(url), "open", "its own breaker still works");
  assert.equal(b.client.breakerState(url), "closed");
  a.client.free(); b.client.free();
});

test("share belongs to a client: given to one call, or not a name, it is refused", async () => {
  await assert.rejects(new ResilientClient().fetch(`${ORIGIN_A}/ok`, undefined, { share: "x" }),
    (e) => e instanceof TypeError && e.message.includes("share"));
  assert.throws(() => new ResilientClient({ share: "" }), (e) => e instanceof RangeError && /share.*1 to 64/.test(e.message));
  assert.throws(() => new ResilientClient({ share: "x".repeat(65) }), RangeError);
  assert.throws(() => new ResilientClient({ share: 7 }), (e) => e instanceof TypeError && e.message.includes("share"));
  assert.doesNotThrow(() => new ResilientClient({ share: false }).free());
  // The object form (Cloudflare Workers): its fields named, a namespace checked for what it must have.
  const namespace = { idFromName: () => ({}), get: () => ({}) };
  assert.throws(() => new ResilientClient({ share: { durableObject: namespace } }),
    (e) => e instanceof TypeError && /share\.name must be a name of 1 to 64 characters/.test(e.message));
  assert.throws(() => new ResilientClient({ share: { name: "", durableObject: namespace } }),
    (e) => e instanceof RangeError && /share\.name.*1 to 64/.test(e.message));
  assert.throws(() => new ResilientClient({ share: { name: "x", durableObject: {} } }),
    (e) => e instanceof TypeError && /share\.durableObject must be a Durable Object namespace/.test(e.message));
  assert.throws(() => new ResilientClient({ share: { name: "x", durableObjects: namespace } }),
    (e) => e instanceof TypeError && e.message.includes("share.durableObjects"));
});

test("share: { name, durableObject } outside Workers (no Workers entry loaded) shares by name as share: name does", async () => {
  const name = uid("share"), namespace = { idFromName: () => ({}), get: () => ({}) };
  const a = new ResilientClient({ share: { name, durableObject: namespace }, retry: false, breaker: { mode: "consecutive", failureThreshold: 3 } });
  const b = member(name);
  const url = `${ORIGIN_A}/outage?id=${uid("o")}&from=0&ms=${1e13}`;
  for (let i = 0; i < 3; i++) await a.fetch(url);
  await until(() => b.client.breakerState(url) === "open", 500, "its peer opens with it");
  a.free(); b.client.free();
});

// The promises (share-tab.mjs, checkFleet), as for Chromium tabs (browser-share.test.mjs): no
// worker sends after it heard the open breaker but one probe per cooldown from the last one's
// answer, the leader's, as soon as its cooldown has run; one successful probe closes all. Past the
// trip, four workers sharing nothing probe 4x one alone; sharing about 1x; the bound is 3x (the
// whole outage's ratio: bench/share.mjs).
test("four worker_threads through a 10 s outage: none sends after it heard the open breaker but one probe per cooldown from the last one's answer, one successful probe closes all; probing under 3x one alone's (4x without sharing)", { timeout: 60_000 }, async (t) => {
  const cooldownMs = 1000, ms = 10_000;
  const from = Date.now() + 1000, stopAt = from + ms + 1500;
  const sharedId = uid("shared"), aloneId = uid("alone");
  const tab = (id, share) => new Promise((resolve, reject) => {
    const w = new Worker(new URL("./share-tab-worker.mjs", import.meta.url), {
      workerData: { url: `${ORIGIN_A}/outage?id=${id}&from=${from}&ms=${ms}`, share, cooldownMs, stopAt, startAt: from - 500 },
    });
    w.once("message", resolve);
    w.once("error", reject);
  });
  const name = uid("share");
  // Each worker its own id (the origin's log of what it sent), one origin for all.
  const [alone, ...tabs] = await Promise.all([tab(aloneId, undefined), ...Array.from({ length: 4 }, (_, k) => tab(`${sharedId}-${k}`, name))]);
  const members = await Promise.all(tabs.map(async (x, k) => ({ name: `worker${k}`, ...x, log: await serverLog(ORIGIN_A, `${sharedId}-${k}`) })));
  const verdict = fleetVerdict({ members, from, ms, cooldownMs });
  const lonely = fleetVerdict({ members: [{ name: "alone", ...alone, log: await serverLog(ORIGIN_A, aloneId) }], from, ms, cooldownMs });
  const detail = JSON.stringify({ verdict, lonely });
  t.diagnostic(`during the outage: four workers ${verdict.count} requests, one alone ${lonely.count} (${(verdict.count / lonely.count).toFixed(2)}x); past the first cooldown ${verdict.probing} and ${lonely.probing}`);
  assert.ok(lonely.count >= 10, `the lone worker saw the outage: ${detail}`);
  checkFleet({ assert, diagnostic: (m) => t.diagnostic(`alone: ${m}`), verdict: lonely, cooldownMs, detail });
  checkFleet({ assert, diagnostic: (m) => t.diagnostic(`four workers: ${m}`), verdict, cooldownMs, detail });
  // Past the trip (which lasts as long as notes take to cross), what the fleet sends is its probing:
  // under 3x one alone's (sharing nothing: 4x).
  assert.ok(verdict.probing < 3 * lonely.probing, `four workers sent ${verdict.probing} requests past the first cooldown vs one alone ${lonely.probing} (without sharing 4x): ${detail}`);
  for (const x of tabs) assert.equal(x.state, "closed", detail);
});
