// What a call promises beyond its result: timeouts that count against the
// breaker, opaque-origin URLs left alone, aborting a body held only by its
// reader, responses collected under a long-lived signal, odd fetch options
// settling cleanly, empty idempotency keys, non-fetchable schemes, no
// listener warnings, listeners that reject, busy origins never evicted, and
// polyfill signals. Node, against the fault server on 127.0.0.1.
import test, { afterEach, describe } from "node:test";
import assert from "node:assert/strict";
import {
  ORIGIN_A, ORIGIN_B, collectUntil, describeError, errorOf, serverLog as logOf, sleep, uid, waitLog, within,
} from "./helpers.mjs";
import { resilientFetch, ResilientClient, TimeoutError, CircuitOpenError, BulkheadFullError, install, uninstall } from "resilient-fetch";

const FAST = { baseDelayMs: 1, maxDelayMs: 5 };

const realFetch = globalThis.fetch;
afterEach(() => { globalThis.fetch = realFetch; });



/** Counts process-level events (uncaughtException, unhandledRejection, warning) while `fn` runs and a little after. */
async function counting(events, fn) {
  const seen = [];
  const handlers = events.map((name) => [name, (e) => seen.push({ name, e })]);
  for (const [name, h] of handlers) process.on(name, h);
  try {
    await fn(seen);
    await sleep(50); // unhandled rejections and warnings surface on a later tick
    return seen;
  } finally {
    for (const [name, h] of handlers) process.off(name, h);
  }
}

describe("timeouts count against the breaker", () => {
  test("five calls to /hang with totalTimeoutMs 150 and failureThreshold 2: open, the rest short-circuited", async () => {
    const client = new ResilientClient({ totalTimeoutMs: 150, retry: false, breaker: { failureThreshold: 2, cooldownMs: 60000 } });
    const id = uid("deadline-breaker");
    const errors = [];
    for (let i = 0; i < 5; i++) errors.push(await within(errorOf(client.fetch(`${ORIGIN_A}/hang?id=${id}`)), 3000, `call ${i}`));
    assert.ok(errors.slice(0, 2).every((e) => e instanceof TimeoutError), errors.map(describeError).join("\n"));
    assert.ok(errors.some((e) => e instanceof CircuitOpenError), errors.map(describeError).join("\n"));
    assert.equal(client.breakerState(ORIGIN_A), "open");
    assert.ok(client.stats()[ORIGIN_A].failures >= 2, JSON.stringify(client.stats()));
    const sent = (await logOf(ORIGIN_A, id)).length;
    assert.ok(sent < 5, `${sent} of 5 calls reached the server`);
  });
});

describe("opaque-origin URLs", () => {
  test("a revoked blob: URL rejects as with fetch and never touches a breaker or the stats", async () => {
    const client = new ResilientClient({ retry: FAST, breaker: { failureThreshold: 1, cooldownMs: 60000 } });
    const revoked = URL.createObjectURL(new Blob(["x"]));
    URL.revokeObjectURL(revoked);
    // A blob: URL whose origin is an http origin (as a page's blob URLs are), registered nowhere.
    const httpBlob = `blob:${ORIGIN_A}/00000000-0000-4000-8000-000000000000`;
    for (const url of [revoked, httpBlob]) {
      await assert.rejects(realFetch(url), TypeError, "plain fetch");
      for (let i = 0; i < 2; i++) await assert.rejects(client.fetch(url), TypeError, url);
    }
    assert.deepEqual(Object.keys(client.stats()), []);
    assert.equal(client.breakerState(ORIGIN_A), "closed");
    assert.equal((await client.fetch(`${ORIGIN_A}/ok`)).status, 200);
  });

  test("data: and a live blob: URL read as with fetch, and leave no stats entry", async () => {
    const client = new ResilientClient();
    assert.equal(await (await client.fetch("data:text/plain,hi")).text(), "hi");
    const live = URL.createObjectURL(new Blob(["blob body"]));
    try {
      assert.equal(await (await client.fetch(live)).text(), "blob body");
    } finally {
      URL.revokeObjectURL(live);
    }
    assert.deepEqual(Object.keys(client.stats()), []);
  });
});

describe("aborting after the call settled", () => {
  test("still stops the body when only its reader is kept (the Response collected)", async () => {
    const client = new ResilientClient();
    const id = uid("reader-only");
    const ac = new AbortController();
    // In a function of its own: nothing but the reader outlives it.
    const reader = await (async () =>
      (await client.fetch(`${ORIGIN_A}/trickle?id=${id}&chunks=400&everyMs=25`, { signal: ac.signal })).body.getReader())();
    try {
      assert.equal((await reader.read()).done, false);
      await collectUntil(() => false, 6); // full collections: the Response is gone
      ac.abort();
      const end = await within((async () => {
        for (let i = 0; i < 1000; i++) if ((await reader.read()).done) return "done";
        return "still reading";
      })().catch((e) => `rejected: ${e?.name}`), 3000, "the reads after abort()");
      assert.notEqual(end, "still reading");
      const log = await waitLog(ORIGIN_A, id, (l) => l[0]?.closedEarly);
      assert.ok(log[0]?.closedEarly, "the server never saw the connection closed");
    } finally {
      reader.cancel().catch(() => {});
    }
  });
});

describe("responses under a long-lived signal are collected", () => {
  // The mock's abort listener (on the attempt's signal) reaches the response.
  const mock = (i, n) => {
    const r = new Response("x");
    n.signal.addEventListener("abort", () => r);
    return Promise.resolve(r);
  };

  async function dropped(client, signal, calls) {
    const state = { made: 0, collected: 0 };
    const registry = new FinalizationRegistry(() => { state.collected++; });
    await (async () => {
      for (let i = 0; i < calls; i++) {
        const res = await client.fetch("http://mock.test/x", { signal });
        registry.register(res, null);
        state.made++;
      }
    })();
    await collectUntil(() => state.collected >= 0.9 * state.made, 30);
    return state;
  }

  test("2000 calls through a fetch option, responses dropped: at least 90 % collected", async () => {
    const ac = new AbortController();
    const state = await dropped(new ResilientClient({ fetch: mock, retry: false }), ac.signal, 2000);
    assert.equal(state.made, 2000);
    assert.ok(state.collected >= 0.9 * state.made, `${state.collected} of ${state.made} collected`);
  });

  test("the same through globalThis.fetch", async () => {
    const ac = new AbortController();
    globalThis.fetch = mock;
    let state;
    try {
      state = await dropped(new ResilientClient({ retry: false }), ac.signal, 2000);
    } finally {
      globalThis.fetch = realFetch;
    }
    assert.ok(state.collected >= 0.9 * state.made, `${state.collected} of ${state.made} collected`);
  });
});

describe("odd fetch options settle every call cleanly", () => {
  const cases = [
    ["a Response, not a promise", () => new Response("plain"), "plain"],
    ["undefined", () => undefined, null],
    ["a thenable of a Response", () => ({ then(resolve) { resolve(new Response("thenable")); } }), "thenable"],
    // A TypeError thrown at once: whether it is passed on or wrapped, the call rejects with a TypeError.
    ["a synchronous throw", () => { throw new TypeError("sync boom"); }, null],
  ];
  for (const [name, fetchOption, body] of cases) {
    test(`a fetch option returning ${name}`, async () => {
      const client = new ResilientClient({ fetch: fetchOption, retry: FAST });
      const seen = await counting(["uncaughtException", "unhandledRejection"], async () => {
        const outcome = await within(client.fetch("http://mock.test/x").then(
          async (res) => ({ res, text: await res.text() }), (err) => ({ err })), 3000, name);
        if (body === null) {
          assert.ok(outcome.err instanceof TypeError, outcome.err ? describeError(outcome.err) : `resolved: ${outcome.text}`);
        } else {
          assert.ok(outcome.res instanceof Response, outcome.err ? describeError(outcome.err) : "not a Response");
          assert.equal(outcome.text, body);
        }
      });
      assert.deepEqual(seen.map((s) => `${s.name}: ${s.e?.message ?? s.e}`), []);
      assert.equal(client.stats()["http://mock.test"]?.inFlight ?? 0, 0);
      // A later normal call works.
      assert.equal((await client.fetch(`${ORIGIN_A}/ok`, undefined, { fetch: realFetch })).status, 200);
      assert.equal((await resilientFetch(`${ORIGIN_A}/ok`)).status, 200);
    });
  }
});

describe("empty idempotency keys are no keys", () => {
  for (const value of ["", "   "]) {
    test(`a POST with Idempotency-Key ${JSON.stringify(value)} is sent once when the answer is dropped`, async () => {
      const id = uid("empty-key");
      const err = await within(errorOf(new ResilientClient({ retry: FAST }).fetch(`${ORIGIN_A}/effect?id=${id}&drop=1`,
        { method: "POST", body: "x", headers: { "Idempotency-Key": value } })), 5000, "the POST");
      assert.ok(err, "the call resolved: it was repeated");
      assert.equal((await logOf(ORIGIN_A, id)).length, 1);
    });
  }
});

describe("URLs fetch cannot send", () => {
  const URLS = ["ftp://x/", "file:///etc/hosts", "ws://127.0.0.1/", "about:blank", "javascript:1", "mailto:a@b"];

  test("rejected with TypeError before anything is sent (globalThis.fetch never called), no stats entry", async () => {
    const client = new ResilientClient({ retry: FAST });
    let calls = 0;
    globalThis.fetch = (i, n) => { calls++; return realFetch(i, n); };
    try {
      for (const url of URLS) await assert.rejects(within(client.fetch(url), 3000, url), TypeError, url);
      assert.equal(calls, 0, "fetch was called");
      assert.deepEqual(Object.keys(client.stats()), []);
      assert.equal((await client.fetch(`${ORIGIN_A}/ok`)).status, 200);
      assert.equal(calls, 1);
    } finally {
      globalThis.fetch = realFetch;
    }
  });

  test("the same through a fetch option", async () => {
    let calls = 0;
    const client = new ResilientClient({ retry: FAST, fetch: (i, n) => { calls++; return realFetch(i, n); } });
    for (const url of URLS) await assert.rejects(within(client.fetch(url), 3000, url), TypeError, url);
    assert.equal(calls, 0, "fetch was called");
    assert.deepEqual(Object.keys(client.stats()), []);
    assert.equal((await client.fetch(`${ORIGIN_A}/ok`)).status, 200);
    assert.equal(calls, 1, "the fetch option was not used");
  });
});

describe("one shared signal, many calls", () => {
  test("50 concurrent calls with one AbortSignal print no MaxListenersExceededWarning, also with their responses kept", async () => {
    const client = new ResilientClient();
    const ac = new AbortController();
    let responses;
    const seen = await counting(["warning"], async () => {
      responses = await Promise.all(Array.from({ length: 50 },
        () => client.fetch(`${ORIGIN_A}/slow?ms=100`, { signal: ac.signal })));
      await sleep(50);
      for (const res of responses) await res.text();
    });
    const leaks = seen.filter((s) => s.e?.name === "MaxListenersExceededWarning");
    assert.deepEqual(leaks.map((s) => s.e.message), []);
    assert.equal(responses.length, 50); // kept alive until here
  });
});

describe("listeners", () => {
  test("an async onEvent that rejects causes no unhandled rejection", async () => {
    const client = new ResilientClient({ retry: FAST, onEvent: async () => { throw new Error("async listener bug"); } });
    const seen = await counting(["unhandledRejection"], async () => {
      assert.equal((await client.fetch(`${ORIGIN_A}/flaky?id=${uid("async-listener")}&fail=1&code=503`)).status, 200);
    });
    assert.deepEqual(seen.map((s) => String(s.e?.message ?? s.e)), []);
  });
});

describe("busy origins are never evicted", () => {
  test("maxOrigins 1, bulkhead 1: a call to another origin does not free the busy origin's slot", async () => {
    const client = new ResilientClient({ maxOrigins: 1, bulkhead: { maxConcurrent: 1 }, retry: false });
    const id = uid("busy-evict");
    const first = client.fetch(`${ORIGIN_A}/slow?id=${id}&ms=300`);
    try {
      await waitLog(ORIGIN_A, id, (l) => l.length === 1);
      const other = await errorOf(client.fetch(`${ORIGIN_B}/ok`));
      assert.ok(other === null || other instanceof Error, String(other));
      const second = await errorOf(client.fetch(`${ORIGIN_A}/slow?id=${id}&ms=300`));
      assert.ok(second instanceof BulkheadFullError, describeError(second));
    } finally {
      await errorOf(first);
    }
    // At most one in flight: every request of the id arrived after the one before it was answered.
    const log = await logOf(ORIGIN_A, id);
    for (let i = 1; i < log.length; i++) {
      assert.ok(log[i].t - log[i - 1].t >= 290, `two in flight at once: ${JSON.stringify(log.map((r) => r.t))}`);
    }
  });
});

describe("polyfill signals", () => {
  test("a signal without removeEventListener: 200 calls, then GC, nothing thrown anywhere", async () => {
    const client = new ResilientClient();
    const listeners = [];
    const signal = { aborted: false, addEventListener(type, fn) { listeners.push(fn); } };
    const seen = await counting(["uncaughtException", "unhandledRejection"], async () => {
      await (async () => {
        for (let i = 0; i < 200; i++) {
          const res = await client.fetch(`${ORIGIN_A}/ok`, { signal });
          assert.equal(await res.text(), "ok");
        }
      })();
      await collectUntil(() => false, 10);
    });
    assert.deepEqual(seen.map((s) => `${s.name}: ${s.e?.message ?? s.e}`), []);
    assert.equal((await client.fetch(`${ORIGIN_A}/ok`, { signal })).status, 200);
    assert.equal((await client.fetch(`${ORIGIN_A}/ok`)).status, 200);
  });
});

describe("the returned body and the hooks, under misuse and late events", () => {
  const trickle = (id, extra = "") => `${ORIGIN_A}/trickle?id=${id}&chunks=20&everyMs=50${extra}`;

  test("cancelling the body while a read waits throws nothing anywhere", async () => {
    const client = new ResilientClient({ retry: false });
    const seen = await counting(["uncaughtException", "unhandledRejection"], async () => {
      const res = await client.fetch(trickle(uid("cancel"), "&stallAfter=1"), undefined, { bodyTimeoutMs: 5000 });
      const reader = res.body.getReader();
      await reader.read();
      const pending = reader.read();
      await sleep(30);
      await reader.cancel("done with it");
      assert.equal((await within(pending, 2000, "the pending read")).done, true);
    });
    assert.deepEqual(seen.map((s) => `${s.name}: ${s.e?.message}`), []);
  });

  test("a body read late, past the deadline, still reads what already arrived; a read that waits is cut", async () => {
    const client = new ResilientClient({ retry: false });
    const ok = await client.fetch(`${ORIGIN_A}/ok`, undefined, { totalTimeoutMs: 200, bodyTimeoutMs: 5000 });
    await sleep(300);
    assert.equal(await ok.text(), "ok");
    const stalled = await client.fetch(`${ORIGIN_A}/stalled-body?id=${uid("late")}`, undefined,
      { totalTimeoutMs: 200, bodyTimeoutMs: 5000 });
    await sleep(300);
    const err = await within(errorOf(stalled.text()), 2000, "the late read");
    assert.ok(err instanceof TimeoutError, describeError(err));
  });

  test("clone() after the body was looked at: both copies read in full", async () => {
    const client = new ResilientClient({ retry: false });
    const res = await client.fetch(trickle(uid("clone"), "").replace("chunks=20", "chunks=3"));
    assert.ok(res.body, "the body is there");
    const copy = res.clone();
    const [a, b] = await within(Promise.all([copy.text(), res.text()]), 3000, "both copies");
    assert.equal(a, b);
    assert.ok(a.length > 0);
  });

  test("a body cut after its client was freed still rejects with TimeoutError", async () => {
    const seen = await counting(["uncaughtException", "unhandledRejection"], async () => {
      const client = new ResilientClient({ retry: false });
      const res = await client.fetch(trickle(uid("freed"), "&stallAfter=1"), undefined, { bodyTimeoutMs: 150 });
      client.free();
      const err = await within(errorOf(res.text()), 3000, "the read");
      assert.ok(err instanceof TimeoutError, describeError(err));
    });
    assert.deepEqual(seen.map((s) => `${s.name}: ${s.e?.message}`), []);
  });

  test("a mock's Response-like answer with a signal settles the call", async () => {
    const like = { status: 200, ok: true, headers: new Headers(), body: "not a stream" };
    const client = new ResilientClient({ fetch: async () => like });
    const ac = new AbortController();
    const res = await within(client.fetch("http://mock.test/x", { signal: ac.signal }), 2000, "the call");
    assert.equal(res, like);
  });

  test("install() survives a later wrapper of the global fetch, and its wrapper works after uninstall()", async () => {
    const real = globalThis.fetch;
    try {
      install({ retry: false });
      const installed = globalThis.fetch;
      globalThis.fetch = (input, init) => installed(input, init); // instrumentation wrapping fetch
      assert.equal((await globalThis.fetch(`${ORIGIN_A}/ok`)).status, 200);
      globalThis.fetch = installed;
      assert.equal(uninstall(), true);
      assert.equal((await installed(`${ORIGIN_A}/ok`)).status, 200, "a saved wrapper stopped working");
    } finally {
      globalThis.fetch = real;
    }
  });
});
