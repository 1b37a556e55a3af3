// Drop-in use: the `fetch` policy field, install()/uninstall() of a global
// wrapper, wrappers that call back into the library, no trap after misuse;
// bodies bounded by totalTimeoutMs and bodyTimeoutMs; the breaker's defaults;
// small contract points (breakerState's argument, half-open rejections,
// a fetch that resolves with something else than a Response).
// Against the fault server on 127.0.0.1, the package used by name.
import test, { afterEach, describe } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import {
  ORIGIN_A, SCRATCH, describeError, errorOf, serverLog as logOf, sleep, uid, waitLog, within,
} from "./helpers.mjs";
// A namespace import: install/uninstall are looked up as properties, so a
// build without them fails those tests only, not the whole file.
import * as rf from "resilient-fetch";

const { resilientFetch, ResilientClient, TimeoutError, CircuitOpenError } = rf;

const FAST = { baseDelayMs: 1, maxDelayMs: 5 };
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

// The platform's fetch, as it was when this file loaded: tests replace
// globalThis.fetch, and the server logs are read through this one.
const realFetch = globalThis.fetch;
afterEach(() => {
  try { rf.uninstall?.(); } catch { /* reported by the test that installed */ }
  globalThis.fetch = realFetch;
});



describe("the fetch policy field", () => {
  test("the library sends with the fetch option: client-wide, per call, and through resilientFetch", async () => {
    const seen = [];
    const mock = (tag) => (input, init) => {
      seen.push({ tag, url: typeof input === "string" ? input : input.url, hasSignal: !!init?.signal });
      return Promise.resolve(new Response(`from ${tag}`));
    };
    const client = new ResilientClient({ fetch: mock("client"), retry: false });
    assert.equal(await (await client.fetch("http://mock.test/a")).text(), "from client");
    assert.equal(await (await client.fetch("http://mock.test/b", undefined, { fetch: mock("call") })).text(), "from call");
    assert.equal(await (await resilientFetch("http://mock.test/c", undefined, { fetch: mock("rf") })).text(), "from rf");
    assert.deepEqual(seen.map((s) => s.tag), ["client", "call", "rf"]);
    assert.deepEqual(seen.map((s) => s.url), ["http://mock.test/a", "http://mock.test/b", "http://mock.test/c"]);
  });

  test("by default globalThis.fetch is looked up at call time (a mock assigned after import is used)", async () => {
    const client = new ResilientClient({ retry: false });
    let calls = 0;
    globalThis.fetch = () => { calls++; return Promise.resolve(new Response("mocked")); };
    try {
      assert.equal(await (await client.fetch("http://mock.test/x")).text(), "mocked");
      assert.equal(await (await resilientFetch("http://mock.test/y")).text(), "mocked");
    } finally {
      globalThis.fetch = realFetch;
    }
    assert.equal(calls, 2);
  });

  test("a fetch option must be a function: anything else is a TypeError naming fetch", async () => {
    assert.doesNotThrow(() => new ResilientClient({ fetch: realFetch }));
    assert.doesNotThrow(() => new ResilientClient({ fetch: (i, n) => realFetch(i, n) }));
    const id = uid("fetch-not-fn");
    for (const bad of [42, "fetch", {}, true]) {
      assert.throws(() => new ResilientClient({ fetch: bad }),
        (e) => e instanceof TypeError && e.message.includes("fetch"), JSON.stringify(bad));
      await assert.rejects(new ResilientClient().fetch(`${ORIGIN_A}/ok?id=${id}`, undefined, { fetch: bad }),
        (e) => e instanceof TypeError && e.message.includes("fetch"), JSON.stringify(bad));
    }
    assert.deepEqual(await logOf(ORIGIN_A, id), []);
  });
});

describe("install() and uninstall()", () => {
  test("install() wraps globalThis.fetch, sends through the fetch that was there, returns its client", async () => {
    assert.equal(typeof rf.install, "function", "no install export");
    assert.equal(typeof rf.uninstall, "function", "no uninstall export");
    let underneath = 0;
    const original = (i, n) => { underneath++; return realFetch(i, n); };
    globalThis.fetch = original;
    const client = rf.install({ retry: FAST });
    assert.ok(client instanceof ResilientClient, "install() did not return a ResilientClient");
    assert.notEqual(globalThis.fetch, original, "globalThis.fetch was not replaced");

    // Retried through the original fetch; the returned client counts it.
    const id = uid("install-get");
    const res = await within(globalThis.fetch(`${ORIGIN_A}/flaky?id=${id}&fail=1&code=503`), 5000, "GET");
    assert.equal(res.status, 200);
    assert.equal(underneath, 2);
    assert.equal(client.stats()[ORIGIN_A]?.attempts, 2);

    // A POST through the global fetch carries an Idempotency-Key.
    const id2 = uid("install-post");
    const post = await within(globalThis.fetch(`${ORIGIN_A}/effect?id=${id2}`, { method: "POST", body: "x" }), 5000, "POST");
    assert.equal(post.status, 201);
    const [entry] = await logOf(ORIGIN_A, id2);
    assert.match(entry?.key ?? "", UUID_V4);

    // resilientFetch still works once installed (no recursion), and sends once.
    const id3 = uid("install-rf");
    assert.equal((await within(resilientFetch(`${ORIGIN_A}/ok?id=${id3}`), 5000, "resilientFetch")).status, 200);
    assert.equal((await logOf(ORIGIN_A, id3)).length, 1);

    assert.equal(rf.uninstall(), true);
    assert.equal(globalThis.fetch, original, "uninstall() did not put the original back");
  });

  test("install() returns the very client its wrapper calls: what wraps that client's fetch sees the global's calls", async () => {
    globalThis.fetch = (i, n) => realFetch(i, n);
    const client = rf.install({ retry: FAST });
    const seen = [];
    const own = client.fetch;
    client.fetch = function (input, init, policy) { seen.push(String(input)); return own.call(this, input, init, policy); };
    const url = `${ORIGIN_A}/ok?id=${uid("install-same")}`;
    assert.equal((await within(globalThis.fetch(url), 5000, "GET")).status, 200);
    assert.deepEqual(seen, [url]);
    assert.equal(rf.uninstall(), true);
  });

  test("a freed install() client makes the global fetch reject, never throw", async () => {
    globalThis.fetch = (i, n) => realFetch(i, n);
    const client = rf.install({ retry: FAST });
    client.free();
    let call;
    assert.doesNotThrow(() => { call = globalThis.fetch(`${ORIGIN_A}/ok?id=${uid("install-freed")}`); });
    const error = await call.then(() => null, (e) => e);
    assert.ok(error instanceof TypeError && /freed/.test(error.message), String(error));
    assert.equal(rf.uninstall(), true);
  });

  test("install() again replaces the previous install: one layer, and the original stays the true original", async () => {
    assert.equal(typeof rf.install, "function", "no install export");
    const original = (i, n) => realFetch(i, n);
    globalThis.fetch = original;
    const first = [], second = [];
    rf.install({ onEvent: (e) => first.push(e.type) });
    const wrapper1 = globalThis.fetch;
    const client2 = rf.install({ onEvent: (e) => second.push(e.type) });
    assert.notEqual(globalThis.fetch, original);
    assert.notEqual(globalThis.fetch, wrapper1, "the second install did not replace the first");
    const id = uid("reinstall");
    assert.equal((await within(globalThis.fetch(`${ORIGIN_A}/ok?id=${id}`), 5000, "GET")).status, 200);
    assert.deepEqual(first, [], "the first install's wrapper is still in the chain");
    assert.ok(second.includes("attemptStart"), `second install's events: ${second}`);
    assert.equal(client2.stats()[ORIGIN_A]?.attempts, 1);
    assert.equal((await logOf(ORIGIN_A, id)).length, 1);
    assert.equal(rf.uninstall(), true);
    assert.equal(globalThis.fetch, original, "uninstall() did not restore the true original");
  });

  test("instrumentation that wraps the global after install(): other clients' attempts pass it once, not through install's client too", async () => {
    const original = (i, n) => realFetch(i, n);
    globalThis.fetch = original;
    const installed = rf.install({ retry: FAST });
    const wrapper = globalThis.fetch;
    let seen = 0;
    globalThis.fetch = (i, n) => { seen++; return wrapper(i, n); }; // e.g. a tracing library
    try {
      // One that awaits before passing the call on, too.
      globalThis.fetch = async (i, n) => { seen++; await null; return wrapper(i, n); };
      const early = uid("instrumented-async");
      const client0 = new ResilientClient({ retry: FAST, breaker: false });
      assert.equal((await within(client0.fetch(`${ORIGIN_A}/flaky?id=${early}&fail=5&code=503`), 5000, "GET")).status, 503);
      assert.equal((await logOf(ORIGIN_A, early)).length, 3);
      assert.equal(installed.stats()[ORIGIN_A], undefined, "install()'s client took no part");
      client0.free();
      seen = 0;
      globalThis.fetch = (i, n) => { seen++; return wrapper(i, n); };
      // A client of its own, retrying a 503 twice: 3 attempts reach the origin, each seen once
      // by the instrumentation, none retried again (or counted) by install()'s client.
      const id = uid("instrumented");
      const client = new ResilientClient({ retry: FAST, breaker: false });
      const res = await within(client.fetch(`${ORIGIN_A}/flaky?id=${id}&fail=5&code=503`), 5000, "GET");
      assert.equal(res.status, 503);
      assert.equal((await logOf(ORIGIN_A, id)).length, 3, "the default maxAttempts");
      assert.equal(seen, 3, "each attempt passes the instrumentation once");
      assert.equal(installed.stats()[ORIGIN_A], undefined, "install()'s client took no part");
      // The app's own calls of the global still go through install()'s client.
      const id2 = uid("instrumented-app");
      assert.equal((await within(globalThis.fetch(`${ORIGIN_A}/flaky?id=${id2}&fail=1&code=503`), 5000, "GET")).status, 200);
      assert.equal(installed.stats()[ORIGIN_A]?.attempts, 2);
      client.free();
    } finally {
      globalThis.fetch = wrapper;
      assert.equal(rf.uninstall(), true);
    }
  });

  test("two copies of the package in one program: the other copy's clients send through what install() wrapped", async () => {
    const here = path.join(SCRATCH, "node_modules", "resilient-fetch");
    // One folder per build's run of this file (its copy for the full build copies full/).
    const there = path.join(SCRATCH, "node_modules", `resilient-fetch-second-copy-of-${path.basename(here)}`);
    cpSync(here, there, { recursive: true });
    const other = createRequire(path.join(SCRATCH, "package.json"))(path.join(there, "node.cjs"));
    assert.notEqual(other.ResilientClient, ResilientClient, "a copy of its own");
    const original = (i, n) => realFetch(i, n);
    globalThis.fetch = original;
    const installed = rf.install({ retry: FAST });
    try {
      const id = uid("second-copy");
      const client = new other.ResilientClient({ retry: FAST, breaker: false });
      assert.equal((await within(client.fetch(`${ORIGIN_A}/flaky?id=${id}&fail=5&code=503`), 5000, "GET")).status, 503);
      assert.equal((await logOf(ORIGIN_A, id)).length, 3, "3 attempts, not 3 × 3");
      // The same with instrumentation wrapped around install()'s wrapper.
      const wrapper = globalThis.fetch;
      globalThis.fetch = (i, n) => wrapper(i, n);
      const id2 = uid("second-copy-instrumented");
      assert.equal((await within(client.fetch(`${ORIGIN_A}/flaky?id=${id2}&fail=5&code=503`), 5000, "GET")).status, 503);
      assert.equal((await logOf(ORIGIN_A, id2)).length, 3, "3 attempts, not 3 × 3");
      globalThis.fetch = wrapper;
      assert.equal(installed.stats()[ORIGIN_A], undefined, "install()'s client took no part");
      client.free();
    } finally {
      assert.equal(rf.uninstall(), true);
    }
  });

  test("a spy that copies the wrapper's properties is used, not skipped; a read-only global fetch is a TypeError", async () => {
    const original = (i, n) => realFetch(i, n);
    globalThis.fetch = original;
    rf.install({ retry: FAST });
    const wrapper = globalThis.fetch;
    // As a mocking library's spyOn does: a new function with the old one's own properties.
    let spied = 0;
    const spy = Object.assign((i, n) => { spied++; return new Response("mocked"); }, wrapper);
    for (const key of Object.getOwnPropertySymbols(wrapper)) spy[key] = wrapper[key];
    globalThis.fetch = spy;
    try {
      const res = await within(resilientFetch(`${ORIGIN_A}/never-sent`), 5000, "resilientFetch");
      assert.deepEqual([await res.text(), spied], ["mocked", 1], "the mock set after install() is used");
    } finally {
      globalThis.fetch = wrapper;
      assert.equal(rf.uninstall(), true);
    }
    Object.defineProperty(globalThis, "fetch", { value: original, writable: false, configurable: true });
    try {
      assert.throws(() => rf.install(), (e) => e instanceof TypeError && /cannot be replaced/.test(e.message));
      assert.equal(globalThis.fetch, original);
      assert.equal(rf.uninstall(), false, "nothing was installed");
    } finally {
      Object.defineProperty(globalThis, "fetch", { value: original, writable: true, configurable: true, enumerable: true });
    }
  });

  test("uninstall() leaves a fetch replaced since alone and returns false", () => {
    assert.equal(typeof rf.install, "function", "no install export");
    const original = (i, n) => realFetch(i, n);
    globalThis.fetch = original;
    rf.install();
    const other = (i, n) => realFetch(i, n);
    globalThis.fetch = other;
    assert.equal(rf.uninstall(), false);
    assert.equal(globalThis.fetch, other);
  });
});

describe("a wrapper that calls back into the library", () => {
  /**
   * globalThis.fetch = a wrapper calling `inner`. A guard stops the test's own
   * recursion after 8 levels (so a build that does not stop it fails, bounded).
   */
  function selfWrapper(inner) {
    const state = { calls: 0 };
    globalThis.fetch = (i, n) => {
      state.calls++;
      if (state.calls > 8) throw new TypeError("test guard: the library did not stop the recursion");
      return inner(i, n);
    };
    return state;
  }

  test("(i, n) => resilientFetch(i, n): rejected at once with a TypeError, nothing sent, not retried, no breaker", async () => {
    // The module-wide client: an origin of its own (localhost), so nothing else is affected.
    const origin = ORIGIN_A.replace("127.0.0.1", "localhost");
    const events = [];
    const policy = { retry: FAST, breaker: { failureThreshold: 1, cooldownMs: 60000 }, onEvent: (e) => events.push(e.type) };
    const id = uid("self-rf");
    const state = selfWrapper((i, n) => resilientFetch(i, n));
    const t0 = Date.now();
    let err;
    try {
      err = await within(errorOf(resilientFetch(`${origin}/ok?id=${id}`, undefined, policy)), 5000, "the call");
    } finally {
      globalThis.fetch = realFetch;
    }
    const ms = Date.now() - t0;
    assert.ok(err instanceof TypeError, describeError(err));
    assert.match(err.message, /calls back into/);
    assert.ok(ms < 1000, `${ms} ms`);
    assert.equal(state.calls, 1, "the wrapper was called again (retried or recursed)");
    assert.ok(!events.includes("retry"), `events: ${events}`);
    assert.ok(!events.includes("breakerTransition"), `events: ${events}`);
    assert.deepEqual(await logOf(ORIGIN_A, id), []);
    // Original restored: the same origin, the same policy (breaker threshold 1), works.
    const id2 = uid("self-rf-after");
    assert.equal((await resilientFetch(`${origin}/ok?id=${id2}`, undefined, policy)).status, 200);
  });

  test("(i) => client.fetch(i), the init (and its signal) dropped: still caught at once", async () => {
    const client = new ResilientClient({ retry: FAST });
    const id = uid("self-noinit");
    const state = selfWrapper((i) => client.fetch(i));
    let err;
    try {
      err = await within(errorOf(client.fetch(`${ORIGIN_A}/ok?id=${id}`)), 5000, "the call");
    } finally {
      globalThis.fetch = realFetch;
    }
    assert.ok(err instanceof TypeError, describeError(err));
    assert.match(err.message, /calls back into/);
    assert.equal(state.calls, 1, "the wrapper was called again (retried or recursed)");
    assert.deepEqual(await logOf(ORIGIN_A, id), []);
    // Another client sending through this one is no recursion.
    const outer = new ResilientClient({ fetch: (i, n) => client.fetch(i, n) });
    assert.equal((await outer.fetch(`${ORIGIN_A}/ok`)).status, 200);
  });

  test("(i, n) => client.fetch(i, n): the same, and every client works afterwards", async () => {
    const client = new ResilientClient({ retry: FAST, breaker: { failureThreshold: 1, cooldownMs: 60000 } });
    const id = uid("self-client");
    const state = selfWrapper((i, n) => client.fetch(i, n));
    const t0 = Date.now();
    let err;
    try {
      err = await within(errorOf(client.fetch(`${ORIGIN_A}/ok?id=${id}`)), 5000, "the call");
    } finally {
      globalThis.fetch = realFetch;
    }
    assert.ok(err instanceof TypeError, describeError(err));
    assert.match(err.message, /calls back into/);
    assert.ok(Date.now() - t0 < 1000);
    assert.equal(state.calls, 1, "the wrapper was called again (retried or recursed)");
    assert.deepEqual(await logOf(ORIGIN_A, id), []);
    assert.equal(client.breakerState(ORIGIN_A), "closed");
    assert.equal(client.stats()[ORIGIN_A]?.retries ?? 0, 0);
    assert.equal((await client.fetch(`${ORIGIN_A}/ok`)).status, 200);
    assert.equal((await new ResilientClient().fetch(`${ORIGIN_A}/ok`)).status, 200);
    assert.equal((await resilientFetch(`${ORIGIN_A}/ok`)).status, 200);
  });
});

describe("no trap: after misuse the module still serves calls", () => {
  // Each bait runs in a process of its own (the module instance it may break is
  // that process's), bounded in time; the process prints one JSON line.
  const prelude = `
import * as rf from "resilient-fetch";
const { resilientFetch, ResilientClient } = rf;
const A = process.env.RF_TEST_ORIGIN_A;
const out = { uncaught: [] };
process.on("uncaughtException", (e) => out.uncaught.push(String(e?.message ?? e)));
process.on("unhandledRejection", (e) => out.uncaught.push("unhandled: " + String(e?.message ?? e)));
const within = (p, ms) => { let t; return Promise.race([p, new Promise((r) => { t = setTimeout(() => r({ pending: true }), ms); })]).finally(() => clearTimeout(t)); };
const settle = (p, ms = 5000) => within(Promise.resolve(p).then(
  (v) => ({ ok: true, status: v?.status }),
  (e) => ({ ok: false, type: e?.constructor?.name, name: e?.name, message: String(e?.message ?? e) })), ms);
const attempt = (f) => { try { const v = f(); return v && typeof v.then === "function" ? settle(v) : { ok: true }; }
  catch (e) { return { ok: false, sync: true, type: e?.constructor?.name, message: String(e?.message ?? e) }; } };
`;
  const epilogue = `
await new Promise((r) => setTimeout(r, 50));
out.after = { rf: await settle(resilientFetch(A + "/ok")), fresh: await settle(new ResilientClient().fetch(A + "/ok")) };
process.stdout.write("\\nRESULT " + JSON.stringify(out) + "\\n");
process.exit(0);
`;

  function runBait(bait) {
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", prelude + bait + epilogue], {
      cwd: SCRATCH, env: process.env, encoding: "utf8", timeout: 30000,
    });
    const line = r.stdout.split("\n").find((l) => l.startsWith("RESULT "));
    assert.ok(line, `no result (status ${r.status}, signal ${r.signal}):\n${r.stdout}\n${r.stderr}`);
    return JSON.parse(line.slice("RESULT ".length));
  }

  function assertServes(out) {
    assert.deepEqual(out.after.rf, { ok: true, status: 200 }, `resilientFetch afterwards: ${JSON.stringify(out)}`);
    assert.deepEqual(out.after.fresh, { ok: true, status: 200 }, `a fresh client afterwards: ${JSON.stringify(out)}`);
  }

  test("after self-recursive wrappers (resilientFetch and client.fetch)", () => {
    const out = runBait(`
const real = globalThis.fetch;
const guarded = (inner) => { let n = 0; return (i, init) => { if (++n > 8) throw new TypeError("test guard"); return inner(i, init); }; };
globalThis.fetch = guarded((i, n) => resilientFetch(i, n));
out.rf = await settle(resilientFetch(A + "/ok"));
const client = new ResilientClient();
globalThis.fetch = guarded((i, n) => client.fetch(i, n));
out.client = await settle(client.fetch(A + "/ok"));
globalThis.fetch = real;
out.sameClient = await settle(client.fetch(A + "/ok"));
`);
    assert.equal(out.rf.type, "TypeError", JSON.stringify(out.rf));
    assert.match(out.rf.message, /calls back into/);
    assert.equal(out.client.type, "TypeError", JSON.stringify(out.client));
    assert.match(out.client.message, /calls back into/);
    assert.deepEqual(out.sameClient, { ok: true, status: 200 });
    assert.deepEqual(out.uncaught, []);
    assertServes(out);
  });

  test("after an onEvent that calls the client back synchronously and throws", () => {
    const out = runBait(`
out.reentry = [];
let n = 0;
const client = new ResilientClient({ retry: { baseDelayMs: 1, maxDelayMs: 5 }, onEvent: (e) => {
  if (++n > 20) throw new Error("listener bug");
  try { client.fetch(A + "/ok").catch(() => {}); } catch (x) { out.reentry.push("fetch: " + x.message); }
  try { client.reset(); } catch (x) { out.reentry.push("reset: " + x.message); }
  try { client.stats(); } catch (x) { out.reentry.push("stats: " + x.message); }
  try { client.breakerState(A); } catch (x) { out.reentry.push("breakerState: " + x.message); }
  throw new Error("listener bug");
} });
out.bait = await settle(client.fetch(A + "/flaky?id=reentry-${uid("x")}&fail=1&code=503"));
out.again = await settle(client.fetch(A + "/ok"));
`);
    assert.ok(!out.bait.pending, `the call with the re-entrant listener never settled: ${JSON.stringify(out)}`);
    assert.ok(!out.again.pending, `a later call of that client never settled: ${JSON.stringify(out)}`);
    assert.ok(!out.reentry.some((m) => /unreachable|RuntimeError|borrow/i.test(m)), JSON.stringify(out.reentry));
    assert.deepEqual(out.uncaught, []);
    assertServes(out);
  });

  test("after fetch options that return garbage", () => {
    const out = runBait(`
out.garbage = [];
for (const f of [() => 42, () => undefined, () => ({}), () => Promise.resolve("nope"), () => Promise.resolve(null)]) {
  out.garbage.push(await settle(new ResilientClient({ fetch: f, retry: false }).fetch(A + "/ok")));
}
`);
    for (const g of out.garbage) assert.equal(g.type, "TypeError", JSON.stringify(out.garbage));
    assert.ok(out.garbage.every((g) => !/must be a number, string|unknown field/.test(g.message)),
      `the fetch option was not taken: ${JSON.stringify(out.garbage)}`);
    assert.deepEqual(out.uncaught, []);
    assertServes(out);
  });

  test("after using a client that was freed: an Error saying it was freed", () => {
    const out = runBait(`
const client = new ResilientClient();
client.free();
out.fetch = await attempt(() => client.fetch(A + "/ok"));
out.stats = await attempt(() => client.stats());
out.breakerState = await attempt(() => client.breakerState(A));
out.reset = await attempt(() => client.reset());
`);
    for (const k of ["fetch", "stats", "breakerState", "reset"]) {
      assert.equal(out[k].ok, false, `${k} after free(): ${JSON.stringify(out[k])}`);
      assert.match(out[k].message, /freed/, `${k}: ${out[k].message}`);
      assert.doesNotMatch(out[k].message, /null pointer/, `${k}: ${out[k].message}`);
    }
    assert.deepEqual(out.uncaught, []);
    assertServes(out);
  });
});

describe("bodies are bounded", () => {
  const lines = (text) => text.split("\n").filter(Boolean).length;

  test("totalTimeoutMs bounds reading the body: a stalled body rejects with TimeoutError, the connection is closed", async () => {
    const events = [];
    const client = new ResilientClient({ retry: false, onEvent: (e) => events.push(e) });
    const id = uid("stalled-total");
    const ac = new AbortController(); // only to clean up if the deadline does not hold
    const t0 = Date.now();
    try {
      const res = await client.fetch(`${ORIGIN_A}/stalled-body?id=${id}`, { signal: ac.signal }, { totalTimeoutMs: 1000 });
      assert.equal(res.status, 200);
      const err = await within(errorOf(res.text()), 3000, "res.text() of a stalled body");
      const ms = Date.now() - t0;
      assert.ok(err instanceof TimeoutError, describeError(err));
      assert.ok(ms >= 900 && ms < 1600, `rejected after ${ms} ms`);
      assert.equal(err.timeoutMs, 1000, "the limit that ran out is the call's deadline");
      assert.equal(client.stats()[ORIGIN_A].timeouts, 1, "the cut counts in stats().timeouts");
      assert.deepEqual(events.filter((e) => e.type === "bodyTimeout").map((e) => e.origin), [ORIGIN_A]);
      const log = await waitLog(ORIGIN_A, id, (l) => l[0]?.closedEarly);
      assert.ok(log[0]?.closedEarly, "the server never saw the connection closed");
    } finally {
      ac.abort();
    }
  });

  test("bodyTimeoutMs: a steady trickle (a chunk every 50 ms, gap limit 200 ms) reads in full", async () => {
    const client = new ResilientClient({ retry: false });
    const id = uid("trickle-ok");
    const ac = new AbortController();
    try {
      const res = await client.fetch(`${ORIGIN_A}/trickle?id=${id}&chunks=20&everyMs=50`, { signal: ac.signal },
        { bodyTimeoutMs: 200, totalTimeoutMs: 10000 });
      assert.equal(lines(await within(res.text(), 5000, "the trickle")), 20);
    } finally {
      ac.abort();
    }
  });

  test("bodyTimeoutMs through the read methods: text() of a stalled trickle rejects after the gap, a steady one reads whole", async () => {
    const client = new ResilientClient({ retry: false });
    const id = uid("trickle-text");
    const stalled = await client.fetch(`${ORIGIN_A}/trickle?id=${id}&chunks=20&everyMs=50&stallAfter=3`,
      undefined, { bodyTimeoutMs: 200, totalTimeoutMs: 10000 });
    const t0 = Date.now();
    const err = await within(errorOf(stalled.text()), 3000, "text() of a stalled trickle");
    assert.ok(err instanceof TimeoutError, describeError(err));
    assert.equal(err.timeoutMs, 200);
    assert.ok(Date.now() - t0 >= 250, "cut before the stall: the chunks reset the idle limit");
    const log = await waitLog(ORIGIN_A, id, (l) => l[0]?.closedEarly === true);
    assert.equal(log[0]?.closedEarly, true, "the connection was not closed");
    for (const read of ["arrayBuffer", "blob", "bytes"]) {
      const res = await client.fetch(`${ORIGIN_A}/trickle?id=${uid(read)}&chunks=5&everyMs=20`, undefined,
        { bodyTimeoutMs: 200 });
      if (typeof res[read] !== "function") continue;
      const body = await within(res[read](), 3000, read);
      const size = body.byteLength ?? body.size;
      assert.ok(size > 0, `${read}: ${size} bytes`);
      assert.equal(res.bodyUsed, true, `${read}: bodyUsed`);
      await assert.rejects(res.text(), TypeError, `${read}: a second read`);
    }
    const json = await client.fetch(`${ORIGIN_A}/effects?id=none`);
    assert.deepEqual(await json.json(), { effects: 0, keys: [] });
  });

  test("bodyTimeoutMs: a stall between chunks rejects the read with TimeoutError after that gap; counted and reported", async () => {
    const events = [];
    const client = new ResilientClient({ retry: false, onEvent: (e) => events.push(e) });
    const id = uid("trickle-stall");
    const ac = new AbortController();
    try {
      const res = await client.fetch(`${ORIGIN_A}/trickle?id=${id}&chunks=20&everyMs=50&stallAfter=3`,
        { signal: ac.signal }, { bodyTimeoutMs: 200, totalTimeoutMs: 10000 });
      const reader = res.body.getReader();
      let last = Date.now();
      let text = "";
      const decoder = new TextDecoder();
      const err = await within((async () => {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return null;
          text += decoder.decode(value, { stream: true });
          last = Date.now();
        }
      })().catch((e) => e), 3000, "reading a stalled trickle");
      const silence = Date.now() - last;
      assert.ok(err instanceof TimeoutError, describeError(err));
      assert.equal(err.timeoutMs, 200);
      assert.equal(lines(text), 3);
      assert.ok(silence >= 150 && silence < 800, `rejected after ${silence} ms of silence`);
      assert.ok(client.stats()[ORIGIN_A]?.timeouts >= 1, JSON.stringify(client.stats()));
      const ev = events.find((e) => e.type === "bodyTimeout");
      assert.ok(ev, `no bodyTimeout event: ${events.map((e) => e.type)}`);
      assert.equal(ev.origin, ORIGIN_A);
      assert.equal(ev.timeoutMs, 200);
      const log = await waitLog(ORIGIN_A, id, (l) => l[0]?.closedEarly);
      assert.ok(log[0]?.closedEarly, "the server never saw the connection closed");
    } finally {
      ac.abort();
    }
  });

  test("bodyTimeoutMs: false lets a long stream through, past totalTimeoutMs", async () => {
    const client = new ResilientClient({ retry: false });
    const id = uid("trickle-stream");
    const ac = new AbortController();
    try {
      const res = await client.fetch(`${ORIGIN_A}/trickle?id=${id}&chunks=20&everyMs=50`, { signal: ac.signal },
        { bodyTimeoutMs: false, totalTimeoutMs: 300 });
      assert.equal(lines(await within(res.text(), 5000, "the stream")), 20);
    } finally {
      ac.abort();
    }
  });

  test("bodyTimeoutMs takes an integer or false; 0, -1, \"x\" are errors naming it", async () => {
    assert.doesNotThrow(() => new ResilientClient({ bodyTimeoutMs: 5000 }));
    assert.doesNotThrow(() => new ResilientClient({ bodyTimeoutMs: false }));
    const id = uid("body-timeout-bad");
    for (const bad of [0, -1, "x"]) {
      const ok = (e) => (e instanceof RangeError || e instanceof TypeError) && e.message.includes("bodyTimeoutMs");
      assert.throws(() => new ResilientClient({ bodyTimeoutMs: bad }), ok, JSON.stringify(bad));
      await assert.rejects(new ResilientClient().fetch(`${ORIGIN_A}/ok?id=${id}`, undefined, { bodyTimeoutMs: bad }), ok);
    }
    assert.deepEqual(await logOf(ORIGIN_A, id), []);
  });

  test("the response keeps url, status, statusText, headers, redirected, ok; instanceof Response; clone() reads twice", async () => {
    const client = new ResilientClient({ retry: false });
    const id = uid("shape");
    const target = "/trickle?chunks=5&everyMs=10";
    const res = await client.fetch(`${ORIGIN_A}/redirect?id=${id}&to=${encodeURIComponent(target)}`);
    assert.ok(res instanceof Response);
    assert.equal(res.status, 200);
    assert.equal(res.statusText, "OK");
    assert.equal(res.ok, true);
    assert.equal(res.redirected, true);
    assert.equal(res.url, `${ORIGIN_A}${target}`);
    assert.equal(res.headers.get("content-type"), "text/plain");
    const copy = res.clone();
    const [a, b] = await within(Promise.all([res.text(), copy.text()]), 5000, "both copies");
    assert.equal(lines(a), 5);
    assert.equal(a, b);
    const plain = await client.fetch(`${ORIGIN_A}/status?code=404`);
    assert.equal(plain.redirected, false);
    assert.equal(plain.ok, false);
    assert.equal(plain.statusText, "Not Found");
    assert.equal(plain.url, `${ORIGIN_A}/status?code=404`);
    assert.equal(await plain.text(), "status 404");
  });
});

describe("the breaker's defaults", () => {
  test("two failing calls (all their attempts) do not open the default breaker", async () => {
    const client = new ResilientClient({ retry: FAST });
    const id = uid("default-breaker-2");
    for (let i = 0; i < 2; i++) {
      assert.equal((await client.fetch(`${ORIGIN_A}/status?id=${id}&code=500`)).status, 500);
    }
    assert.ok((await logOf(ORIGIN_A, id)).length >= 4, "the calls were not retried");
    assert.equal(client.breakerState(ORIGIN_A), "closed");
  });

  test("12 failing attempts open the default breaker; it then rejects for cooldownMs 5000", async () => {
    const client = new ResilientClient({ retry: false });
    const id = uid("default-breaker-12");
    for (let i = 0; i < 12; i++) await errorOf(client.fetch(`${ORIGIN_A}/status?id=${id}&code=500`));
    assert.equal(client.breakerState(ORIGIN_A), "open");
    const sent = (await logOf(ORIGIN_A, id)).length;
    assert.ok(sent >= 10, `opened after ${sent} failures (minimumCalls is 10)`);
    const err = await errorOf(client.fetch(`${ORIGIN_A}/ok`));
    assert.ok(err instanceof CircuitOpenError, describeError(err));
    assert.ok(err.retryAfterMs > 4000 && err.retryAfterMs <= 5000, `retryAfterMs ${err.retryAfterMs}`);
  });

  test("the default window is time-based (30 s), not the last 20 calls: 20 successes then 12 failures stay closed", async () => {
    const client = new ResilientClient({ retry: false });
    const id = uid("default-breaker-window");
    for (let i = 0; i < 20; i++) assert.equal((await client.fetch(`${ORIGIN_A}/ok`)).status, 200);
    for (let i = 0; i < 12; i++) {
      const res = await client.fetch(`${ORIGIN_A}/status?id=${id}&code=500`);
      assert.equal(res.status, 500);
    }
    // 12 of 32 calls failed (37.5 %); a count window of 20 would hold 12 of 20.
    assert.equal(client.breakerState(ORIGIN_A), "closed");
    // 10 more failures: 22 of 42 (over 50 %): open.
    for (let i = 0; i < 10; i++) await errorOf(client.fetch(`${ORIGIN_A}/status?id=${id}&code=500`));
    assert.equal(client.breakerState(ORIGIN_A), "open");
  });

  test("breaker: { failureThreshold: 3 } (no mode) opens after 3 consecutive failures", async () => {
    const client = new ResilientClient({ retry: false, breaker: { failureThreshold: 3 } });
    const id = uid("consecutive-3");
    for (let i = 0; i < 3; i++) assert.equal((await client.fetch(`${ORIGIN_A}/status?id=${id}&code=500`)).status, 500);
    assert.equal(client.breakerState(ORIGIN_A), "open");
    await assert.rejects(client.fetch(`${ORIGIN_A}/ok`), CircuitOpenError);
  });

  test("fields of the other mode are errors naming them", async () => {
    const names = (field) => (e) => (e instanceof TypeError || e instanceof RangeError) && e.message.includes(field);
    const cases = [
      [{ failureThreshold: 3, failureRateThreshold: 0.5 }, "breaker.failureRateThreshold"],
      [{ mode: "consecutive", minimumCalls: 5 }, "breaker.minimumCalls"],
    ];
    const id = uid("breaker-mixed");
    for (const [breaker, field] of cases) {
      assert.throws(() => new ResilientClient({ breaker }), names(field), JSON.stringify(breaker));
      await assert.rejects(new ResilientClient().fetch(`${ORIGIN_A}/ok?id=${id}`, undefined, { breaker }), names(field));
    }
    assert.deepEqual(await logOf(ORIGIN_A, id), []);
  });
});

describe("small contract points", () => {
  test("breakerState needs an origin: undefined and a bare host are TypeErrors that say so", () => {
    const client = new ResilientClient();
    assert.throws(() => client.breakerState(undefined), (e) => e instanceof TypeError && e.message.includes("origin"),
      "breakerState(undefined)");
    assert.throws(() => client.breakerState("api.example.com"),
      (e) => e instanceof TypeError && e.message.includes("scheme://host"), "breakerState(\"api.example.com\")");
  });

  test("half-open with its probe in flight: the rejection's message says half-open", async () => {
    const client = new ResilientClient({ retry: false, breaker: { failureThreshold: 1, cooldownMs: 100 } });
    assert.equal((await client.fetch(`${ORIGIN_A}/status?code=500`)).status, 500);
    assert.equal(client.breakerState(ORIGIN_A), "open");
    await sleep(150);
    const id = uid("probe-in-flight");
    const probe = client.fetch(`${ORIGIN_A}/slow?id=${id}&ms=500`);
    await waitLog(ORIGIN_A, id, (l) => l.length === 1);
    const err = await errorOf(client.fetch(`${ORIGIN_A}/ok`));
    assert.ok(err instanceof CircuitOpenError, describeError(err));
    assert.match(err.message, /half-open/);
    assert.equal((await probe).status, 200);
    assert.equal(client.breakerState(ORIGIN_A), "closed");
  });

  test("a fetch option resolving with something else than a Response: TypeError, outcome invalidResponse, not retried", async () => {
    for (const value of [{ hello: "world" }, 42, "text"]) {
      const events = [];
      let calls = 0;
      const client = new ResilientClient({
        retry: FAST, fetch: () => { calls++; return Promise.resolve(value); }, onEvent: (e) => events.push(e),
      });
      const err = await errorOf(client.fetch("http://mock.test/x"));
      assert.ok(err instanceof TypeError, describeError(err));
      assert.equal(calls, 1, `${JSON.stringify(value)}: fetch called ${calls} times`);
      const ends = events.filter((e) => e.type === "attemptEnd");
      assert.equal(ends.length, 1, JSON.stringify(events));
      assert.equal(ends[0].outcome, "invalidResponse");
      assert.equal(client.breakerState("http://mock.test"), "closed");
    }
  });
});
