// builds: full (a capability of resilient-fetch/full: tests/package/run.mjs)
// Coalescing (policy `coalesce`): identical GETs and HEADs in flight on one client are sent
// once, each caller with its own response, through the package used by name against the
// fault server on 127.0.0.1.
import test from "node:test";
import assert from "node:assert/strict";
import { ORIGIN_A, errorOf, serverLog, sleep, uid, waitLog } from "./helpers.mjs";
import { ResilientClient } from "resilient-fetch";

test("100 concurrent identical GETs reach the server once, and each caller reads the whole body", async () => {
  const id = uid("coalesce"), client = new ResilientClient({ coalesce: true });
  const url = `${ORIGIN_A}/slow?id=${id}&ms=150&bytes=200000`;
  const responses = await Promise.all(Array.from({ length: 100 }, () => client.fetch(url)));
  assert.equal(new Set(responses).size, 100, "each caller has its own Response");
  const bodies = await Promise.all(responses.map((r) => r.text()));
  assert.ok(bodies.every((b) => b.length === 200000 && b === bodies[0]), "every body whole");
  assert.equal((await serverLog(ORIGIN_A, id)).length, 1);
  client.free();
});

test("only identical reads join: other headers, another URL, a POST, or coalescing off are sent", async () => {
  const id = uid("coalesce"), client = new ResilientClient({ coalesce: true, retry: false });
  const url = `${ORIGIN_A}/slow?id=${id}&ms=100`;
  const calls = [
    client.fetch(url),
    client.fetch(url, { headers: { authorization: "Bearer a" } }),
    client.fetch(url, { headers: { authorization: "Bearer b" } }),
    client.fetch(url, { headers: { authorization: "Bearer b" } }), // joins the one before
    client.fetch(`${url}&other=1`),
    client.fetch(url, { method: "POST", body: "x" }),
    client.fetch(url, undefined, { coalesce: false }),
    client.fetch(url, { method: "HEAD" }),
    client.fetch(url, { method: "HEAD" }), // joins the HEAD before
    client.fetch(url, undefined, { idempotencyKey: "k-1" }), // a key header of its own
    client.fetch(url, undefined, { idempotencyKey: "k-2" }),
  ];
  const statuses = (await Promise.all(calls)).map((r) => r.status);
  assert.deepEqual(statuses, Array(11).fill(200));
  assert.equal((await serverLog(ORIGIN_A, id)).length, 9);
  // Coalescing per call on a client that does not: the second joins the first.
  const other = new ResilientClient();
  const id2 = uid("coalesce");
  const per = `${ORIGIN_A}/slow?id=${id2}&ms=100`;
  await Promise.all([other.fetch(per, undefined, { coalesce: true }), other.fetch(per, undefined, { coalesce: true })]);
  assert.equal((await serverLog(ORIGIN_A, id2)).length, 1);
  client.free(); other.free();
});

test("the same read written differently joins: a Request, a URL object, empty headers, options at their defaults", async () => {
  const id = uid("coalesce"), client = new ResilientClient({ coalesce: true, retry: false });
  const url = `${ORIGIN_A}/slow?id=${id}&ms=100`;
  const calls = [
    client.fetch(url),
    client.fetch(new Request(url)),
    client.fetch(new URL(url)),
    client.fetch(url, { headers: {} }),
    client.fetch(url, { method: "GET", cache: "default", redirect: "follow", credentials: "same-origin", mode: "cors" }),
    client.fetch(new Request(url, { redirect: "follow" }), { keepalive: false }),
  ];
  assert.deepEqual((await Promise.all(calls)).map((r) => r.status), Array(calls.length).fill(200));
  assert.equal((await serverLog(ORIGIN_A, id)).length, 1);
  // An option away from its default is another request.
  const id2 = uid("coalesce");
  const other = `${ORIGIN_A}/slow?id=${id2}&ms=100`;
  await Promise.all([client.fetch(other), client.fetch(other, { redirect: "manual" }), client.fetch(new Request(other, { redirect: "manual" }))]);
  assert.equal((await serverLog(ORIGIN_A, id2)).length, 2);
  client.free();
});

test("a caller that aborts leaves alone; the request is aborted only when every caller has", async () => {
  const client = new ResilientClient({ coalesce: true, retry: false });
  // One of two leaves: the other gets the answer, the request is not cut.
  const id = uid("coalesce"), url = `${ORIGIN_A}/slow?id=${id}&ms=200`;
  const leaving = new AbortController();
  const first = client.fetch(url, { signal: leaving.signal });
  const second = client.fetch(url);
  await sleep(50);
  leaving.abort(new Error("changed my mind"));
  assert.equal((await errorOf(first))?.message, "changed my mind");
  assert.equal(await (await second).text(), "slow");
  const [entry] = await serverLog(ORIGIN_A, id);
  assert.equal(entry.closedEarly, false, "the request went on for the caller still waiting");
  // Both leave: the request is aborted, so the server sees the connection close.
  const id2 = uid("coalesce"), hang = `${ORIGIN_A}/hang?id=${id2}`;
  const a = new AbortController(), b = new AbortController();
  const calls = [client.fetch(hang, { signal: a.signal }), client.fetch(hang, { signal: b.signal })].map(errorOf);
  await waitLog(ORIGIN_A, id2, (log) => log.length === 1);
  a.abort();
  await sleep(50);
  assert.equal((await serverLog(ORIGIN_A, id2))[0].closedEarly, false, "one caller still waits");
  b.abort();
  const errors = await Promise.all(calls);
  assert.ok(errors.every((e) => e?.name === "AbortError"), errors.map(String).join());
  const log = await waitLog(ORIGIN_A, id2, (l) => l[0].closedEarly === true);
  assert.equal(log[0].closedEarly, true, "the request was aborted once no caller waited");
  client.free();
});

test("nothing is kept after a flight settles, and a failure reaches every caller", async () => {
  const client = new ResilientClient({ coalesce: true, retry: false });
  const id = uid("coalesce"), url = `${ORIGIN_A}/slow?id=${id}&ms=20`;
  await (await client.fetch(url)).text();
  await (await client.fetch(url)).text();
  assert.equal((await serverLog(ORIGIN_A, id)).length, 2, "a later identical call is sent again");
  const id2 = uid("coalesce");
  const failing = `${ORIGIN_A}/flaky?id=${id2}&fail=1&code=drop`;
  const errors = await Promise.all([client.fetch(failing), client.fetch(failing)].map(errorOf));
  assert.ok(errors.every((e) => e instanceof TypeError), errors.map(String).join());
  assert.equal((await serverLog(ORIGIN_A, id2)).length, 1);
  client.free();
});

test("a lone coalesced call's abort after it resolved still stops its body, and closes the connection", async () => {
  const client = new ResilientClient({ coalesce: true, retry: false });
  // Aborted before the body is read.
  const id = uid("coalesce"), url = `${ORIGIN_A}/trickle?id=${id}&chunks=40&everyMs=50`;
  const ac = new AbortController();
  const res = await client.fetch(url, { signal: ac.signal });
  ac.abort(new Error("left the page"));
  assert.equal((await errorOf(res.text()))?.message, "left the page");
  assert.equal((await waitLog(ORIGIN_A, id, (l) => l[0]?.closedEarly === true))[0].closedEarly, true);
  // Aborted while the body is read.
  const id2 = uid("coalesce"), url2 = `${ORIGIN_A}/trickle?id=${id2}&chunks=40&everyMs=50`;
  const ac2 = new AbortController();
  const reading = errorOf((await client.fetch(url2, { signal: ac2.signal })).text());
  await sleep(120);
  ac2.abort(new Error("left later"));
  assert.equal((await reading)?.message, "left later");
  const log = await waitLog(ORIGIN_A, id2, (l) => l[0]?.closedEarly === true);
  assert.ok(log[0].closedEarly && log[0].sent < 40, JSON.stringify(log));
  client.free();
});

test("each coalesced caller's signal stops its own copy of the body, and only that", async () => {
  const client = new ResilientClient({ coalesce: true, retry: false });
  const id = uid("coalesce"), url = `${ORIGIN_A}/trickle?id=${id}&chunks=4&everyMs=60`;
  const leaving = new AbortController(), staying = new AbortController();
  const [a, b] = await Promise.all([client.fetch(url, { signal: leaving.signal }), client.fetch(url, { signal: staying.signal })]);
  leaving.abort(new Error("a left"));
  assert.equal((await errorOf(a.text()))?.message, "a left");
  assert.equal(b.bodyUsed, false);
  assert.equal(await b.text(), "chunk 0\nchunk 1\nchunk 2\nchunk 3\n");
  assert.equal((await serverLog(ORIGIN_A, id))[0].closedEarly, false, "the request went on for the caller still reading");
  client.free();
});

test("one coalesced caller's body cut by bodyTimeoutMs leaves another's untouched", async () => {
  const client = new ResilientClient({ coalesce: true, retry: false, bodyTimeoutMs: 100 });
  // A waits 150 ms for the second chunk and is cut; B reads later, once every chunk is there.
  const id = uid("coalesce"), url = `${ORIGIN_A}/trickle?id=${id}&chunks=3&everyMs=150`;
  const [a, b] = await Promise.all([client.fetch(url), client.fetch(url)]);
  assert.equal((await errorOf(a.text()))?.name, "TimeoutError");
  await waitLog(ORIGIN_A, id, (l) => l[0]?.sent === 3);
  await sleep(50);
  assert.equal(b.bodyUsed, false, "the other caller's body is not used");
  assert.equal(await b.text(), "chunk 0\nchunk 1\nchunk 2\n");
  assert.equal(client.stats()[ORIGIN_A].timeouts, 1, "one body timeout counted");
  // Both wait on a body that stalls: each is cut on its own, each with a TimeoutError.
  const id2 = uid("coalesce"), stalled = `${ORIGIN_A}/stalled-body?id=${id2}`;
  const [c, d] = await Promise.all([client.fetch(stalled), client.fetch(stalled)]);
  assert.equal((await errorOf(c.text()))?.name, "TimeoutError");
  assert.equal(d.bodyUsed, false);
  assert.equal((await errorOf(d.text()))?.name, "TimeoutError");
  const log = await waitLog(ORIGIN_A, id2, (l) => l[0]?.closedEarly === true);
  assert.equal(log[0].closedEarly, true, "the connection released once no copy reads");
  client.free();
});

test("a coalesced caller's body.cancel() settles at once and leaves the others' bodies whole", async () => {
  const client = new ResilientClient({ coalesce: true, retry: false });
  for (const which of [0, 1]) { // the clone, then the response itself
    const id = uid("coalesce"), url = `${ORIGIN_A}/slow?id=${id}&ms=50&bytes=200000`;
    const responses = await Promise.all([client.fetch(url), client.fetch(url)]);
    const [cancelled, reader] = which === 0 ? responses : [...responses].reverse();
    const settled = await Promise.race([cancelled.body.cancel().then(() => "settled"), sleep(1000).then(() => "pending")]);
    assert.equal(settled, "settled", `cancel of copy ${which}`);
    assert.equal((await reader.text()).length, 200000);
    // The same through a read method's stream: text() of the other, then cancel.
    assert.equal((await serverLog(ORIGIN_A, id)).length, 1);
  }
  client.free();
});

test("options at their defaults join one flight, the init-only priority among them", async () => {
  const id = uid("coalesce"), client = new ResilientClient({ coalesce: true, retry: false });
  const url = `${ORIGIN_A}/slow?id=${id}&ms=100`;
  const calls = [
    client.fetch(url),
    client.fetch(url, { priority: "auto" }),
    client.fetch(url, { priority: "auto", headers: {} }),
    client.fetch(new Request(url), { priority: "auto" }),
  ];
  assert.deepEqual((await Promise.all(calls)).map((r) => r.status), [200, 200, 200, 200]);
  assert.equal((await serverLog(ORIGIN_A, id)).length, 1);
  // Another priority is another request, on the fast path and through a Request alike.
  const id2 = uid("coalesce"), other = `${ORIGIN_A}/slow?id=${id2}&ms=100&h=1`;
  await Promise.all([
    client.fetch(other), client.fetch(other, { priority: "high" }),
    client.fetch(other, { priority: "low", headers: { "x-a": "1" } }), client.fetch(other, { priority: "high", headers: { "x-a": "1" } }),
  ]);
  assert.equal((await serverLog(ORIGIN_A, id2)).length, 4);
  client.free();
});

test("the connection is released when one coalesced caller left unread and the other cancels its body", async () => {
  const client = new ResilientClient({ coalesce: true, retry: false });
  const id = uid("coalesce"), url = `${ORIGIN_A}/trickle?id=${id}&chunks=200&everyMs=20`;
  const leaving = new AbortController();
  const [a, b] = await Promise.all([client.fetch(url, { signal: leaving.signal }), client.fetch(url)]);
  leaving.abort(new Error("a left")); // A's copy ends before anyone read it
  const reader = b.body.getReader();
  assert.equal((await reader.read()).done, false);
  await reader.cancel("b is done");
  const log = await waitLog(ORIGIN_A, id, (l) => l[0]?.closedEarly === true);
  assert.ok(log[0].closedEarly && log[0].sent < 200, JSON.stringify(log));
  assert.equal((await errorOf(a.text()))?.message, "a left");
  client.free();
});
