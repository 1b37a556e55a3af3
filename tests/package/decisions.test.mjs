// Decisions the caller owns: retry.shouldRetry and breaker.isFailure, the README's two
// recipes, and the rules they cannot bend. The package used by name, against the fault
// server on 127.0.0.1.
import test from "node:test";
import assert from "node:assert/strict";
import { ORIGIN_A, ORIGIN_B, errorOf, serverLog, uid, within } from "./helpers.mjs";
import { ResilientClient } from "resilient-fetch";

const FAST = { baseDelayMs: 1, maxDelayMs: 5 };

/** A client whose events are kept: { client, events }. */
function recorded(policy) {
  const events = [];
  const client = new ResilientClient({ ...policy, onEvent: (e) => events.push(e) });
  return { client, events };
}

test("recipe: a 409 is retried after the hook re-read what conflicted", async () => {
  const id = uid("conflict");
  let rereads = 0;
  const { client, events } = recorded({
    retry: {
      ...FAST,
      shouldRetry: async ({ response }) => {
        if (response?.status !== 409) return undefined;
        rereads++; // the caller refreshes its view of the resource here
        return true;
      },
    },
  });
  const res = await client.fetch(`${ORIGIN_A}/flaky?id=${id}&fail=1&code=409`);
  assert.equal(res.status, 200);
  assert.equal(await res.text(), "ok after 1");
  assert.equal(rereads, 1);
  assert.equal((await serverLog(ORIGIN_A, id)).length, 2);
  assert.deepEqual(events.filter((e) => e.type === "retry").map((e) => e.reason), ["shouldRetry"]);
});

test("recipe: a 401 is retried after refreshing the token, which the fetch option attaches per attempt", async () => {
  const id = uid("auth");
  let token = "stale";
  let refreshes = 0;
  const client = new ResilientClient({
    // The token is read at each attempt, so a retry carries the fresh one.
    fetch: (input, init) => {
      const request = new Request(input, init); // the attempt's request, its key header included
      request.headers.set("authorization", `Bearer ${token}`);
      return fetch(request);
    },
    retry: {
      ...FAST,
      shouldRetry: async ({ response }) => {
        if (response?.status !== 401 || refreshes > 0) return undefined;
        refreshes++;
        token = await Promise.resolve("fresh"); // e.g. a call to the token endpoint
        return true;
      },
    },
  });
  const res = await client.fetch(`${ORIGIN_A}/auth?id=${id}&token=fresh`);
  assert.equal(res.status, 200);
  assert.equal(refreshes, 1);
  assert.deepEqual((await serverLog(ORIGIN_A, id)).map((r) => r.status), [401, 200]);
  // The same through the general path (a Request input), with a POST's key kept.
  const id2 = uid("auth-post");
  token = "stale";
  refreshes = 0;
  const post = await client.fetch(new Request(`${ORIGIN_A}/auth?id=${id2}&token=fresh`,
    { method: "POST", body: "x", headers: { "x-mine": "1" } }));
  assert.equal(post.status, 200);
  const log = await serverLog(ORIGIN_A, id2);
  assert.deepEqual(log.map((r) => r.status), [401, 200]);
  assert.ok(log[1].key && log[1].key === log[0].key, "the key was lost or changed");
  assert.ok(log[1].headers.includes("x-mine"), "the caller's header was lost");
});

test("recipe: one endpoint's 500s do not open the API's breaker; others' still do", async () => {
  const client = new ResilientClient({
    retry: false,
    breaker: {
      failureThreshold: 2,
      isFailure: ({ url, response }) => (url.includes("/status") && response?.status === 500 ? false : undefined),
    },
  });
  for (let i = 0; i < 5; i++) assert.equal((await client.fetch(`${ORIGIN_A}/status?code=500`)).status, 500);
  assert.equal(client.breakerState(ORIGIN_A), "closed");
  assert.equal(client.stats()[ORIGIN_A].failures, 0);
  for (let i = 0; i < 2; i++) await client.fetch(`${ORIGIN_A}/flaky?id=${uid("other")}&fail=9&code=503`);
  assert.equal(client.breakerState(ORIGIN_A), "open");
});

test("a hook that throws stops at once: the call rejects with what it threw", async () => {
  const id = uid("throws");
  const thrown = new Error("the hook broke");
  const { client, events } = recorded({ retry: { ...FAST, shouldRetry: () => { throw thrown; } } });
  const err = await errorOf(client.fetch(`${ORIGIN_A}/flaky?id=${id}&fail=2&code=503`));
  assert.equal(err, thrown);
  assert.equal((await serverLog(ORIGIN_A, id)).length, 1);
  assert.deepEqual(events.filter((e) => e.type === "giveUp").map((e) => e.reason), ["shouldRetry"]);
  // A rejected promise is the same as a throw.
  const id2 = uid("rejects");
  const client2 = new ResilientClient({ retry: { ...FAST, shouldRetry: () => Promise.reject(thrown) } });
  assert.equal(await errorOf(client2.fetch(`${ORIGIN_A}/flaky?id=${id2}&fail=2&code=503`)), thrown);
  assert.equal((await serverLog(ORIGIN_A, id2)).length, 1);
});

test("a slow async hook is cut off by the call's deadline: the outcome so far is the call's", async () => {
  const id = uid("slow-hook");
  const { client, events } = recorded({
    totalTimeoutMs: 300,
    retry: { ...FAST, shouldRetry: () => new Promise(() => {}) },
  });
  const t0 = Date.now();
  const res = await within(client.fetch(`${ORIGIN_A}/flaky?id=${id}&fail=2&code=503`), 3000, "the call");
  const ms = Date.now() - t0;
  assert.equal(res.status, 503);
  assert.ok(ms >= 250 && ms < 1500, `${ms} ms`);
  assert.equal((await serverLog(ORIGIN_A, id)).length, 1);
  // The built-in answer (retry a 503) stands, and the deadline refuses it.
  assert.deepEqual(events.filter((e) => e.type === "giveUp").map((e) => e.reason), ["deadline"]);
});

test("the caller's signal ends a call whose hook is still deciding", async () => {
  const ac = new AbortController();
  const client = new ResilientClient({ retry: { ...FAST, shouldRetry: () => new Promise(() => {}) } });
  const call = client.fetch(`${ORIGIN_A}/status?code=503`, { signal: ac.signal });
  setTimeout(() => ac.abort(), 100);
  const err = await within(errorOf(call), 3000, "the call");
  assert.equal(err?.name, "AbortError");
});

test("a hook cannot repeat an unsafe request without a key, nor pass maxAttempts", async () => {
  const id = uid("unsafe");
  const { client, events } = recorded({ idempotencyKey: false, retry: { ...FAST, shouldRetry: () => true } });
  const res = await client.fetch(`${ORIGIN_A}/effect?id=${id}`, { method: "POST", body: "charge" });
  assert.equal(res.status, 201);
  assert.equal((await serverLog(ORIGIN_A, id)).length, 1, "the POST was repeated");
  assert.deepEqual(events.filter((e) => e.type === "giveUp").map((e) => e.reason), ["unsafeMethod"]);
  const id2 = uid("max");
  const always = new ResilientClient({ retry: { ...FAST, maxAttempts: 3, shouldRetry: () => true } });
  assert.equal((await always.fetch(`${ORIGIN_B}/ok?id=${id2}`)).status, 200);
  assert.equal((await serverLog(ORIGIN_B, id2)).length, 3);
});

test("the hook's response is a clone: the caller's body is whole; the context says what happened", async () => {
  const seen = [];
  const client = new ResilientClient({
    retry: {
      ...FAST,
      shouldRetry: async (ctx) => {
        seen.push({ ...ctx, response: undefined, body: await ctx.response?.text(), hasError: "error" in ctx });
        return undefined;
      },
    },
  });
  const res = await client.fetch(`${ORIGIN_A}/ok`, { method: "POST", body: "x" });
  assert.equal(await res.text(), "ok");
  assert.equal(seen.length, 1);
  const [ctx] = seen;
  assert.equal(ctx.body, "ok");
  assert.equal(ctx.attempt, 1);
  assert.equal(ctx.method, "POST");
  assert.equal(ctx.url, `${ORIGIN_A}/ok`);
  assert.match(ctx.idempotencyKey, /^[0-9a-f-]{36}$/);
  assert.ok(ctx.elapsedMs >= 0 && ctx.remainingMs > 0 && ctx.remainingMs <= 30000);
  assert.equal(ctx.hasError, false);
  // A network error comes as ctx.error.
  const errors = [];
  const dropping = new ResilientClient({ retry: { ...FAST, maxAttempts: 1, shouldRetry: (c) => { errors.push(c.error); } } });
  await errorOf(dropping.fetch(`${ORIGIN_A}/flaky?id=${uid("drop")}&fail=9&code=drop`));
  assert.ok(errors[0] instanceof TypeError, String(errors[0]));
});

test("per call: a hook replaces the client's, null removes it, and retry: false turns it off", async () => {
  const asked = [];
  const client = new ResilientClient({ retry: { ...FAST, shouldRetry: () => { asked.push("client"); } } });
  await client.fetch(`${ORIGIN_A}/ok`, undefined, { retry: { shouldRetry: () => { asked.push("call"); } } });
  await client.fetch(`${ORIGIN_A}/ok`, undefined, { retry: { shouldRetry: null } });
  await client.fetch(`${ORIGIN_A}/ok`, undefined, { retry: false });
  await client.fetch(`${ORIGIN_A}/ok`, undefined, { retry: { maxAttempts: 2 } });
  assert.deepEqual(asked, ["call", "client"]);
  await assert.rejects(async () => client.fetch(`${ORIGIN_A}/ok`, undefined, { retry: { shouldRetry: 1 } }),
    (e) => e instanceof TypeError && e.message.includes("retry.shouldRetry"));
  assert.throws(() => new ResilientClient({ breaker: { isFailure: "no" } }),
    (e) => e instanceof TypeError && e.message.includes("breaker.isFailure"));
});
