// builds: full (a capability of resilient-fetch/full: tests/package/run.mjs)
// Resumed downloads (policy `resume`) through the package used by name against the fault
// server on 127.0.0.1 (its /resource route cuts the connection at chosen offsets of the whole
// resource): the caller reads one unbroken body, checked by hash; the server's log shows each
// range asked for starting exactly where the bytes the caller had ended; every resume is an
// attempt; a body that cannot be resumed errors naming why.
import test from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { ORIGIN_A, serverLog, sleep, uid, waitLog } from "./helpers.mjs";
import { ResilientClient, TimeoutError, CircuitOpenError } from "resilient-fetch";

const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

/** The resource's bytes as the server holds them, read uncut with the platform's fetch. */
async function whole(query) {
  const res = await fetch(`${ORIGIN_A}/resource?id=${uid("whole")}&${query}`);
  return new Uint8Array(await res.arrayBuffer());
}

/** A client that resumes (attempts enough for the cuts, short backoffs), its events kept. */
function recorded(policy = {}) {
  const events = [];
  const client = new ResilientClient({
    resume: true,
    retry: { maxAttempts: 10, baseDelayMs: 1, maxDelayMs: 5 },
    ...policy,
    onEvent: (e) => events.push(e),
  });
  return { client, events };
}

/** Every chunk of `res`'s body read with its stream's reader: [bytes, the error it ended with]. */
async function readStream(res) {
  const reader = res.body.getReader();
  const chunks = [];
  let error = null;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
    }
  } catch (e) {
    error = e;
  }
  return [Buffer.concat(chunks), error];
}

/** Each request after the first asked for the bytes from exactly where the previous answer stopped. */
function assertContiguous(log) {
  for (let i = 1; i < log.length; i++) {
    const before = log[i - 1];
    const at = before.start + before.sent;
    assert.equal(log[i].range, `bytes=${at}-`, `request ${i + 1} asks from ${at}: ${JSON.stringify(log)}`);
    assert.equal(log[i].start, at);
    assert.equal(log[i].status, 206);
    assert.equal(log[i].ifRange, '"v1"');
  }
}

test("a body cut three times is read whole: the bytes are the resource's, no byte is sent twice", async () => {
  const query = "bytes=1000000&cuts=100000,250000,250001";
  const expected = sha256(await whole(query.replace(/&cuts=.*/, "")));
  const id = uid("resume");
  const { client, events } = recorded();
  const res = await client.fetch(`${ORIGIN_A}/resource?id=${id}&${query}`);
  const bytes = new Uint8Array(await res.arrayBuffer());
  assert.equal(bytes.length, 1000000);
  assert.equal(sha256(bytes), expected);
  const log = await serverLog(ORIGIN_A, id);
  assert.deepEqual(log.map((e) => e.sent), [100000, 150000, 1, 749999]);
  assertContiguous(log);
  assert.equal(log.reduce((n, e) => n + e.sent, 0), 1000000, "no byte re-sent beyond a cut");
  // Each resume is an attempt of the call: a retry after a network error, then its attempt.
  const retries = events.filter((e) => e.type === "retry");
  assert.deepEqual(retries.map((e) => [e.attempt, e.reason]), [[2, "network"], [3, "network"], [4, "network"]]);
  assert.deepEqual(events.filter((e) => e.type === "attemptEnd").map((e) => e.status), [200, 206, 206, 206]);
  assert.equal(client.stats()[ORIGIN_A].attempts, 4);
  client.free();
});

test("read with the stream's reader, the caller's one stream goes on past each cut", async () => {
  const query = "bytes=300000&cuts=65536,200000";
  const expected = sha256(await whole("bytes=300000"));
  const id = uid("resume");
  const { client } = recorded();
  const res = await client.fetch(`${ORIGIN_A}/resource?id=${id}&${query}`);
  const [bytes, error] = await readStream(res);
  assert.equal(error, null);
  assert.equal(sha256(bytes), expected);
  assertContiguous(await serverLog(ORIGIN_A, id));
  client.free();
});

test("a cut inside a multi-byte UTF-8 character: text() is the resource's text", async () => {
  // "a€😀é" is 10 bytes: offset 2 is inside "€", 7 inside "😀", 19 inside "é".
  const query = "bytes=1000&text=1";
  const expected = new TextDecoder().decode(await whole(query));
  const id = uid("resume");
  const { client } = recorded();
  const res = await client.fetch(`${ORIGIN_A}/resource?id=${id}&${query}&cuts=2,7,19`);
  assert.equal(await res.text(), expected);
  assert.ok(expected.includes("€😀é"));
  const log = await serverLog(ORIGIN_A, id);
  assert.deepEqual(log.map((e) => e.range), [null, "bytes=2-", "bytes=7-", "bytes=19-"]);
  client.free();
});

test("a gap of bodyTimeoutMs is resumed too: the stalled attempt ends, the rest comes", async () => {
  const expected = sha256(await whole("bytes=200000"));
  const id = uid("resume");
  const { client, events } = recorded({ bodyTimeoutMs: 300 });
  const res = await client.fetch(`${ORIGIN_A}/resource?id=${id}&bytes=200000&stalls=50000`);
  assert.equal(sha256(new Uint8Array(await res.arrayBuffer())), expected);
  const log = await serverLog(ORIGIN_A, id);
  assert.deepEqual(log.map((e) => e.range), [null, "bytes=50000-"]);
  assert.equal(log[0].closedEarly, true, "the stalled attempt's connection was closed");
  assert.deepEqual(events.filter((e) => e.type === "retry").map((e) => e.reason), ["timeout"]);
  assert.ok(events.some((e) => e.type === "bodyTimeout" && e.reason === "idle"));
  client.free();
});

/** The error `res`'s body ends with, read whole (arrayBuffer) and as a stream, and the bytes the stream gave first. */
async function brokenBody(client, url) {
  const res = await client.fetch(url);
  const [bytes, error] = await readStream(res);
  return { bytes, error };
}

test("a server that ignores Range (200): the stream errors naming why, after the bytes before the cut", async () => {
  const id = uid("resume");
  const { client } = recorded();
  const { bytes, error } = await brokenBody(client, `${ORIGIN_A}/resource?id=${id}&bytes=8000000&cuts=100000&ignoreRange=1`);
  assert.equal(bytes.length, 100000);
  assert.ok(error instanceof TypeError, String(error));
  assert.equal(error.reason, "whole");
  assert.match(error.message, /could not be resumed: the server sent the whole body again \(200\)/);
  assert.ok(error.cause instanceof Error, "the cut is its cause");
  // The server sees the second connection closed a moment after the stream errors: wait for it.
  const log = await waitLog(ORIGIN_A, id, (l) => l[1]?.closedEarly === true);
  assert.deepEqual(log.map((e) => [e.range, e.status]), [[null, 200], ["bytes=100000-", 200]]);
  assert.equal(log[1].closedEarly, true, "the 200's body is not read");
  client.free();
});

test("the resource changed (its ETag differs): If-Range makes the server answer 200, refused", async () => {
  const id = uid("resume");
  const { client } = recorded();
  const { error } = await brokenBody(client, `${ORIGIN_A}/resource?id=${id}&bytes=300000&cuts=100000&changeEtagAfter=1`);
  assert.equal(error?.reason, "whole");
  const log = await serverLog(ORIGIN_A, id);
  assert.equal(log[1].ifRange, '"v1"');
  assert.equal(log[1].status, 200);
  client.free();
});

test("a first response that cannot be resumed: no validator, a weak ETag, a Content-Encoding; no second request", async () => {
  const { client } = recorded();
  for (const [query, reason, words] of [
    ["etag=none", "no-validator", /neither an ETag nor a Last-Modified/],
    ["etag=weak", "weak-validator", /its ETag is weak/],
    ["encoding=gzip", "encoded", /Content-Encoding/],
  ]) {
    const id = uid("resume");
    const { error } = await brokenBody(client, `${ORIGIN_A}/resource?id=${id}&bytes=300000&cuts=1000&${query}`);
    assert.ok(error instanceof TypeError, `${query}: ${error}`);
    assert.equal(error.reason, reason, query);
    assert.match(error.message, words);
    assert.equal((await serverLog(ORIGIN_A, id)).length, 1, `${query}: nothing asked again`);
  }
  client.free();
});

test("a strong Last-Modified validates when there is no ETag: If-Range carries the date", async () => {
  const expected = sha256(await whole("bytes=100000"));
  const id = uid("resume");
  const { client } = recorded();
  const res = await client.fetch(`${ORIGIN_A}/resource?id=${id}&bytes=100000&cuts=40000&etag=none&lastModified=1`);
  assert.equal(sha256(new Uint8Array(await res.arrayBuffer())), expected);
  const log = await serverLog(ORIGIN_A, id);
  assert.equal(log.length, 2);
  assert.match(log[1].ifRange, /GMT$/);
  client.free();
});

test("each resume is an attempt: retry.maxAttempts ends them, and so does resume.maxResumes", async () => {
  let id = uid("resume");
  let { client, events } = recorded({ retry: { maxAttempts: 3, baseDelayMs: 1 } });
  let { bytes, error } = await brokenBody(client, `${ORIGIN_A}/resource?id=${id}&bytes=100000&cuts=10000,20000,30000`);
  assert.equal(bytes.length, 30000, "two resumes, then none");
  assert.equal(error?.reason, "maxAttempts", String(error));
  assert.equal((await serverLog(ORIGIN_A, id)).length, 3);
  assert.deepEqual(events.filter((e) => e.type === "giveUp").map((e) => [e.reason, e.attempts]), [["maxAttempts", 3]]);
  client.free();

  id = uid("resume");
  ({ client } = recorded({ resume: { maxResumes: 1 } }));
  ({ bytes, error } = await brokenBody(client, `${ORIGIN_A}/resource?id=${id}&bytes=100000&cuts=10000,20000`));
  assert.equal(bytes.length, 20000);
  assert.equal(error?.reason, "exhausted");
  assert.match(error.message, /resume\.maxResumes/);
  client.free();
});

test("a resume the deadline leaves no time for fails with the call's TimeoutError", async () => {
  const id = uid("resume");
  const { client, events } = recorded({ totalTimeoutMs: 2000, retry: { maxAttempts: 5, baseDelayMs: 5000, maxDelayMs: 5000, jitter: "none" } });
  const t0 = performance.now();
  const { bytes, error } = await brokenBody(client, `${ORIGIN_A}/resource?id=${id}&bytes=100000&cuts=10000`);
  assert.ok(performance.now() - t0 < 1500, "refused at once, not after the backoff");
  assert.equal(bytes.length, 10000);
  assert.ok(error instanceof TimeoutError, String(error));
  assert.deepEqual(events.filter((e) => e.type === "giveUp").map((e) => e.reason), ["deadline"]);
  assert.equal((await serverLog(ORIGIN_A, id)).length, 1);
  client.free();
});

test("the breaker hears a resume: an origin it opened meanwhile refuses it with CircuitOpenError", async () => {
  const id = uid("resume");
  const { client } = recorded({ breaker: { mode: "consecutive", failureThreshold: 1, cooldownMs: 60000 } });
  const res = await client.fetch(`${ORIGIN_A}/resource?id=${id}&bytes=100000&cuts=10000`);
  // Another call of the client fails on the same origin: its breaker opens.
  await (await client.fetch(`${ORIGIN_A}/status?id=${id}-503&code=503`, {}, { retry: false })).text();
  assert.equal(client.breakerState(ORIGIN_A), "open");
  const [bytes, error] = await readStream(res);
  // (What had arrived unread when the connection broke may be gone: a stream's queue is emptied on an error.)
  assert.ok(bytes.length <= 10000);
  assert.ok(error instanceof CircuitOpenError, String(error));
  assert.equal((await serverLog(ORIGIN_A, id)).length, 1, "nothing sent");
  client.free();
});

test("the caller's abort while a resume waits ends the body with the abort reason", async () => {
  const id = uid("resume");
  const { client } = recorded({ retry: { maxAttempts: 3, baseDelayMs: 3000, maxDelayMs: 3000, jitter: "none" } });
  const controller = new AbortController();
  const res = await client.fetch(`${ORIGIN_A}/resource?id=${id}&bytes=100000&cuts=10000`, { signal: controller.signal });
  const reading = readStream(res);
  setTimeout(() => controller.abort(new Error("stop")), 200);
  const t0 = performance.now();
  const [, error] = await reading;
  assert.ok(performance.now() - t0 < 2000, "not after the backoff");
  assert.equal(error?.message, "stop");
  assert.equal((await serverLog(ORIGIN_A, id)).length, 1);
  client.free();
});

test("cancelling the body while its resume waits stops the resume: no range request is sent", async () => {
  const id = uid("resume");
  let reader;
  let cancelled;
  const client = new ResilientClient({
    resume: true, retry: { maxAttempts: 3, baseDelayMs: 300, maxDelayMs: 300, jitter: "none" },
    // The resume is decided (its backoff begins): the caller cancels then.
    onEvent: (e) => { if (e.type === "retry") cancelled = reader.cancel(new Error("enough")); },
  });
  const res = await client.fetch(`${ORIGIN_A}/resource?id=${id}&bytes=100000&cuts=10000`);
  reader = res.body.getReader();
  let got = 0;
  const reading = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      got += value.byteLength;
    }
  })();
  await reading.catch(() => {});
  await cancelled;
  assert.equal(got, 10000);
  await sleep(600);
  assert.equal((await serverLog(ORIGIN_A, id)).length, 1, "the resume was not sent");
  client.free();
});

test("without resume a cut errors the body as fetch's does, and a GET only is resumed", async () => {
  const id = uid("resume");
  const plain = new ResilientClient();
  const { bytes, error } = await brokenBody(plain, `${ORIGIN_A}/resource?id=${id}&bytes=100000&cuts=10000`);
  assert.equal(bytes.length, 10000);
  assert.ok(error instanceof TypeError && error.reason === undefined, String(error));
  assert.equal((await serverLog(ORIGIN_A, id)).length, 1);
  plain.free();
});

test("bad resume options are refused naming the field and its range", async () => {
  assert.throws(() => new ResilientClient({ resume: 1 }), { name: "TypeError", message: /resume must be true, false or an object \(got a number\)/ });
  assert.throws(() => new ResilientClient({ resume: { maxResumes: 0 } }), { name: "RangeError", message: /resume\.maxResumes must be an integer from 1 to 20 \(got 0\)/ });
  assert.throws(() => new ResilientClient({ resume: { maxResume: 2 } }), { name: "TypeError", message: /did you mean "resume\.maxResumes"/ });
  const client = new ResilientClient();
  await assert.rejects(client.fetch(`${ORIGIN_A}/ok`, {}, { resume: { maxResumes: 21 } }), { name: "RangeError" });
  client.free();
});
