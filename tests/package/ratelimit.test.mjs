// builds: full (a capability of resilient-fetch/full: tests/package/run.mjs)
// Listening before the 429: rate-limit headers, origin-wide Retry-After holds and adaptive
// throttling, through the package used by name against the fault server on 127.0.0.1.
import test from "node:test";
import assert from "node:assert/strict";
import { ORIGIN_A, ORIGIN_B, errorOf, serverLog, sleep, uid } from "./helpers.mjs";
import { ResilientClient, RateLimitError, ThrottledError } from "resilient-fetch";

/** A client whose events are kept: { client, events }. */
function recorded(policy = {}) {
  const events = [];
  const client = new ResilientClient({ ...policy, onEvent: (e) => events.push({ ...e, at: performance.now() }) });
  return { client, events };
}

/** Date.now() (the server's log) counts whole ms, the client's clock is performance.now(). */
const CLOCK_MS = 5;

/** Statuses the server answered for id, in order. */
const statuses = async (id) => (await serverLog(ORIGIN_A, id)).map((e) => e.status);

for (const form of ["draft", "x", "bare"]) {
  test(`a server that advertises its quota (${form} headers) never has to answer 429`, async () => {
    const id = uid(`quota-${form}`);
    const { client, events } = recorded();
    const url = `${ORIGIN_A}/quota?id=${id}&limit=4&windowMs=1000&form=${form}`;
    // One call learns the quota; then a burst three times what is left arrives at once.
    assert.equal((await client.fetch(url)).status, 200);
    const responses = await Promise.all(Array.from({ length: 9 }, () => client.fetch(url)));
    assert.deepEqual(responses.map((r) => r.status), Array(9).fill(200));
    await Promise.all(responses.map((r) => r.text()));
    const log = await serverLog(ORIGIN_A, id);
    const seen = log.map((e) => e.status);
    assert.equal(seen.length, 10, "every call was sent once");
    assert.ok(!seen.includes(429), `the server answered ${seen}`);
    // Never more than the limit in one of the server's windows (with no stated limit, "bare",
    // the window after the reset is taken to hold the most an answer said was left, plus one).
    const perWindow = new Map();
    for (const e of log) perWindow.set(Math.floor(e.t / 1000), (perWindow.get(Math.floor(e.t / 1000)) ?? 0) + 1);
    assert.ok([...perWindow.values()].every((n) => n <= 4), JSON.stringify([...perWindow]));
    // Those beyond the quota were booked into the next windows, in the order they came.
    const waits = events.filter((e) => e.type === "rateLimitWait");
    assert.ok(waits.length >= 5, `calls waited for the reset (${waits.length} waits)`);
    assert.ok(waits.every((e) => e.reason === "quota" && e.delayMs > 0 && e.delayMs <= 2000), JSON.stringify(waits));
    // When each was booked to send: the event's time plus its wait, each read a moment apart
    // (the wait when the call asked, the time when the event was told), so calls booked into
    // one window differ by that moment (a few ms on a loaded machine); a later window is a
    // whole window (1 000 ms) later.
    const slots = waits.map((e) => e.at + e.delayMs);
    assert.ok(slots.every((t, i) => i === 0 || t >= slots[i - 1] - 50), `booked first, sent first: ${slots}`);
  });
}

/** Waits until `ms` after the start of the server's next window of `windowMs` (its windows are
 * aligned to multiples of windowMs since the epoch): sends made at once then fall in one window. */
const windowStart = (windowMs, ms = 20) => sleep(windowMs - (Date.now() % windowMs) + ms);

test("a waiter aborted gives its slot to the waiters behind it; new calls wait no window more", async () => {
  const id = uid("quota-abort");
  const client = new ResilientClient();
  const url = `${ORIGIN_A}/quota?id=${id}&limit=2&windowMs=1000`;
  await windowStart(1000);
  // Two calls spend the window; three more find it spent and wait; the first is aborted at 30 ms.
  for (let i = 0; i < 2; i++) await (await client.fetch(url)).text();
  const ac = new AbortController();
  const waiters = [client.fetch(url, { signal: ac.signal }), client.fetch(url), client.fetch(url)];
  setTimeout(() => ac.abort(), 30);
  const aborted = await errorOf(waiters[0]);
  assert.equal(aborted?.name, "AbortError", String(aborted));
  for (const r of await Promise.all(waiters.slice(1))) assert.equal(r.status, 200, await r.text());
  // A new call after them: the next window is b's and c's, so it goes in the one after; so
  // does another call made then.
  assert.equal((await client.fetch(url)).status, 200);
  assert.equal((await client.fetch(url)).status, 200);
  const log = await serverLog(ORIGIN_A, id);
  const windows = log.map((e) => Math.floor(e.t / 1000) - Math.floor(log[0].t / 1000));
  assert.deepEqual(log.map((e) => e.status), Array(6).fill(200), "the server never answered 429");
  assert.deepEqual(windows, [0, 0, 1, 1, 2, 2], "b and c went at the reset, the new calls one window later");
});

test("a reset a year ahead holds the origin at most retry.maxRetryAfterMs; then one call asks first", async () => {
  const id = uid("far-reset");
  const client = new ResilientClient({ retry: { maxRetryAfterMs: 1000 } });
  // Each answer 150 ms after its request: a call that did not wait for the probe's answer
  // would reach the origin before that answer left.
  const url = `${ORIGIN_A}/far-reset?id=${id}&ms=150`;
  assert.equal((await client.fetch(url)).status, 200);
  const stats = client.stats()[ORIGIN_A];
  assert.equal(stats.quotaRemaining, 0);
  assert.ok(stats.waitMs > 0 && stats.waitMs <= 1000, `waitMs ${stats.waitMs}: the claimed year cut to the cap`);
  // None of three calls is refused: one asks when the cap ends, the others after its answer.
  const responses = await Promise.all([client.fetch(url), client.fetch(url), client.fetch(url)]);
  assert.deepEqual(responses.map((r) => r.status), [200, 200, 200]);
  // The causes, from the origin's log (when each request came, when its answer went): the
  // hold is the cap, counted from the claim's answer (the client heard it after that); the
  // calls behind the probe went after its answer, not beside it. CLOCK_MS: Date.now() is whole
  // ms, the client's clock performance.now().
  const [told, probe, ...rest] = await serverLog(ORIGIN_A, id);
  assert.equal(rest.length, 2);
  assert.ok(probe.t >= told.answered + 1000 - CLOCK_MS, `the probe went ${probe.t - told.answered} ms after the claim's answer, not the cap's 1 000`);
  assert.ok(rest.every((e) => e.t >= probe.answered), `the others asked after the probe's answer: ${rest.map((e) => e.t - probe.answered)} ms`);
});

test("a server still limited answers the probe: one request per retry.maxRetryAfterMs, not a burst", async () => {
  const id = uid("far-reset-again");
  const client = new ResilientClient({ retry: { maxAttempts: 1, maxRetryAfterMs: 1000 } });
  const url = `${ORIGIN_A}/far-reset?id=${id}&claims=2&code=429`;
  assert.equal((await client.fetch(url)).status, 429);
  const responses = await Promise.all([client.fetch(url), client.fetch(url), client.fetch(url)]);
  assert.deepEqual(responses.map((r) => r.status).sort(), [200, 200, 429]);
  const log = await serverLog(ORIGIN_A, id);
  assert.deepEqual(log.map((e) => e.status), [429, 429, 200, 200]);
  // While the server is still limited (after each 429), one request per cap, counted from the
  // 429's answer (when the client heard it, at the soonest); once it answers 200 with its
  // quota back, the call still waiting may go at once (after that answer).
  const gaps = log.slice(1).map((e, i) => ({ after: log[i].status, ms: e.t - log[i].answered }));
  assert.ok(gaps.filter((g) => g.after === 429).every((g) => g.ms >= 1000 - CLOCK_MS),
    `one request at a time after a 429, a cap (1 000 ms) after its answer: ${JSON.stringify(gaps)}`);
  assert.ok(gaps.every((g) => g.ms >= 0), `each request after the answer before it: ${JSON.stringify(gaps)}`);
});

test("an origin that starts sending rate-limit headers later is heard on its first such answer", async () => {
  const id = uid("quota-late");
  const client = new ResilientClient({ retry: false });
  const url = `${ORIGIN_A}/quota?id=${id}&limit=3&windowMs=60000&quietFor=10`;
  for (let i = 0; i < 10; i++) await (await client.fetch(url)).text();
  assert.equal(client.stats()[ORIGIN_A].quotaRemaining, undefined, "ten answers without the headers");
  for (let i = 0; i < 3; i++) await (await client.fetch(url)).text();
  // The fourth call in the window would be refused: it is not sent.
  const error = await errorOf(client.fetch(url, undefined, { rateLimit: { maxWaitMs: 0 } }));
  assert.ok(error instanceof RateLimitError, String(error));
  assert.ok(!(await statuses(id)).includes(429));
});

test("without pacing (rateLimit: false) the same burst gets 429s: the test can fail", async () => {
  const id = uid("quota-off");
  const client = new ResilientClient({ rateLimit: false, retry: false });
  const url = `${ORIGIN_A}/quota?id=${id}&limit=4&windowMs=1000`;
  await (await client.fetch(url)).text();
  const responses = await Promise.all(Array.from({ length: 9 }, () => client.fetch(url)));
  await Promise.all(responses.map((r) => r.text()));
  assert.ok((await statuses(id)).includes(429));
});

test("a wait longer than maxWaitMs rejects at once with a RateLimitError, nothing sent", async () => {
  const id = uid("quota-reject");
  const { client, events } = recorded({ rateLimit: { maxWaitMs: 20 } });
  const url = `${ORIGIN_A}/quota?id=${id}&limit=1&windowMs=60000`;
  assert.equal((await client.fetch(url)).status, 200);
  const started = performance.now();
  const error = await errorOf(client.fetch(url));
  assert.ok(performance.now() - started < 200, "rejected without waiting");
  assert.ok(error instanceof RateLimitError, String(error));
  assert.equal(error.name, "RateLimitError");
  assert.equal(error.origin, ORIGIN_A);
  assert.equal(error.reason, "quota");
  assert.ok(error.retryAfterMs > 20 && error.retryAfterMs <= 60000, String(error.retryAfterMs));
  assert.match(error.message, /asked to wait .* nothing was sent/);
  assert.deepEqual(await statuses(id), [200], "the second call was not sent");
  assert.ok(events.some((e) => e.type === "rateLimitRejected" && e.reason === "quota"));
  const stats = client.stats()[ORIGIN_A];
  assert.equal(stats.rateLimited, 1);
  assert.equal(stats.quotaRemaining, 0);
  assert.ok(stats.waitMs > 0);
});

test("a call whose deadline comes before the reset rejects at once too", async () => {
  const id = uid("quota-deadline");
  const client = new ResilientClient();
  const url = `${ORIGIN_A}/quota?id=${id}&limit=1&windowMs=60000`;
  await (await client.fetch(url)).text();
  const error = await errorOf(client.fetch(url, undefined, { totalTimeoutMs: 100 }));
  assert.ok(error instanceof RateLimitError, String(error));
  assert.deepEqual(await statuses(id), [200]);
});

test("a Retry-After on a 429 holds every call of the client to that origin, not to others", async () => {
  const id = uid("hold");
  const { client, events } = recorded({ retry: false });
  const told = await client.fetch(`${ORIGIN_A}/retry-after?id=${id}&value=1&code=429`);
  assert.equal(told.status, 429);
  const heldFrom = performance.now();
  // Another caller, another path of the same origin: it waits the hold out before sending.
  const other = uid("held"), elsewhere = uid("free");
  const [held, free] = await Promise.all([
    client.fetch(`${ORIGIN_A}/ok?id=${other}`).then((r) => [r.status, performance.now() - heldFrom]),
    client.fetch(`${ORIGIN_B}/ok?id=${elsewhere}`).then((r) => [r.status, performance.now() - heldFrom]),
  ]);
  assert.equal(held[0], 200);
  assert.ok(held[1] >= 900, `waited ${held[1]} ms for the hold`);
  assert.equal(free[0], 200);
  // The causes, from the origins' logs: A's call went a whole second (the Retry-After) after the
  // 429's answer; B's, asked at the same moment, went before A's did: it waited for no hold.
  const [toldEntry] = await serverLog(ORIGIN_A, id), [entry] = await serverLog(ORIGIN_A, other);
  const [freeEntry] = await serverLog(ORIGIN_B, elsewhere);
  assert.ok(entry.t >= toldEntry.answered + 1000 - CLOCK_MS, `sent ${entry.t - toldEntry.answered} ms after the 429's answer, not after the hold`);
  assert.ok(freeEntry.t < entry.t, `origin B was not held: its call went ${freeEntry.t - toldEntry.answered} ms after the 429's answer, A's ${entry.t - toldEntry.answered} ms`);
  const wait = events.find((e) => e.type === "rateLimitWait");
  assert.equal(wait.reason, "retryAfter");
  assert.equal(wait.origin, ORIGIN_A);
});

test("rateLimit.maxWaitMs shorter than a Retry-After hold: the next call rejects, reason retryAfter", async () => {
  const id = uid("hold-long");
  const client = new ResilientClient({ retry: false, rateLimit: { maxWaitMs: 100 } });
  assert.equal((await client.fetch(`${ORIGIN_A}/retry-after?id=${id}&value=30&code=503`)).status, 503);
  const error = await errorOf(client.fetch(`${ORIGIN_A}/ok`));
  assert.ok(error instanceof RateLimitError);
  assert.equal(error.reason, "retryAfter");
  assert.ok(error.retryAfterMs > 29000);
  client.reset(ORIGIN_A);
  assert.equal((await client.fetch(`${ORIGIN_A}/ok`)).status, 200, "reset() forgets the hold");
});

test("throttle: an origin rejecting most requests is throttled locally with ThrottledError", async () => {
  const id = uid("throttle");
  const { client, events } = recorded({ retry: false, breaker: false, throttle: { k: 1.5, windowMs: 60000 } });
  const results = [];
  for (let i = 0; i < 60; i++) {
    results.push(await client.fetch(`${ORIGIN_A}/status?code=503&id=${id}`).then((r) => r.status, (e) => e));
  }
  const throttled = results.filter((r) => r instanceof ThrottledError);
  assert.ok(throttled.length >= 20, `${throttled.length} of 60 throttled`);
  assert.equal(throttled[0].origin, ORIGIN_A);
  assert.equal(throttled[0].name, "ThrottledError");
  assert.equal((await serverLog(ORIGIN_A, id)).length, 60 - throttled.length, "a throttled call is not sent");
  const event = events.find((e) => e.type === "throttled");
  assert.ok(event.probability > 0 && event.probability < 1);
  assert.equal(client.stats()[ORIGIN_A].throttled, throttled.length);
});

test("throttle is off by default: every call is sent", async () => {
  const id = uid("no-throttle");
  const client = new ResilientClient({ retry: false, breaker: false });
  for (let i = 0; i < 30; i++) await (await client.fetch(`${ORIGIN_A}/status?code=503&id=${id}`)).text();
  assert.equal((await serverLog(ORIGIN_A, id)).length, 30);
});

test("policy errors name the field and the range", async () => {
  const message = (policy) => {
    try {
      new ResilientClient(policy);
      return null;
    } catch (e) {
      return e.message;
    }
  };
  assert.match(message({ throttle: { k: 0.5 } }), /throttle\.k must be a number in 1\.\.=100 \(got 0\.5\)/);
  assert.match(message({ throttle: { windowMs: 10 } }), /throttle\.windowMs must be .*1000/);
  assert.match(message({ rateLimit: { maxWaitMs: -1 } }), /rateLimit\.maxWaitMs/);
  assert.match(message({ rateLimit: "yes" }), /rateLimit must be true, false or an object/);
});
