// builds: full (a capability of resilient-fetch/full: tests/package/run.mjs)
// Stale answers (policy `stale`, RFC 5861 stale-if-error) through the package used by name,
// against the fault server on 127.0.0.1 (/kept: good answers, then failures): the last good
// answer is served for a failure, with its Age, the marker header, the event and the counter;
// nothing is sent while the breaker is open; no-store, Vary, the window, the body limit and the
// shared store's credentials rule hold; a store that fails costs only the fallback.
// Node's store is the built-in memory one (a server's: shared), which keeps an answer as soon as
// its copy of the body is read, before the caller's next call can fail.
import test from "node:test";
import assert from "node:assert/strict";
import { ORIGIN_A, errorOf, serverLog, sleep, uid } from "./helpers.mjs";
import { ResilientClient, resilientFetch } from "resilient-fetch";

/** A client whose events are kept; retries at once, no breaker unless asked. */
function recorded(policy) {
  const events = [];
  const client = new ResilientClient({
    retry: { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0 },
    breaker: false,
    ...policy,
    onEvent: (e) => events.push(e),
  });
  return { client, events };
}

/**
 * Reads a call's answer: [status, body, age, marker]; an Age of 0 or 1 s reads "0-1" (the
 * origin's Date has whole seconds: an answer a few ms old may be a second old by it).
 */
async function answer(promise) {
  const r = await promise;
  return [r.status, await r.text(), ageOf(r.headers.get("age")), r.headers.get("resilient-fetch-stale")];
}
const ageOf = (age) => (age === "0" || age === "1" ? "0-1" : age);

test("a good answer, then 503s after the retries: the kept answer is served with Age, its marker, an event and a counter", async () => {
  const id = uid("stale");
  const { client, events } = recorded({ stale: true });
  const url = `${ORIGIN_A}/kept?id=${id}`;
  assert.deepEqual(await answer(client.fetch(url)), [200, "kept 1", null, null]);
  const served = await client.fetch(url);
  assert.equal(served.status, 200);
  assert.equal(served.headers.get("etag"), '"1"', "the kept answer's own headers");
  assert.equal(served.headers.get("resilient-fetch-stale"), "status");
  assert.match(served.headers.get("age"), /^\d+$/);
  assert.equal(await served.text(), "kept 1");
  const log = await serverLog(ORIGIN_A, id);
  assert.deepEqual(log.map((e) => e.status), [200, 503, 503], "the second call made its two attempts");
  const stale = events.filter((e) => e.type === "stale");
  assert.equal(stale.length, 1, JSON.stringify(events));
  assert.equal(stale[0].reason, "status");
  assert.equal(stale[0].origin, ORIGIN_A);
  assert.ok(stale[0].ageMs >= 0 && stale[0].ageMs < 5000, `ageMs ${stale[0].ageMs}`);
  assert.equal(client.stats()[ORIGIN_A].stale, 1);
  client.free();
});

test("a dropped connection and a timeout are served the kept answer too, each saying why", async () => {
  for (const [then, reason, policy] of [
    ["drop", "networkError", {}],
    ["hang", "timeout", { timeoutMs: 150, retry: false }],
  ]) {
    const id = uid("stale");
    const { client, events } = recorded({ stale: true, ...policy });
    const url = `${ORIGIN_A}/kept?id=${id}&then=${then}`;
    await (await client.fetch(url)).text();
    assert.deepEqual(await answer(client.fetch(url)), [200, "kept 1", "0-1", reason]);
    assert.deepEqual(events.filter((e) => e.type === "stale").map((e) => e.reason), [reason]);
    client.free();
  }
});

test("with the breaker open the kept answer is served without sending", async () => {
  const id = uid("stale");
  const { client, events } = recorded({ stale: true, retry: false, breaker: { mode: "consecutive", failureThreshold: 1, cooldownMs: 60000 } });
  const url = `${ORIGIN_A}/kept?id=${id}`;
  await (await client.fetch(url)).text();
  assert.deepEqual(await answer(client.fetch(url)), [200, "kept 1", "0-1", "status"], "the 503 opens the breaker");
  assert.equal(client.breakerState(ORIGIN_A), "open");
  const sentBefore = (await serverLog(ORIGIN_A, id)).length;
  assert.deepEqual(await answer(client.fetch(url)), [200, "kept 1", "0-1", "breakerOpen"]);
  assert.equal((await serverLog(ORIGIN_A, id)).length, sentBefore, "nothing was sent while open");
  assert.deepEqual(events.filter((e) => e.type === "stale").map((e) => e.reason), ["status", "breakerOpen"]);
  // A call with nothing kept still fails as without stale.
  const other = await errorOf(client.fetch(`${ORIGIN_A}/kept?id=${id}-none`));
  assert.equal(other?.name, "CircuitOpenError");
  client.free();
});

test("an answer marked no-store is not kept; nor is one past maxBodyBytes, whose caller still reads all of it", async () => {
  const { client } = recorded({ stale: { maxBodyBytes: 1000 } });
  for (const query of ["cc=no-store", "bytes=2000", "bytes=2000&chunked=1"]) {
    const url = `${ORIGIN_A}/kept?id=${uid("stale")}&${query}`;
    const first = await (await client.fetch(url)).text();
    if (query.startsWith("bytes")) assert.equal(first, "k".repeat(2000), `${query}: the whole body`);
    assert.deepEqual(await answer(client.fetch(url)), [503, "fault 503", null, null], query);
  }
  // One within the limit is kept.
  const url = `${ORIGIN_A}/kept?id=${uid("stale")}&bytes=1000&chunked=1`;
  await (await client.fetch(url)).text();
  assert.deepEqual(await answer(client.fetch(url)), [200, "k".repeat(1000), "0-1", "status"]);
  client.free();
});

test("Vary is honoured: another value of the varied header is not served the kept answer", async () => {
  const id = uid("stale");
  const { client } = recorded({ stale: true });
  const url = `${ORIGIN_A}/kept?id=${id}&vary=Accept-Language`;
  const as = (lang) => client.fetch(url, { headers: { "accept-language": lang } });
  assert.deepEqual(await answer(as("fr")), [200, "kept 1 Accept-Language:fr", null, null]);
  assert.deepEqual(await answer(as("de")), [503, "fault 503", null, null]);
  assert.deepEqual(await answer(as("fr")), [200, "kept 1 Accept-Language:fr", "0-1", "status"]);
  client.free();
});

test("the window: the answer's own stale-if-error, else maxStaleMs; past it nothing is served", async () => {
  const { client } = recorded({ stale: { maxStaleMs: 0 } });
  // maxStaleMs 0 and no freshness: stale at once, served never.
  const none = `${ORIGIN_A}/kept?id=${uid("stale")}`;
  await (await client.fetch(none)).text();
  assert.deepEqual(await answer(client.fetch(none)), [503, "fault 503", null, null]);
  // Its own stale-if-error=1 widens the window to a second, then no more.
  const own = `${ORIGIN_A}/kept?id=${uid("stale")}&good=1&cc=${encodeURIComponent("max-age=0, stale-if-error=1")}`;
  const keptAt = Date.now();
  await (await client.fetch(own)).text();
  assert.deepEqual((await answer(client.fetch(own))).slice(0, 2), [200, "kept 1"]);
  await sleep(keptAt + 1300 - Date.now());
  assert.deepEqual(await answer(client.fetch(own)), [503, "fault 503", null, null], "past its stale-if-error");
  client.free();
});

test("a shared store keeps nothing sent with Authorization or Cookie, nor marked private, unless stale.private", async () => {
  const shared = recorded({ stale: true }).client;
  const mine = recorded({ stale: { private: true } }).client;
  for (const [init, query] of [
    [{ headers: { authorization: "Bearer t" } }, ""],
    [{ headers: { cookie: "a=1" } }, ""],
    [{}, "&cc=private"],
  ]) {
    for (const [client, kept] of [[shared, false], [mine, true]]) {
      const url = `${ORIGIN_A}/kept?id=${uid("stale")}${query}`;
      await (await client.fetch(url, init)).text();
      const [status, , , marker] = await answer(client.fetch(url, init));
      assert.deepEqual([status, marker], kept ? [200, "status"] : [503, null], `${JSON.stringify(init)}${query} kept: ${kept}`);
    }
  }
  shared.free(); mine.free();
});

test("a write that succeeds makes what its URL kept out of date", async () => {
  const id = uid("stale");
  const { client } = recorded({ stale: true });
  const url = `${ORIGIN_A}/kept?id=${id}&good=2`;
  await (await client.fetch(url)).text();
  assert.equal((await client.fetch(url, { method: "POST", body: "x" })).status, 200);
  assert.deepEqual(await answer(client.fetch(url)), [503, "fault 503", null, null]);
  client.free();
});

test("a store that throws, or never answers, costs only the fallback: the call ends as without stale, within its deadline", async () => {
  const throwing = { get() { throw new Error("get"); }, put() { throw new Error("put"); }, delete() { throw new Error("delete"); } };
  const silent = { get: () => new Promise(() => {}), put: () => new Promise(() => {}), delete: () => new Promise(() => {}) };
  for (const [store, what] of [[throwing, "throws"], [silent, "never answers"]]) {
    const { client, events } = recorded({ stale: { store }, totalTimeoutMs: 3000 });
    const url = `${ORIGIN_A}/kept?id=${uid("stale")}`;
    assert.equal(await (await client.fetch(url)).text(), "kept 1", `${what}: the good answer as it came`);
    const t0 = performance.now();
    assert.deepEqual(await answer(client.fetch(url)), [503, "fault 503", null, null], what);
    const ms = performance.now() - t0;
    assert.ok(ms < 1500, `${what}: ended after ${Math.round(ms)} ms (a store call is bounded by 1 s)`);
    // With the deadline spent, the lookup gets what is left of it (at least 20 ms), not 1 s.
    const late = recorded({ stale: { store }, totalTimeoutMs: 200, timeoutMs: 150, retry: false }).client;
    const hang = `${ORIGIN_A}/kept?id=${uid("stale")}&good=0&then=hang`;
    const t1 = performance.now();
    const error = await errorOf(late.fetch(hang));
    assert.equal(error?.name, "TimeoutError", what);
    assert.ok(performance.now() - t1 < 600, `${what}: rejected after ${Math.round(performance.now() - t1)} ms`);
    assert.ok(!events.some((e) => e.type === "stale"));
    client.free(); late.free();
  }
});

test("a given store is used as it is: its put gets a Response, its get serves it", async () => {
  const kept = new Map();
  const store = {
    async get(key) { const r = kept.get(key); return r?.clone(); },
    async put(key, response) { kept.set(key, response); },
    async delete(key) { kept.delete(key); },
  };
  const { client } = recorded({ stale: { store, private: true } });
  const url = `${ORIGIN_A}/kept?id=${uid("stale")}`;
  await (await client.fetch(url)).text();
  for (let i = 0; i < 50 && kept.size === 0; i++) await sleep(10);
  assert.equal(kept.size, 1, "one answer put");
  assert.ok([...kept.values()][0] instanceof Response);
  assert.deepEqual(await answer(client.fetch(url)), [200, "kept 1", "0-1", "status"]);
  client.free();
});

test("a HEAD's headers are kept and served for its failure; a call turns stale on where its client did not (the client's store, opened then)", async () => {
  const { client } = recorded({});
  const url = `${ORIGIN_A}/kept?id=${uid("stale")}`;
  const head = (c) => answer(c.fetch(url, { method: "HEAD" }, { stale: true }));
  assert.deepEqual(await head(client), [200, "", null, null]);
  assert.deepEqual(await head(client), [200, "", "0-1", "status"]);
  // The module's own client, through resilientFetch with the policy of one call.
  const other = `${ORIGIN_A}/kept?id=${uid("stale")}`;
  const policy = { stale: true, retry: false, breaker: false };
  assert.deepEqual(await answer(resilientFetch(other, {}, policy)), [200, "kept 1", null, null]);
  assert.deepEqual(await answer(resilientFetch(other, {}, policy)), [200, "kept 1", "0-1", "status"]);
  assert.deepEqual(await answer(resilientFetch(other, {}, { ...policy, stale: false })), [503, "fault 503", null, null], "off for this call");
  client.free();
});

test("identical reads coalesced into one flight are each served the kept answer", async () => {
  const id = uid("stale");
  const { client, events } = recorded({ stale: true, coalesce: true });
  const url = `${ORIGIN_A}/kept?id=${id}`;
  await (await client.fetch(url)).text();
  const both = await Promise.all([answer(client.fetch(url)), answer(client.fetch(url))]);
  assert.deepEqual(both, [[200, "kept 1", "0-1", "status"], [200, "kept 1", "0-1", "status"]]);
  assert.equal((await serverLog(ORIGIN_A, id)).length, 3, "one flight: its two attempts");
  assert.equal(events.filter((e) => e.type === "stale").length, 1, "one call served");
  client.free();
});

test("bad input names the field and its range; the store's fields are a client's", async () => {
  assert.throws(() => new ResilientClient({ stale: { maxStaleMs: -1 } }),
    (e) => e instanceof RangeError && /^stale\.maxStaleMs must be an integer from 0 to /.test(e.message));
  assert.throws(() => new ResilientClient({ stale: { capMs: 10, maxStaleMs: 20 } }),
    (e) => e instanceof RangeError && e.message === "stale.maxStaleMs must be an integer from 0 to stale.capMs (10) (got 20)");
  assert.throws(() => new ResilientClient({ stale: "yes" }), TypeError);
  assert.throws(() => new ResilientClient({ stale: { store: {} } }),
    (e) => e instanceof TypeError && /stale\.store must be an object with get, put and delete methods/.test(e.message));
  const client = new ResilientClient();
  for (const stale of [{ maxEntries: 5 }, { private: true }, { store: { get() {}, put() {}, delete() {} } }]) {
    await assert.rejects(client.fetch(`${ORIGIN_A}/ok`, {}, { stale }),
      (e) => e instanceof TypeError && /give them to new ResilientClient/.test(e.message), JSON.stringify(stale));
  }
  client.free();
});
