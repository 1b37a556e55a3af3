// breaker.key (docs/behaviour.md, "Circuit breaker per origin"): a breaker, budget and stats
// entry per key instead of per origin, in both builds, against the fault server.
import test from "node:test";
import assert from "node:assert/strict";
import { ORIGIN_A, errorOf, serverLog, uid } from "./helpers.mjs";

const { ResilientClient, CircuitOpenError } = await import("resilient-fetch");

/** A route's key: the origin and the path's first segment ("http://127.0.0.1:1234/status"). */
const route = (url) => {
  const u = new URL(url);
  return u.origin + "/" + u.pathname.split("/")[1];
};

// Promise: one sick route opens its own breaker; the rest of the origin goes on, and the
// events, the error, stats(), breakerState() and reset() name the key.
test("breaker.key: a failing route opens its key's breaker only; events, CircuitOpenError, stats and breakerState name the key", async () => {
  const events = [];
  const client = new ResilientClient({
    retry: false,
    breaker: { failureThreshold: 2, cooldownMs: 60_000, key: route },
    onEvent: (e) => events.push(e),
  });
  const id = uid("key-route");
  const sick = `${ORIGIN_A}/status?code=503&id=${id}`;
  assert.equal((await client.fetch(sick)).status, 503);
  assert.equal((await client.fetch(sick)).status, 503);
  const refused = await errorOf(client.fetch(sick));
  assert.ok(refused instanceof CircuitOpenError, String(refused));
  assert.equal(refused.origin, `${ORIGIN_A}/status`);
  assert.match(refused.message, /circuit breaker for http:\/\/127\.0\.0\.1:\d+\/status is open/);
  assert.equal((await serverLog(ORIGIN_A, id)).length, 2, "nothing sent once its breaker opened");
  // The healthy route of the same origin is not locked out.
  assert.equal((await client.fetch(`${ORIGIN_A}/ok`)).status, 200);
  assert.equal(client.breakerState(`${ORIGIN_A}/status`), "open");
  assert.equal(client.breakerState(`${ORIGIN_A}/ok`), "closed");
  const stats = client.stats();
  assert.deepEqual(Object.keys(stats).sort(), [`${ORIGIN_A}/ok`, `${ORIGIN_A}/status`]);
  assert.equal(stats[`${ORIGIN_A}/status`].failures, 2);
  const opened = events.find((e) => e.type === "breakerTransition");
  assert.equal(opened.origin, `${ORIGIN_A}/status`);
  assert.ok(events.filter((e) => e.type === "attemptStart").every((e) => e.origin.startsWith(ORIGIN_A + "/")));
  client.reset(`${ORIGIN_A}/status`);
  assert.equal(client.breakerState(`${ORIGIN_A}/status`), "closed");
  // Without a key function, a breaker is an origin's, and a key is no origin.
  const plain = new ResilientClient();
  assert.throws(() => plain.breakerState("checkout"), TypeError);
});

// Promise: what the key function returns is checked (a string of 1 to 256 characters), what it
// throws rejects the call, and maxOrigins bounds the keys kept.
test("breaker.key: a bad key rejects the call naming breaker.key; a throw rejects with it; maxOrigins bounds the keys; a call may bring its own", async () => {
  const with_ = (key, extra = {}) => new ResilientClient({ retry: false, breaker: { key }, ...extra });
  const empty = await errorOf(with_(() => "").fetch(`${ORIGIN_A}/ok`));
  assert.ok(empty instanceof RangeError, String(empty));
  assert.equal(empty.message, "breaker.key must return a string of 1 to 256 characters (got 0 characters)");
  const long = await errorOf(with_(() => "k".repeat(257)).fetch(`${ORIGIN_A}/ok`));
  assert.ok(long instanceof RangeError && /\(got 257 characters\)/.test(long.message), String(long));
  const number = await errorOf(with_(() => 5).fetch(`${ORIGIN_A}/ok`));
  assert.ok(number instanceof TypeError && /breaker\.key must return a string .*\(got a number\)/.test(number.message), String(number));
  const boom = new Error("no key for you");
  assert.equal(await errorOf(with_(() => { throw boom; }).fetch(`${ORIGIN_A}/ok`)), boom);
  // The key function sees the URL and the method as fetch sends them.
  const seen = [];
  const spy = with_((url, method) => { seen.push([url, method]); return "one"; });
  await spy.fetch(`${ORIGIN_A}/ok?x=1`, { method: "post", body: "b" });
  assert.deepEqual(seen, [[`${ORIGIN_A}/ok?x=1`, "POST"]]);
  assert.deepEqual(Object.keys(spy.stats()), ["one"]);
  // The registry's bound holds for keys as for origins.
  const bounded = with_((url) => new URL(url).search, { maxOrigins: 2 });
  for (let i = 0; i < 5; i++) assert.equal((await bounded.fetch(`${ORIGIN_A}/ok?k=${i}`)).status, 200);
  assert.equal(Object.keys(bounded.stats()).length, 2);
  // A call's key function over its client's.
  const client = with_(() => "client");
  await client.fetch(`${ORIGIN_A}/ok`, undefined, { breaker: { key: () => "call" } });
  assert.deepEqual(Object.keys(client.stats()), ["call"]);
  assert.throws(() => client.breakerState("k".repeat(257)), RangeError);
});
