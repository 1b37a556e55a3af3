// builds: full (a capability of resilient-fetch/full: tests/package/run.mjs)
// Failover origins (policy `failover`, docs/fallback.md) through the package used by name against
// the fault server's two origins on 127.0.0.1: a primary whose breaker is open sends its calls to
// the alternate, a retry goes to the next origin, the calls come back once the primary's breaker
// lets a probe through, the key and body are the same everywhere, and the events name each
// attempt's origin. The server's /down fails on the origins it names only.
import test from "node:test";
import assert from "node:assert/strict";
import { ORIGIN_A, ORIGIN_B, errorOf, serverLog, sleep, uid } from "./helpers.mjs";

const { ResilientClient, CircuitOpenError, resilientFetch } = await import("resilient-fetch");

/** A client with A's alternate B whose events are kept; one failure opens a breaker. */
function recorded(policy = {}) {
  const events = [];
  const client = new ResilientClient({
    failover: { [ORIGIN_A]: [ORIGIN_B] },
    breaker: { mode: "consecutive", failureThreshold: 1, cooldownMs: 60_000 },
    retry: { maxAttempts: 3, baseDelayMs: 0, maxDelayMs: 0 },
    ...policy,
    onEvent: (e) => events.push(e),
  });
  return { client, events };
}

/** [type, origin] of the events about attempts. */
const attempts = (events) =>
  events.filter((e) => ["attemptStart", "attemptEnd", "retry"].includes(e.type)).map((e) => [e.type, e.origin]);

test("a primary down: its breaker opens, the retry goes to the alternate with the same key and body, later calls go there at once", async () => {
  const { client, events } = recorded();
  const id = uid("failover-down");
  const res = await client.fetch(`${ORIGIN_A}/down?id=${id}&on=a`, { method: "POST", body: "order-1" });
  assert.equal(res.status, 200);
  assert.equal(await res.text(), "ok b", "the alternate answered");
  const [onA, onB] = [await serverLog(ORIGIN_A, id), await serverLog(ORIGIN_B, id)];
  assert.deepEqual([onA.length, onB.length], [1, 1]);
  assert.equal(onA[0].status, 503);
  assert.ok(onA[0].key, "the POST carried a key");
  assert.equal(onB[0].key, onA[0].key, "the same Idempotency-Key on both origins");
  assert.deepEqual([onA[0].body, onB[0].body, onB[0].method], ["order-1", "order-1", "POST"]);
  assert.ok(onB[0].t >= onA[0].answered, "B was asked after A's answer");
  assert.deepEqual(attempts(events), [
    ["attemptStart", ORIGIN_A], ["attemptEnd", ORIGIN_A], ["retry", ORIGIN_B],
    ["attemptStart", ORIGIN_B], ["attemptEnd", ORIGIN_B],
  ]);
  const opened = events.find((e) => e.type === "breakerTransition");
  assert.deepEqual([opened.origin, opened.to], [ORIGIN_A, "open"]);
  assert.equal(client.breakerState(ORIGIN_A), "open");

  // A's breaker is open: the next call goes to B without asking A (no shortCircuit).
  events.length = 0;
  const next = await client.fetch(`${ORIGIN_A}/down?id=${id}&on=a`);
  assert.equal(await next.text(), "ok b");
  assert.equal((await serverLog(ORIGIN_A, id)).length, 1, "A was not asked again");
  assert.equal((await serverLog(ORIGIN_B, id)).length, 2);
  assert.deepEqual(attempts(events), [["attemptStart", ORIGIN_B], ["attemptEnd", ORIGIN_B]]);
  assert.ok(!events.some((e) => e.type === "shortCircuit"), JSON.stringify(events));
  const stats = client.stats();
  assert.deepEqual([stats[ORIGIN_A].attempts, stats[ORIGIN_B].attempts, stats[ORIGIN_B].successes], [1, 2, 2]);
  client.free();
});

test("a retry after a retryable failure goes to the next origin, wrapping to the primary", async () => {
  // Breakers that do not open: only the retries move the call.
  const { client, events } = recorded({ breaker: { mode: "consecutive", failureThreshold: 10 } });
  const id = uid("failover-next");
  const res = await client.fetch(`${ORIGIN_A}/down?id=${id}&on=a,b&fail=1`);
  assert.equal(await res.text(), "ok a", "the third attempt went back to A");
  const [onA, onB] = [await serverLog(ORIGIN_A, id), await serverLog(ORIGIN_B, id)];
  assert.deepEqual(onA.map((e) => e.status), [503, 200]);
  assert.deepEqual(onB.map((e) => e.status), [503]);
  assert.ok(onA[0].answered <= onB[0].t && onB[0].answered <= onA[1].t, "A, then B, then A");
  assert.deepEqual(attempts(events).filter(([type]) => type === "attemptStart").map(([, o]) => o), [ORIGIN_A, ORIGIN_B, ORIGIN_A]);
  assert.deepEqual(events.filter((e) => e.type === "retry").map((e) => [e.attempt, e.origin]), [[2, ORIGIN_B], [3, ORIGIN_A]]);
  client.free();
});

test("the calls come back to the primary once its breaker lets a probe through", async () => {
  const { client, events } = recorded({ breaker: { mode: "consecutive", failureThreshold: 1, cooldownMs: 300 } });
  const id = uid("failover-back");
  // A fails once (then recovers): its breaker opens, the retry goes to B.
  assert.equal(await (await client.fetch(`${ORIGIN_A}/down?id=${id}&on=a&fail=1`)).text(), "ok b");
  assert.equal(client.breakerState(ORIGIN_A), "open");
  // While it is open, B answers.
  assert.equal(await (await client.fetch(`${ORIGIN_A}/down?id=${id}&on=a&fail=1`)).text(), "ok b");
  const opened = events.find((e) => e.type === "breakerTransition" && e.to === "open");
  assert.ok(opened, JSON.stringify(events));
  // Its cooldown passes (the breaker says so itself), then the probe goes to A and closes it.
  for (let i = 0; i < 100 && client.breakerState(ORIGIN_A) === "open"; i++) await sleep(20);
  assert.equal(client.breakerState(ORIGIN_A), "half-open");
  events.length = 0;
  assert.equal(await (await client.fetch(`${ORIGIN_A}/down?id=${id}&on=a&fail=1`)).text(), "ok a");
  assert.deepEqual(events.filter((e) => e.type === "breakerTransition").map((e) => [e.origin, e.from, e.to]), [
    [ORIGIN_A, "open", "half-open"], [ORIGIN_A, "half-open", "closed"],
  ]);
  assert.deepEqual(attempts(events), [["attemptStart", ORIGIN_A], ["attemptEnd", ORIGIN_A]]);
  assert.deepEqual((await serverLog(ORIGIN_A, id)).map((e) => e.status), [503, 200]);
  assert.equal((await serverLog(ORIGIN_B, id)).length, 2);
  client.free();
});

test("a call whose origins are all open fails as without failover: CircuitOpenError naming the primary", async () => {
  const { client } = recorded({ retry: false });
  const id = uid("failover-all");
  // Each origin fails once on its own: both breakers open.
  assert.equal((await client.fetch(`${ORIGIN_B}/down?id=${id}&on=a,b`)).status, 503);
  assert.equal((await client.fetch(`${ORIGIN_A}/down?id=${id}&on=a,b`)).status, 503);
  assert.deepEqual([client.breakerState(ORIGIN_A), client.breakerState(ORIGIN_B)], ["open", "open"]);
  const refused = await errorOf(client.fetch(`${ORIGIN_A}/down?id=${id}&on=a,b`));
  assert.ok(refused instanceof CircuitOpenError, String(refused));
  assert.equal(refused.origin, ORIGIN_A);
  assert.deepEqual([(await serverLog(ORIGIN_A, id)).length, (await serverLog(ORIGIN_B, id)).length], [1, 1]);
  client.free();
});

test("a Request with headers and a body is sent to the alternate as it is; a call may bring its own failover", async () => {
  const client = new ResilientClient({ breaker: { mode: "consecutive", failureThreshold: 1 }, retry: { baseDelayMs: 0, maxDelayMs: 0 } });
  const id = uid("failover-request");
  const request = new Request(`${ORIGIN_A}/down?id=${id}&on=a&x=1`, {
    method: "PUT", body: "payload", headers: { "x-trace": "t-1", "content-type": "text/plain" },
  });
  const res = await client.fetch(request, undefined, { failover: { [ORIGIN_A]: [ORIGIN_B] }, idempotencyKey: "put-1" });
  assert.equal(await res.text(), "ok b");
  const [onA, onB] = [await serverLog(ORIGIN_A, id), await serverLog(ORIGIN_B, id)];
  for (const entry of [onA[0], onB[0]]) {
    assert.deepEqual([entry.method, entry.key, entry.body], ["PUT", "put-1", "payload"]);
    assert.ok(entry.headers.includes("x-trace"), JSON.stringify(entry.headers));
  }
  // Without the call's failover, the client's (none): A is open, the call is refused.
  assert.ok((await errorOf(client.fetch(`${ORIGIN_A}/down?id=${id}&on=a`))) instanceof CircuitOpenError);
  // resilientFetch takes it too.
  const once = await resilientFetch(`${ORIGIN_A}/down?id=${id}&on=a`, {},
    { failover: { [ORIGIN_A]: [ORIGIN_B] }, retry: { baseDelayMs: 0, maxDelayMs: 0 } });
  assert.equal(await once.text(), "ok b");
  client.free();
});

test("bad failover input is a clear error naming the field", async () => {
  const cases = [
    [{ [ORIGIN_A]: [`${ORIGIN_B}/v1`] }, RangeError, `failover["${ORIGIN_A}"][0] must be an origin without a path, query or fragment`],
    [{ [ORIGIN_A]: [ORIGIN_B, ORIGIN_B] }, RangeError, `failover["${ORIGIN_A}"][1] must be an origin other than failover["${ORIGIN_A}"][0] (got "${ORIGIN_B}")`],
    [{ [ORIGIN_A]: [ORIGIN_A] }, RangeError, `failover["${ORIGIN_A}"][0] must be an origin other than its primary`],
    [{ [ORIGIN_A]: ORIGIN_B }, TypeError, `failover["${ORIGIN_A}"] must be a list of 1 to 8 origins (got a string)`],
    [{ "ftp://x.test": [ORIGIN_B] }, RangeError, `failover["ftp://x.test"] must be an origin of scheme http or https`],
    [true, TypeError, "failover must be an object of origins, each to a list of alternate origins, or false (got a boolean)"],
  ];
  for (const [failover, type, words] of cases) {
    const error = await errorOf(Promise.resolve().then(() => new ResilientClient({ failover })));
    assert.ok(error instanceof type, `${JSON.stringify(failover)}: ${error}`);
    assert.ok(error.message.startsWith(words), error.message);
    const perCall = await errorOf(resilientFetch(`${ORIGIN_A}/ok`, {}, { failover }));
    assert.ok(perCall instanceof type && perCall.message.startsWith(words), String(perCall));
  }
  // false is none.
  const client = new ResilientClient({ failover: false });
  assert.equal((await client.fetch(`${ORIGIN_A}/ok`)).status, 200);
  client.free();
});

test("with breaker.key, attempts to the call's own origin keep its name; an attempt to an alternate is named by the alternate's origin", async () => {
  const route = (url) => new URL(url).origin + "/" + new URL(url).pathname.split("/")[1];
  const { client, events } = recorded({ breaker: { mode: "consecutive", failureThreshold: 1, cooldownMs: 60_000, key: route } });
  const id = uid("failover-key");
  assert.equal(await (await client.fetch(`${ORIGIN_A}/down?id=${id}&on=a`)).text(), "ok b");
  assert.deepEqual(attempts(events).filter(([type]) => type === "attemptStart").map(([, o]) => o), [`${ORIGIN_A}/down`, ORIGIN_B]);
  assert.equal(client.breakerState(`${ORIGIN_A}/down`), "open");
  assert.deepEqual(Object.keys(client.stats()).sort(), [`${ORIGIN_A}/down`, ORIGIN_B].sort());
  // The named entry is open: the next call goes to B at once.
  assert.equal(await (await client.fetch(`${ORIGIN_A}/down?id=${id}&on=a`)).text(), "ok b");
  assert.equal((await serverLog(ORIGIN_A, id)).length, 1);
  client.free();
});
