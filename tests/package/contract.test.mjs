// The README's headline rules, each checked against the installed package as a user meets it:
// which statuses and methods are retried by default, a shouldRetry that says no, the events
// and stats of calls refused without sending, and the error classes. Node, against the fault
// server on 127.0.0.1.
import test from "node:test";
import assert from "node:assert/strict";
import { ORIGIN_A, errorOf, serverLog, uid, fullOnly } from "./helpers.mjs";
import {
  BulkheadFullError, CircuitOpenError, QueuedError, RateLimitError, ResilientClient, ThrottledError, TimeoutError,
} from "resilient-fetch";

const FAST = { baseDelayMs: 1, maxDelayMs: 5 };
const FAST_ATTEMPTS = 3; // the default maxAttempts
const attempts = async (id) => (await serverLog(ORIGIN_A, id)).length;

test("the statuses in retryOn are retried by default (408, 429, 500, 502, 503, 504); others are the answer", async () => {
  const client = new ResilientClient({ retry: FAST, breaker: false, rateLimit: false });
  for (const code of [408, 429, 500, 502, 503, 504]) {
    const id = uid(`retried-${code}`);
    const res = await client.fetch(`${ORIGIN_A}/flaky?id=${id}&fail=1&code=${code}`);
    assert.equal(res.status, 200, `${code}`);
    assert.equal(await attempts(id), 2, `${code}: one retry`);
  }
  // Retries spent: the last answer is the call's, its body whole and readable.
  const id = uid("retries-spent");
  const last = await client.fetch(`${ORIGIN_A}/status?id=${id}&code=503`);
  assert.deepEqual([last.status, await last.text(), await attempts(id)], [503, "status 503", 3]);
  for (const code of [400, 401, 403, 404, 409, 422, 501, 505]) {
    const id = uid(`answer-${code}`);
    const res = await client.fetch(`${ORIGIN_A}/flaky?id=${id}&fail=1&code=${code}`);
    assert.equal(res.status, code);
    await res.arrayBuffer();
    assert.equal(await attempts(id), 1, `${code}: not retried`);
  }
  client.free();
});

// (OPTIONS too: the fault server answers it as a CORS preflight, so it is checked natively.)
test("idempotent methods are retried without a key; POST and PATCH only with one, the same on every attempt", async () => {
  const client = new ResilientClient({ retry: FAST, breaker: false });
  for (const method of ["GET", "HEAD", "PUT", "DELETE"]) {
    const id = uid(`method-${method}`);
    const init = { method, body: method === "PUT" ? "x" : undefined };
    assert.equal((await client.fetch(`${ORIGIN_A}/flaky?id=${id}&fail=1&code=503`, init)).status, 200, method);
    assert.equal(await attempts(id), 2, `${method}: retried`);
  }
  for (const method of ["POST", "PATCH"]) {
    const bare = uid(`method-${method}-nokey`);
    const res = await client.fetch(`${ORIGIN_A}/flaky?id=${bare}&fail=1&code=503`, { method, body: "x" },
      { idempotencyKey: false });
    assert.equal(res.status, 503, `${method} without a key`);
    assert.equal(await attempts(bare), 1, `${method} without a key: never repeated`);
    const keyed = uid(`method-${method}-key`);
    assert.equal((await client.fetch(`${ORIGIN_A}/flaky?id=${keyed}&fail=1&code=503`, { method, body: "x" })).status, 200);
    const log = await serverLog(ORIGIN_A, keyed);
    assert.equal(log.length, 2, `${method} with its key: retried`);
    assert.match(log[0].key, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(log[1].key, log[0].key, "the same key on the retry");
  }
  client.free();
});

test("shouldRetry returning false makes the outcome the call's: one attempt, giveUp with reason shouldRetry", async () => {
  const events = [];
  const client = new ResilientClient({ retry: { ...FAST, shouldRetry: () => false }, breaker: false,
    onEvent: (e) => events.push(e) });
  const id = uid("should-retry-false");
  const res = await client.fetch(`${ORIGIN_A}/flaky?id=${id}&fail=1&code=503`);
  assert.equal(res.status, 503);
  assert.equal(await attempts(id), 1);
  assert.deepEqual(events.filter((e) => e.type === "giveUp").map((e) => e.reason), ["shouldRetry"]);
  assert.equal(events.filter((e) => e.type === "retry").length, 0);
  client.free();
});

test("calls refused without sending: shortCircuit and bulkheadRejected events, stats().shortCircuits", async () => {
  const events = [];
  const client = new ResilientClient({ retry: false, onEvent: (e) => events.push(e),
    breaker: { mode: "consecutive", failureThreshold: 1, cooldownMs: 60_000 } });
  const id = uid("refused");
  assert.equal((await client.fetch(`${ORIGIN_A}/status?id=${id}&code=503`)).status, 503);
  for (let i = 0; i < 3; i++) {
    const e = await errorOf(client.fetch(`${ORIGIN_A}/status?id=${id}&code=503`));
    assert.ok(e instanceof CircuitOpenError, String(e));
    assert.equal(e.origin, ORIGIN_A);
    assert.ok(e.message.includes(ORIGIN_A), e.message);
  }
  assert.equal(await attempts(id), 1, "nothing sent while open");
  const short = events.filter((e) => e.type === "shortCircuit");
  assert.equal(short.length, 3);
  assert.equal(short[0].origin, ORIGIN_A);
  assert.ok(short[0].delayMs > 0 && short[0].delayMs <= 60_000, String(short[0].delayMs));
  assert.equal(client.stats()[ORIGIN_A].shortCircuits, 3);
  client.free();

  const bulk = [];
  const narrow = new ResilientClient({ bulkhead: { maxConcurrent: 1, maxQueue: 0 }, onEvent: (e) => bulk.push(e) });
  const id2 = uid("bulkhead");
  const first = narrow.fetch(`${ORIGIN_A}/slow?id=${id2}&ms=100`);
  const e = await errorOf(narrow.fetch(`${ORIGIN_A}/slow?id=${id2}&ms=100`));
  assert.ok(e instanceof BulkheadFullError, String(e));
  assert.equal(e.origin, ORIGIN_A);
  assert.deepEqual(bulk.filter((x) => x.type === "bulkheadRejected").map((x) => x.origin), [ORIGIN_A]);
  assert.equal((await first).status, 200);
  assert.equal(await attempts(id2), 1);
  narrow.free();
});

// What onEvent gets: each kind exactly the fields its ResilienceEvent declaration names, in one
// order, each of its type; an optional one only when it has a value.
const EVENT_FIELDS = {
  attemptStart: ["attempt", "idempotencyKey?"],
  attemptEnd: ["attempt", "outcome", "status?", "durationMs"],
  retry: ["attempt", "delayMs", "reason", "retryAfter"],
  giveUp: ["attempts", "reason"],
  breakerTransition: ["from", "to", "reason?"],
  shortCircuit: ["delayMs"],
  bulkheadRejected: [],
  bodyTimeout: ["reason", "timeoutMs"],
  success: ["attempts"],
};
const FIELD_TYPES = { type: "string", origin: "string", attempt: "number", idempotencyKey: "string",
  attempts: "number", outcome: "string", status: "number", durationMs: "number", delayMs: "number",
  reason: "string", retryAfter: "boolean", from: "string", to: "string", timeoutMs: "number" };

test("every event has exactly its declared fields, in their order, of their types", async () => {
  const events = [];
  const onEvent = (e) => events.push(e);
  const client = new ResilientClient({ retry: FAST, bodyTimeoutMs: 50, onEvent,
    breaker: { mode: "consecutive", failureThreshold: 2, cooldownMs: 60_000 } });
  const id = (name) => uid(`event-fields-${name}`);
  // A dropped connection, then 200: no status on the first attemptEnd, a retry without Retry-After.
  assert.equal((await client.fetch(`${ORIGIN_A}/flaky?id=${id("drop")}&fail=1&code=drop`)).status, 200);
  const dropped = events.slice();
  // A keyed POST answered 503 with Retry-After: 0, then 200: the key on each attemptStart.
  const posted = events.length;
  assert.equal((await client.fetch(`${ORIGIN_A}/retry-after?id=${id("post")}&value=0`, { method: "POST", body: "{}" })).status, 200);
  const post = events.slice(posted);
  // A body that stalls: bodyTimeout.
  const stalled = await client.fetch(`${ORIGIN_A}/stalled-body?id=${id("stall")}`);
  assert.ok((await errorOf(stalled.text())) instanceof TimeoutError);
  // 503 twice: giveUp, and the breaker opens; then a call it refuses.
  assert.equal((await client.fetch(`${ORIGIN_A}/status?id=${id("down")}&code=503`, undefined,
    { retry: { ...FAST, maxAttempts: 2 } })).status, 503);
  assert.ok((await errorOf(client.fetch(`${ORIGIN_A}/status?id=${id("down")}&code=503`))) instanceof CircuitOpenError);
  client.free();
  const narrow = new ResilientClient({ bulkhead: { maxConcurrent: 1, maxQueue: 0 }, onEvent });
  const first = narrow.fetch(`${ORIGIN_A}/slow?id=${id("bulkhead")}&ms=50`);
  assert.ok((await errorOf(narrow.fetch(`${ORIGIN_A}/slow?id=${id("bulkhead")}&ms=50`))) instanceof BulkheadFullError);
  assert.equal((await first).status, 200);
  narrow.free();

  assert.deepEqual([...new Set(events.map((e) => e.type))].sort(), Object.keys(EVENT_FIELDS).sort(), "every kind seen");
  for (const e of events) {
    const declared = EVENT_FIELDS[e.type];
    const keys = Object.keys(e);
    const expected = ["type", "origin", ...declared.map((f) => f.replace("?", ""))
      .filter((f, i) => !declared[i].endsWith("?") || f in e)];
    assert.deepEqual(keys, expected, `${e.type}: ${JSON.stringify(e)}`);
    for (const key of keys) assert.equal(typeof e[key], FIELD_TYPES[key], `${e.type}.${key}: ${JSON.stringify(e)}`);
    assert.equal(e.origin, ORIGIN_A);
  }
  const end = dropped.find((e) => e.type === "attemptEnd");
  assert.ok(end.outcome === "networkError" && !("status" in end), JSON.stringify(end));
  assert.equal(dropped.find((e) => e.type === "retry").retryAfter, false);
  assert.ok(dropped.filter((e) => e.type === "attemptStart").every((e) => !("idempotencyKey" in e)), "no key on a GET");
  const keys = post.filter((e) => e.type === "attemptStart").map((e) => e.idempotencyKey);
  assert.ok(keys.length === 2 && keys[0] === keys[1] && keys[0].length === 36, JSON.stringify(post));
  assert.equal(post.find((e) => e.type === "retry").retryAfter, true);
  assert.ok(post.some((e) => e.type === "attemptEnd" && e.status === 503));
  const transition = events.find((e) => e.type === "breakerTransition");
  assert.deepEqual([transition.from, transition.to, transition.reason], ["closed", "open", "failures"]);
});

// (A TimeoutError that fetch rejected with may carry fetch's frames: Node's fetch captures a
// stack on the errors it rethrows.)
test("the error classes are Errors with stable names; the library makes them without a stack trace", async () => {
  const classes = { TimeoutError, CircuitOpenError, BulkheadFullError, RateLimitError, ThrottledError, QueuedError };
  for (const [name, Class] of Object.entries(classes)) {
    assert.equal(typeof Class, "function", name);
    assert.ok(Class.prototype instanceof Error, `${name} extends Error`);
  }
  const client = new ResilientClient({ retry: false, totalTimeoutMs: 50,
    breaker: { mode: "consecutive", failureThreshold: 1, cooldownMs: 60_000 } });
  const timeout = await errorOf(client.fetch(`${ORIGIN_A}/hang?id=${uid("hang")}`));
  assert.ok(timeout instanceof TimeoutError && timeout instanceof Error, String(timeout));
  assert.equal(timeout.name, "TimeoutError");
  assert.equal(timeout.timeoutMs, 50);
  const open = await errorOf(client.fetch(`${ORIGIN_A}/ok`));
  assert.ok(open instanceof CircuitOpenError && open instanceof Error, String(open));
  assert.equal(open.name, "CircuitOpenError");
  assert.doesNotMatch(String(open.stack ?? ""), /\n\s+at /, "a CircuitOpenError carries no stack frames");
  client.free();
});

test("throttled retries give up with reason throttled", fullOnly(), async () => {
  const events = [];
  const throttled = new ResilientClient({ throttle: { k: 1 }, breaker: false, retry: FAST, onEvent: (e) => events.push(e) });
  // Every call's first attempt fails and its retry would succeed. The throttle refuses at
  // random: most calls at once, and a retry now and then (4 to 10 in 100 calls, measured), so
  // calls go on until both were seen (at most 2 000).
  const ids = [];
  const outcomes = [];
  const retryRefused = () => events.some((e) => e.type === "giveUp" && e.reason === "throttled");
  while (ids.length < 2000 && !(outcomes.includes("ThrottledError") && retryRefused())) {
    const id = uid("throttled");
    ids.push(id);
    outcomes.push(await throttled.fetch(`${ORIGIN_A}/flaky?id=${id}&fail=1&code=503`).then((r) => r.status, (e) => e.name));
  }
  assert.ok(outcomes.includes("ThrottledError"), outcomes.join());
  assert.ok(retryRefused(), "a retry refused by the throttle");
  const stats = throttled.stats()[ORIGIN_A];
  const sent = (await Promise.all(ids.map(attempts))).reduce((a, b) => a + b, 0);
  assert.equal(sent, stats.attempts, "what was not refused reached the origin");
  assert.ok(stats.throttled > 0 && stats.attempts < ids.length * FAST_ATTEMPTS, JSON.stringify(stats));
  throttled.free();
});

test("isFailure can count a 200 against the breaker", async () => {
  const strict = new ResilientClient({ retry: false,
    breaker: { mode: "consecutive", failureThreshold: 2, cooldownMs: 60_000, isFailure: (ctx) => ctx.response?.status === 200 || undefined } });
  const id2 = uid("is-failure");
  for (let i = 0; i < 2; i++) assert.equal((await strict.fetch(`${ORIGIN_A}/ok?id=${id2}`)).status, 200);
  assert.equal(strict.breakerState(ORIGIN_A), "open");
  assert.ok((await errorOf(strict.fetch(`${ORIGIN_A}/ok?id=${id2}`))) instanceof CircuitOpenError);
  strict.free();
});

test("globalThis.fetch is looked up at each attempt: one replaced between attempts sends the retry", async () => {
  const original = globalThis.fetch;
  const second = async () => new Response("second");
  globalThis.fetch = async () => {
    globalThis.fetch = second;
    return new Response("first", { status: 503 });
  };
  try {
    const client = new ResilientClient({ retry: FAST, breaker: false });
    const res = await client.fetch(`${ORIGIN_A}/never-sent`);
    assert.deepEqual([res.status, await res.text()], [200, "second"]);
    client.free();
  } finally {
    globalThis.fetch = original;
  }
});
