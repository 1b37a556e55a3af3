// The JS contract of resilientFetch and ResilientClient, used by name from
// the installed package, against the fault server on 127.0.0.1.
import test, { describe } from "node:test";
import assert from "node:assert/strict";
import { ORIGIN_A, ORIGIN_B, collectUntil, countListeners, serverLog, uid, waitLog } from "./helpers.mjs";
import {
  resilientFetch, ResilientClient, TimeoutError, CircuitOpenError, BulkheadFullError,
} from "resilient-fetch";

const FAST = { retry: { baseDelayMs: 1, maxDelayMs: 5 } };
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * A call through a client of its own: the faults one test provokes must not
 * open the breaker another test relies on (resilientFetch shares one client).
 */
const fetchFresh = (input, init, policy) => new ResilientClient().fetch(input, init, policy);


describe("same contract as fetch", () => {
  test("a final 5xx resolves once retries are spent", async () => {
    const id = uid("final5xx");
    const res = await fetchFresh(`${ORIGIN_A}/flaky?id=${id}&fail=9&code=502`, undefined,
      { retry: { baseDelayMs: 1, maxAttempts: 3 } });
    assert.equal(res.status, 502);
    assert.equal((await serverLog(ORIGIN_A, id)).length, 3);
  });

  test("an invalid URL rejects with TypeError before anything is sent", async () => {
    await assert.rejects(fetchFresh("http://[nope"), TypeError);
    await assert.rejects(fetchFresh("not a url"), TypeError);
  });

  test("URLs parse the same the second time (origins are remembered per URL string)", async () => {
    // Credentials in the URL: fetch refuses the request, every time.
    const withCredentials = `${ORIGIN_A.replace("://", "://user:pw@")}/ok`;
    for (let i = 0; i < 2; i++) await assert.rejects(fetchFresh(withCredentials), TypeError);
    // More URL strings than are remembered, twice over: each call still lands on its own origin.
    const client = new ResilientClient({ retry: false, breaker: { failureThreshold: 1 } });
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 300; i++) assert.equal((await client.fetch(`${ORIGIN_A}/ok?n=${i}`)).status, 200);
      assert.equal((await client.fetch(`${ORIGIN_B}/status?code=503`)).status, 503);
      assert.equal(client.breakerState(ORIGIN_B), "open");
      assert.equal(client.breakerState(ORIGIN_A), "closed");
      await assert.rejects(client.fetch(`${ORIGIN_B}/status?code=503`), CircuitOpenError);
      assert.equal((await client.fetch(`${ORIGIN_A}/ok?n=0`)).status, 200);
      client.reset();
    }
  });

  test("the last network error rejects once retries are spent", async () => {
    const id = uid("drop");
    await assert.rejects(
      fetchFresh(`${ORIGIN_A}/flaky?id=${id}&fail=9&code=drop`, undefined, FAST),
      (e) => e instanceof TypeError && !(e instanceof TimeoutError),
    );
    assert.equal((await serverLog(ORIGIN_A, id)).length, 3);
  });

  test("URLs with an opaque origin work as with fetch (data:)", async () => {
    const res = await fetchFresh("data:text/plain,hello");
    assert.equal(await res.text(), "hello");
  });

  test("maxOrigins belongs to a client, not to one call", async () => {
    await assert.rejects(fetchFresh(`${ORIGIN_A}/ok`, undefined, { maxOrigins: 5 }),
      (e) => e instanceof TypeError && e.message.includes("maxOrigins"));
  });

  test("a non-retryable 4xx is returned at once", async () => {
    const id = uid("404");
    const res = await fetchFresh(`${ORIGIN_A}/status?id=${id}&code=404`, undefined, FAST);
    assert.equal(res.status, 404);
    assert.equal((await serverLog(ORIGIN_A, id)).length, 1);
  });

  test("the response body is readable (through resilientFetch)", async () => {
    const res = await resilientFetch(`${ORIGIN_A}/ok`);
    assert.equal(await res.text(), "ok");
  });
});

describe("the caller's arguments, as fetch reads them", () => {
  test("invalid init is the caller's error: rejected at once, not retried, not held against the origin", async () => {
    const client = new ResilientClient(FAST);
    const id = uid("bad-init");
    for (const init of [{ body: "x" }, { method: "HEAD", body: "x" }, { method: "TRACE" }, { method: "bad method" }]) {
      await assert.rejects(client.fetch(`${ORIGIN_A}/ok?id=${id}`, init), TypeError, JSON.stringify(init));
    }
    assert.equal((await serverLog(ORIGIN_A, id)).length, 0);
    assert.equal(client.breakerState(ORIGIN_A), "closed");
    assert.equal(client.stats()[ORIGIN_A]?.failures ?? 0, 0);
    assert.equal((await client.fetch(`${ORIGIN_A}/ok`)).status, 200);
  });

  test("input and init are read when the call is made, not later", async () => {
    const id = uid("sync-read"), other = uid("sync-read-other");
    const url = new URL(`${ORIGIN_A}/effect?id=${id}`);
    const init = { method: "POST", body: "first" };
    const p = fetchFresh(url, init);
    url.searchParams.set("id", other);
    init.body = "second";
    const res = await p;
    assert.equal((await res.json()).body, "first");
    assert.equal((await serverLog(ORIGIN_A, id)).length, 1);
    assert.equal((await serverLog(ORIGIN_A, other)).length, 0);
  });

  test("a body changed during the backoff does not change what the retry sends", async () => {
    const id = uid("mutated-body");
    const params = new URLSearchParams({ amount: "10" });
    const p = fetchFresh(`${ORIGIN_A}/effect?id=${id}&drop=1`, { method: "POST", body: params },
      { retry: { baseDelayMs: 300, maxDelayMs: 300, jitter: "none" } });
    await waitLog(ORIGIN_A, id, (l) => l.length === 1);
    params.set("amount", "9999");
    const res = await p;
    assert.equal((await res.json()).body, "amount=10");
    const keys = (await serverLog(ORIGIN_A, id)).map((r) => r.key);
    assert.equal(keys.length, 2);
    assert.equal(keys[0], keys[1]);
  });

  test("init members are read like fetch reads them: inherited getters count, a throwing one rejects", async () => {
    const id = uid("init-getters");
    class Init { get method() { return "POST"; } get body() { return "from a getter"; } }
    const res = await fetchFresh(`${ORIGIN_A}/effect?id=${id}`, new Init());
    assert.equal(res.status, 201);
    assert.equal((await res.json()).body, "from a getter");
    const boom = new Error("getter boom");
    await assert.rejects(fetchFresh(`${ORIGIN_A}/ok`, { get method() { throw boom; } }), (e) => e === boom);
  });
});

describe("timeouts", () => {
  test("an attempt timeout aborts the request and rejects with TimeoutError", async () => {
    const id = uid("attempt-timeout");
    const t0 = Date.now();
    await assert.rejects(
      fetchFresh(`${ORIGIN_A}/hang?id=${id}`, undefined, { timeoutMs: 150, retry: false }),
      (e) => e instanceof TimeoutError && e.name === "TimeoutError" && e.timeoutMs === 150,
    );
    assert.ok(Date.now() - t0 < 2000);
    const log = await waitLog(ORIGIN_A, id, (l) => l.every((r) => r.closedEarly));
    assert.equal(log.length, 1);
    assert.ok(log[0].closedEarly, "the server never saw the socket closed");
  });

  test("timeouts are retried, each attempt aborted", async () => {
    const id = uid("timeout-retry");
    await assert.rejects(
      fetchFresh(`${ORIGIN_A}/hang?id=${id}`, undefined, { timeoutMs: 80, ...FAST }),
      TimeoutError,
    );
    const log = await waitLog(ORIGIN_A, id, (l) => l.length === 3 && l.every((r) => r.closedEarly));
    assert.equal(log.length, 3);
    assert.ok(log.every((r) => r.closedEarly));
  });

  test("the total deadline bounds attempts and waits together", async () => {
    const id = uid("deadline");
    const t0 = Date.now();
    await assert.rejects(
      fetchFresh(`${ORIGIN_A}/hang?id=${id}`, undefined,
        { timeoutMs: 5000, totalTimeoutMs: 300, retry: { maxAttempts: 5 } }),
      (e) => e instanceof TimeoutError && e.timeoutMs === 300,
    );
    const elapsed = Date.now() - t0;
    assert.ok(elapsed >= 250 && elapsed < 3000, `elapsed ${elapsed} ms`);
    assert.equal((await serverLog(ORIGIN_A, id)).length, 1, "no attempt after the deadline");
  });
});

describe("the caller's AbortSignal", () => {
  test("aborts the attempt in flight with the signal's reason", async () => {
    const id = uid("abort-flight");
    const ac = new AbortController();
    const p = fetchFresh(`${ORIGIN_A}/hang?id=${id}`, { signal: ac.signal });
    await waitLog(ORIGIN_A, id, (l) => l.length === 1);
    ac.abort();
    await assert.rejects(p, (e) => e.name === "AbortError");
    const log = await waitLog(ORIGIN_A, id, (l) => l[0]?.closedEarly);
    assert.ok(log[0].closedEarly);
  });

  test("a polyfilled signal (no reason) aborts the attempt in flight, as Node's fetch honours it", async () => {
    // What abort-controller polyfills and test environments hand out: not the platform's class.
    class PolySignal extends EventTarget {
      aborted = false;
    }
    const id = uid("abort-poly");
    const signal = new PolySignal();
    const p = fetchFresh(`${ORIGIN_A}/hang?id=${id}`, { signal }, { timeoutMs: 10_000 });
    await waitLog(ORIGIN_A, id, (l) => l.length === 1);
    signal.aborted = true;
    signal.dispatchEvent(new Event("abort"));
    await assert.rejects(p, (e) => e.name === "AbortError");
    const log = await waitLog(ORIGIN_A, id, (l) => l[0]?.closedEarly);
    assert.ok(log[0].closedEarly, "the request was not aborted");
    // Already aborted: rejected at once, nothing sent.
    const id2 = uid("abort-poly-before");
    await assert.rejects(fetchFresh(`${ORIGIN_A}/ok?id=${id2}`, { signal }), (e) => e.name === "AbortError");
    assert.equal((await serverLog(ORIGIN_A, id2)).length, 0);
  });

  test("a signal that is not one is a TypeError, as with fetch", async () => {
    const id = uid("abort-junk");
    await assert.rejects(fetchFresh(`${ORIGIN_A}/ok?id=${id}`, { signal: {} }), TypeError);
    await assert.rejects(fetchFresh(`${ORIGIN_A}/ok?id=${id}`, { signal: "stop" }), TypeError);
    assert.equal((await serverLog(ORIGIN_A, id)).length, 0);
    // null means no signal, as with fetch.
    assert.equal((await fetchFresh(`${ORIGIN_A}/ok?id=${id}`, { signal: null })).status, 200);
  });

  test("aborts a backoff sleep, and no attempt starts after it", async () => {
    const id = uid("abort-sleep");
    const ac = new AbortController();
    const reason = new Error("caller gave up");
    const p = fetchFresh(`${ORIGIN_A}/flaky?id=${id}&fail=9&code=503`, { signal: ac.signal },
      { retry: { baseDelayMs: 5000, maxDelayMs: 5000, jitter: "none" } });
    await waitLog(ORIGIN_A, id, (l) => l.length === 1);
    const t0 = Date.now();
    ac.abort(reason);
    await assert.rejects(p, (e) => e === reason);
    assert.ok(Date.now() - t0 < 1000, "the sleep was not cut short");
    assert.equal((await serverLog(ORIGIN_A, id)).length, 1);
  });

  test("an already aborted signal rejects at once, nothing sent", async () => {
    const id = uid("pre-abort");
    await assert.rejects(
      fetchFresh(`${ORIGIN_A}/ok?id=${id}`, { signal: AbortSignal.abort() }),
      (e) => e.name === "AbortError",
    );
    assert.equal((await serverLog(ORIGIN_A, id)).length, 0);
  });

  test("aborting after the call settled still stops reading the body, as with fetch", async () => {
    const ac = new AbortController();
    const res = await fetchFresh(`${ORIGIN_A}/stalled-body?id=${uid("stalled")}`, { signal: ac.signal });
    assert.equal(res.status, 200);
    const reading = res.text();
    ac.abort();
    await assert.rejects(reading, (e) => e.name === "AbortError");
  });

  test("init.signal undefined leaves the Request's own signal in charge", async () => {
    const id = uid("signal-undefined");
    const ac = new AbortController();
    const p = fetchFresh(new Request(`${ORIGIN_A}/hang?id=${id}`, { signal: ac.signal }), { signal: undefined });
    await waitLog(ORIGIN_A, id, (l) => l.length === 1);
    ac.abort();
    await assert.rejects(p, (e) => e.name === "AbortError");
  });

  test("a Request's own signal is honoured", async () => {
    const id = uid("request-signal");
    const ac = new AbortController();
    const p = fetchFresh(new Request(`${ORIGIN_A}/hang?id=${id}`, { signal: ac.signal }));
    await waitLog(ORIGIN_A, id, (l) => l.length === 1);
    ac.abort();
    await assert.rejects(p, (e) => e.name === "AbortError");
  });

  test("a long-lived signal holds one listener for its live responses, and nothing once they are gone", async () => {
    const ac = new AbortController();
    const listeners = countListeners(ac.signal);
    // (In a function of its own: the loop's last response must not stay in this one's scope.)
    const kept = await (async () => {
      const responses = [];
      for (let i = 0; i < 20; i++) {
        const res = await fetchFresh(`${ORIGIN_A}/ok`, { signal: ac.signal });
        await res.text();
        responses.push(res);
      }
      return responses;
    })();
    await assert.rejects(fetchFresh(`${ORIGIN_A}/hang`, { signal: ac.signal }, { timeoutMs: 50, retry: false }),
      TimeoutError);
    // A failed call leaves nothing; the responses kept alive keep their links (their bodies'
    // abort) through one listener for the signal, however many there are.
    assert.equal(listeners.live, 1);
    kept.length = 0;
    assert.ok(await collectUntil(() => listeners.live === 0), `${listeners.live} listeners left on the signal`);
  });
});

describe("retries", () => {
  test("a flaky 5xx is retried until it succeeds", async () => {
    const id = uid("flaky");
    const res = await fetchFresh(`${ORIGIN_A}/flaky?id=${id}&fail=2&code=503`, undefined, FAST);
    assert.equal(res.status, 200);
    assert.equal((await serverLog(ORIGIN_A, id)).length, 3);
  });

  test("Retry-After in seconds is honoured", async () => {
    const id = uid("ra-secs");
    const t0 = Date.now();
    const res = await fetchFresh(`${ORIGIN_A}/retry-after?id=${id}&value=1&code=503`, undefined, FAST);
    assert.equal(res.status, 200);
    assert.ok(Date.now() - t0 >= 950, "did not wait for Retry-After");
  });

  test("Retry-After as an HTTP-date is honoured", async () => {
    const id = uid("ra-date");
    const t0 = Date.now();
    const res = await fetchFresh(`${ORIGIN_A}/retry-after?id=${id}&value=date:2&code=429`, undefined, FAST);
    assert.equal(res.status, 200);
    // HTTP-dates have 1 s resolution: 2 s ahead is at least ~1 s away.
    assert.ok(Date.now() - t0 >= 900, "did not wait for Retry-After");
  });

  test("a Retry-After longer than maxRetryAfterMs hands the response back at once", async () => {
    const id = uid("ra-long");
    const t0 = Date.now();
    const res = await fetchFresh(`${ORIGIN_A}/retry-after?id=${id}&value=3600&code=429`);
    assert.equal(res.status, 429);
    assert.equal(res.headers.get("retry-after"), "3600");
    assert.ok(Date.now() - t0 < 1000);
    assert.equal((await serverLog(ORIGIN_A, id)).length, 1);
  });

  test("POST without an idempotency key is never retried", async () => {
    const id = uid("post-nokey");
    const res = await fetchFresh(`${ORIGIN_A}/flaky?id=${id}&fail=1&code=503`,
      { method: "POST", body: "x" }, { ...FAST, idempotencyKey: false });
    assert.equal(res.status, 503);
    assert.equal((await serverLog(ORIGIN_A, id)).length, 1);
  });

  test("retry: false sends exactly once", async () => {
    const id = uid("noretry");
    const res = await fetchFresh(`${ORIGIN_A}/flaky?id=${id}&fail=1&code=503`, undefined, { retry: false });
    assert.equal(res.status, 503);
    assert.equal((await serverLog(ORIGIN_A, id)).length, 1);
  });
});

describe("bodies", () => {
  const bodies = {
    string: () => "hello body",
    ArrayBuffer: () => new TextEncoder().encode("hello body").buffer,
    Uint8Array: () => new TextEncoder().encode("hello body"),
    Blob: () => new Blob(["hello body"]),
    URLSearchParams: () => new URLSearchParams({ hello: "body" }),
    FormData: () => { const f = new FormData(); f.append("hello", "body"); return f; },
  };
  for (const [kind, make] of Object.entries(bodies)) {
    test(`a ${kind} body is sent again on retry`, async () => {
      const id = uid(`body-${kind}`);
      const res = await fetchFresh(`${ORIGIN_A}/effect?id=${id}&drop=1`, { method: "POST", body: make() }, FAST);
      assert.equal(res.status, 201);
      const { body } = await res.json();
      assert.match(body, /hello[\s\S]*body/);
      assert.equal((await serverLog(ORIGIN_A, id)).length, 2);
    });
  }

  test("a Request input (with a body) is cloned per attempt", async () => {
    const id = uid("request-body");
    const req = new Request(`${ORIGIN_A}/effect?id=${id}&drop=1`, { method: "POST", body: "from a Request" });
    const res = await fetchFresh(req, undefined, FAST);
    assert.equal(res.status, 201);
    assert.equal((await res.json()).body, "from a Request");
    assert.equal((await serverLog(ORIGIN_A, id)).length, 2);
  });

  test("a ReadableStream body is sent once and never retried", async () => {
    const id = uid("stream");
    const stream = new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode("s")); c.close(); } });
    const res = await fetchFresh(`${ORIGIN_A}/flaky?id=${id}&fail=1&code=503`,
      { method: "PUT", body: stream, duplex: "half" }, FAST);
    assert.equal(res.status, 503);
    assert.equal((await serverLog(ORIGIN_A, id)).length, 1);
  });
});

describe("idempotency keys", () => {
  for (const method of ["POST", "PATCH"]) {
    test(`${method} gets a UUID v4 key, the same on every retry`, async () => {
      const id = uid(`key-${method}`);
      const res = await fetchFresh(`${ORIGIN_A}/flaky?id=${id}&fail=2&code=503`, { method, body: "x" }, FAST);
      assert.equal(res.status, 200);
      const keys = (await serverLog(ORIGIN_A, id)).map((r) => r.key);
      assert.equal(keys.length, 3);
      assert.match(keys[0], UUID_V4);
      assert.deepEqual(new Set(keys).size, 1);
    });
  }

  test("attemptStart events carry the call's key", async () => {
    const id = uid("key-event");
    const events = [];
    await fetchFresh(`${ORIGIN_A}/flaky?id=${id}&fail=1&code=503`, { method: "POST", body: "x" },
      { ...FAST, onEvent: (e) => events.push(e) });
    const sent = (await serverLog(ORIGIN_A, id)).map((r) => r.key);
    const shown = events.filter((e) => e.type === "attemptStart").map((e) => e.idempotencyKey);
    assert.deepEqual(shown, sent);
  });

  test("a key string belongs to one call: ResilientClient rejects it, a call takes it", async () => {
    assert.throws(() => new ResilientClient({ idempotencyKey: "order-1" }), (e) => e instanceof TypeError
      && e.message.includes("idempotencyKey"));
    assert.doesNotThrow(() => new ResilientClient({ idempotencyKey: false }));
  });

  test("each logical call gets its own key (across several CSPRNG draws)", async () => {
    const id = uid("key-distinct");
    // The keys' random bytes are drawn 16 keys at a time: 40 calls span three draws.
    for (let i = 0; i < 40; i++) await fetchFresh(`${ORIGIN_A}/ok?id=${id}`, { method: "POST", body: "x" });
    const keys = (await serverLog(ORIGIN_A, id)).map((r) => r.key);
    assert.equal(keys.length, 40);
    assert.ok(keys.every((k) => UUID_V4.test(k)), keys.join());
    assert.equal(new Set(keys).size, 40);
  });

  test("GET and PUT get no key by default", async () => {
    const id = uid("key-none");
    await fetchFresh(`${ORIGIN_A}/ok?id=${id}`);
    await fetchFresh(`${ORIGIN_A}/ok?id=${id}`, { method: "PUT", body: "x" });
    assert.deepEqual((await serverLog(ORIGIN_A, id)).map((r) => r.key), [null, null]);
  });

  test("a key the caller set is kept", async () => {
    const id = uid("key-caller");
    await fetchFresh(`${ORIGIN_A}/flaky?id=${id}&fail=1&code=503`,
      { method: "POST", body: "x", headers: { "Idempotency-Key": "caller-key-1" } }, FAST);
    assert.deepEqual((await serverLog(ORIGIN_A, id)).map((r) => r.key), ["caller-key-1", "caller-key-1"]);
  });

  test("a fixed key string applies to any method; the header name is configurable", async () => {
    const id = uid("key-fixed");
    await fetchFresh(`${ORIGIN_A}/ok?id=${id}`, { method: "DELETE" }, { idempotencyKey: "order-42" });
    assert.deepEqual((await serverLog(ORIGIN_A, id)).map((r) => r.key), ["order-42"]);
    const id2 = uid("key-header");
    await fetchFresh(`${ORIGIN_A}/ok?id=${id2}`, { method: "POST", body: "x" },
      { idempotencyHeader: "X-Request-Key" });
    const [entry] = await serverLog(ORIGIN_A, id2);
    assert.equal(entry.key, null, "the default header must not be sent");
    assert.ok(entry.headers.includes("x-request-key"), `headers: ${entry.headers}`);
  });

  test("a connection dropped after the server applied a POST: one effect", async () => {
    const id = uid("effect-once");
    const res = await fetchFresh(`${ORIGIN_A}/effect?id=${id}&drop=2`, { method: "POST", body: "pay" }, FAST);
    assert.equal(res.status, 201);
    const effects = await (await fetch(`${ORIGIN_A}/effects?id=${id}`)).json();
    assert.equal(effects.effects, 1);
    assert.equal((await serverLog(ORIGIN_A, id)).length, 3);
  });
});

describe("circuit breaker", () => {
  test("opens after the threshold, fails fast with CircuitOpenError, nothing sent", async () => {
    const client = new ResilientClient({ retry: false, breaker: { failureThreshold: 3, cooldownMs: 60000 } });
    const id = uid("breaker");
    for (let i = 0; i < 3; i++) {
      assert.equal((await client.fetch(`${ORIGIN_A}/status?id=${id}&code=500`)).status, 500);
    }
    assert.equal(client.breakerState(ORIGIN_A), "open");
    const t0 = Date.now();
    const err = await client.fetch(`${ORIGIN_A}/status?id=${id}&code=500`).catch((e) => e);
    assert.ok(err instanceof CircuitOpenError, String(err));
    assert.equal(err.name, "CircuitOpenError");
    assert.equal(err.origin, ORIGIN_A);
    assert.ok(err.retryAfterMs > 59000 && err.retryAfterMs <= 60000, String(err.retryAfterMs));
    // Fails fast: nothing sent (the log's 3), and refused before its cooldown could have run
    // (a breaker that waited for it would take retryAfterMs); how fast is the bench's.
    assert.ok(Date.now() - t0 < err.retryAfterMs, `refused after ${Date.now() - t0} ms`);
    assert.equal((await serverLog(ORIGIN_A, id)).length, 3);
    // One failing origin never trips another.
    assert.equal(client.breakerState(ORIGIN_B), "closed");
    assert.equal((await client.fetch(`${ORIGIN_B}/ok`)).status, 200);
  });

  test("after the cooldown one probe decides: success closes", async () => {
    const client = new ResilientClient({ retry: false, breaker: { failureThreshold: 1, cooldownMs: 100 } });
    const id = uid("probe");
    await client.fetch(`${ORIGIN_A}/flaky?id=${id}&fail=1&code=503`);
    assert.equal(client.breakerState(ORIGIN_A), "open");
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(client.breakerState(ORIGIN_A), "half-open");
    assert.equal((await client.fetch(`${ORIGIN_A}/flaky?id=${id}&fail=1&code=503`)).status, 200);
    assert.equal(client.breakerState(ORIGIN_A), "closed");
  });

  test("breakerState normalises the origin; unknown origins are closed", () => {
    const client = new ResilientClient();
    assert.equal(client.breakerState("HTTP://Example.COM:80/some/path"), "closed");
    assert.throws(() => client.breakerState("::"), TypeError);
  });

  test("resilientFetch shares one default client across calls", async () => {
    const id = uid("default-client");
    // "localhost" is an origin of its own, so the other tests' origins stay closed.
    const origin = ORIGIN_B.replace("127.0.0.1", "localhost");
    const policy = { retry: false, breaker: { failureThreshold: 2, cooldownMs: 60000 } };
    await resilientFetch(`${origin}/status?id=${id}&code=503`, undefined, policy);
    await resilientFetch(`${origin}/status?id=${id}&code=503`, undefined, policy);
    await assert.rejects(resilientFetch(`${origin}/ok`, undefined, policy), CircuitOpenError);
    // a later call with another policy still sees the shared breaker open
    await assert.rejects(resilientFetch(`${origin}/ok`), CircuitOpenError);
  });
});

describe("bulkhead", () => {
  test("a full bulkhead rejects at once with BulkheadFullError", async () => {
    const client = new ResilientClient({ bulkhead: { maxConcurrent: 1, maxQueue: 0 }, retry: false, timeoutMs: 300 });
    const id = uid("bulkhead");
    const first = client.fetch(`${ORIGIN_A}/hang?id=${id}`).catch((e) => e);
    await waitLog(ORIGIN_A, id, (l) => l.length === 1);
    const err = await client.fetch(`${ORIGIN_A}/ok?id=${id}`).catch((e) => e);
    assert.ok(err instanceof BulkheadFullError, String(err));
    assert.equal(err.origin, ORIGIN_A);
    assert.ok((await first) instanceof TimeoutError);
    assert.equal((await client.fetch(`${ORIGIN_A}/ok`)).status, 200, "the slot is free again");
  });
});

describe("events and stats", () => {
  test("onEvent sees attempts, retries and the end, in order", async () => {
    const id = uid("events");
    const events = [];
    await fetchFresh(`${ORIGIN_A}/flaky?id=${id}&fail=1&code=503`, undefined,
      { ...FAST, onEvent: (e) => events.push(e) });
    const types = events.map((e) => e.type);
    assert.deepEqual(types.filter((t) => t === "attemptStart"), ["attemptStart", "attemptStart"]);
    const retry = events.find((e) => e.type === "retry");
    assert.equal(retry.reason, "status");
    assert.ok(retry.delayMs >= 0 && retry.delayMs <= 5);
    assert.ok(types.indexOf("retry") < types.lastIndexOf("attemptStart"));
    assert.equal(types.at(-1), "success");
    assert.ok(events.every((e) => e.origin === ORIGIN_A));
  });

  test("a throwing onEvent breaks neither the call nor the breaker", async () => {
    const client = new ResilientClient({ retry: false, breaker: { failureThreshold: 2 },
      onEvent: () => { throw new Error("listener bug"); } });
    assert.equal((await client.fetch(`${ORIGIN_A}/status?code=503`)).status, 503);
    assert.equal((await client.fetch(`${ORIGIN_A}/status?code=503`)).status, 503);
    assert.equal(client.breakerState(ORIGIN_A), "open");
  });

  test("stats() counts per origin; reset() starts an origin afresh", async () => {
    const client = new ResilientClient(FAST);
    const id = uid("stats");
    await client.fetch(`${ORIGIN_A}/flaky?id=${id}&fail=1&code=503`);
    await client.fetch(`${ORIGIN_B}/ok`);
    const stats = client.stats();
    assert.deepEqual(Object.keys(stats).sort(), [ORIGIN_A, ORIGIN_B].sort());
    const a = stats[ORIGIN_A];
    assert.equal(a.attempts, 2);
    assert.equal(a.retries, 1);
    assert.equal(a.successes, 1);
    assert.equal(a.failures, 1);
    assert.equal(a.inFlight, 0);
    assert.equal(a.breakerState, "closed");
    assert.equal(typeof a.budgetTokens, "number");
    assert.equal(stats[ORIGIN_B].attempts, 1);
    client.reset(ORIGIN_A);
    assert.equal(client.stats()[ORIGIN_A].attempts, 0);
    assert.equal(client.stats()[ORIGIN_B].attempts, 1, "reset(origin) touches that origin only");
    client.reset();
    assert.ok(Object.values(client.stats()).every((s) => s.attempts === 0 && s.breakerState === "closed"));
  });

  test("a call's policy overrides the client's, field by field", async () => {
    const client = new ResilientClient({ retry: { maxAttempts: 2, baseDelayMs: 1 } });
    const id = uid("override");
    await client.fetch(`${ORIGIN_A}/flaky?id=${id}&fail=9&code=503`, undefined, { retry: { maxAttempts: 4 } });
    assert.equal((await serverLog(ORIGIN_A, id)).length, 4);
    const id2 = uid("override-off");
    await client.fetch(`${ORIGIN_A}/flaky?id=${id2}&fail=9&code=503`, undefined, { retry: false });
    assert.equal((await serverLog(ORIGIN_A, id2)).length, 1);
  });
});

describe("invalid policies reject before any request", () => {
  const cases = [
    [{ timeoutMs: 0 }, RangeError, "timeoutMs"],
    [{ timeoutMs: "fast" }, TypeError, "timeoutMs"],
    [{ retry: { maxAttempts: 21 } }, RangeError, "retry.maxAttempts"],
    [{ retry: { jitter: "random" } }, RangeError, "retry.jitter"],
    [{ breaker: { failureThreshold: 0 } }, RangeError, "breaker.failureThreshold"],
    [{ retryBudget: { capacity: -1 } }, RangeError, "retryBudget.capacity"],
    [{ bulkhead: { maxConcurrent: 0 } }, RangeError, "bulkhead.maxConcurrent"],
    [{ onEvent: 42 }, TypeError, "onEvent"],
    [{ retyr: {} }, TypeError, "retyr"],
  ];
  for (const [policy, type, field] of cases) {
    test(`${JSON.stringify(policy)} → ${type.name} naming ${field}`, async () => {
      const id = uid("invalid");
      await assert.rejects(fetchFresh(`${ORIGIN_A}/ok?id=${id}`, undefined, policy),
        (e) => e instanceof type && e.message.includes(field));
      assert.equal((await serverLog(ORIGIN_A, id)).length, 0);
      assert.throws(() => new ResilientClient(policy), (e) => e instanceof type && e.message.includes(field));
    });
  }
});
