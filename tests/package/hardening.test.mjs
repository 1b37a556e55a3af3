// Hardening: exactly-once under dropped answers, hostile or broken servers,
// bad input from callers (every policy field), policy fuzzing from JS, and
// the security promises (CSPRNG keys, no logging, no extra headers).
import test, { describe } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { ORIGIN_A, ORIGIN_B, SCRATCH, serverLog, uid } from "./helpers.mjs";
import { resilientFetch, ResilientClient, TimeoutError, memoryBytes } from "resilient-fetch";

const fresh = (policy) => new ResilientClient(policy);
const FAST = { retry: { baseDelayMs: 1, maxDelayMs: 5 } };

/** Runs `fn(i)` for i in [0, n) with at most `width` at once. */
async function pool(n, width, fn) {
  let next = 0;
  const results = new Array(n);
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < n) { const i = next++; results[i] = await fn(i); }
  }));
  return results;
}

describe("exactly-once under dropped answers", () => {
  test("1 000 POSTs, 30 % of attempts dropped after the effect: all 2xx, exactly 1 000 effects", async () => {
    const id = uid("once");
    // Breaker and budget off: this test is about keys and retries only (both would
    // rightly stop retrying against an origin failing this often).
    const client = fresh({ retry: { maxAttempts: 12, baseDelayMs: 1, maxDelayMs: 4 }, breaker: false, retryBudget: false });
    const statuses = await pool(1000, 50, (i) => client.fetch(`${ORIGIN_A}/effect?id=${id}&dropRate=0.3`,
      { method: "POST", body: `order-${i}` }).then((r) => r.status, (e) => e.name));
    assert.deepEqual([...new Set(statuses)], [201]);
    const { effects } = await (await fetch(`${ORIGIN_A}/effects?id=${id}`)).json();
    assert.equal(effects, 1000);
    const attempts = (await serverLog(ORIGIN_A, id)).length;
    assert.ok(attempts > 1200, `only ${attempts} attempts: the drops did not happen`);
  });

  test("with keys off no POST is repeated: effects never exceed calls", async () => {
    const id = uid("once-nokey");
    const client = fresh({ idempotencyKey: false, breaker: false, ...FAST });
    const outcomes = await pool(300, 30, (i) => client.fetch(`${ORIGIN_A}/effect?id=${id}&dropRate=0.3`,
      { method: "POST", body: `order-${i}` }).then((r) => r.status, (e) => e.name));
    const attempts = (await serverLog(ORIGIN_A, id)).length;
    const { effects } = await (await fetch(`${ORIGIN_A}/effects?id=${id}`)).json();
    assert.equal(attempts, 300, "a POST without a key was sent twice");
    assert.equal(effects, 300);
    assert.ok(outcomes.filter((o) => o === "TypeError").length > 30, "no drop surfaced as a network error");
  });
});

describe("hostile or broken servers", () => {
  const retryAfter = async (value, policy = {}) => {
    const id = uid("ra");
    const t0 = Date.now();
    const res = await fresh({ ...FAST, ...policy }).fetch(`${ORIGIN_A}/retry-after?id=${id}&value=${encodeURIComponent(value)}&code=503`);
    return { status: res.status, ms: Date.now() - t0, attempts: (await serverLog(ORIGIN_A, id)).length };
  };

  test("Retry-After of 10^12 seconds: the response is handed back at once", async () => {
    const r = await retryAfter("1000000000000");
    assert.equal(r.status, 503);
    assert.equal(r.attempts, 1);
    assert.ok(r.ms < 1000, `${r.ms} ms`);
  });

  test("a date far ahead: handed back at once", async () => {
    const r = await retryAfter("date:86400");
    assert.deepEqual([r.status, r.attempts], [503, 1]);
    assert.ok(r.ms < 1000);
  });

  for (const value of ["-5", "garbage", "1.5", "", "Sun, 99 Foo 1994 08:49:37 GMT"]) {
    test(`a malformed Retry-After (${JSON.stringify(value)}) is ignored: normal backoff, retried`, async () => {
      const r = await retryAfter(value);
      assert.deepEqual([r.status, r.attempts], [200, 2]);
      assert.ok(r.ms < 1000, `${r.ms} ms`);
    });
  }

  test("a date in the past: retried at once", async () => {
    const r = await retryAfter("date:-60");
    assert.deepEqual([r.status, r.attempts], [200, 2]);
    assert.ok(r.ms < 1000);
  });

  test("a Retry-After within the cap but past the deadline: handed back at once", async () => {
    const r = await retryAfter("5", { totalTimeoutMs: 2000 });
    assert.deepEqual([r.status, r.attempts], [503, 1]);
    assert.ok(r.ms < 1000);
  });

  test("a connection reset mid-headers is a network error, retried, then rejected", async () => {
    const id = uid("partial-reset");
    await assert.rejects(fresh(FAST).fetch(`${ORIGIN_A}/partial-headers?id=${id}&then=reset`),
      (e) => e instanceof TypeError);
    assert.equal((await serverLog(ORIGIN_A, id)).length, 3);
  });

  test("headers that never finish: the attempt times out, the deadline holds", async () => {
    const id = uid("partial-hang");
    const t0 = Date.now();
    await assert.rejects(fresh({ timeoutMs: 150, totalTimeoutMs: 600, ...FAST }).fetch(`${ORIGIN_A}/partial-headers?id=${id}&then=hang`),
      TimeoutError);
    const ms = Date.now() - t0;
    assert.ok(ms >= 400 && ms < 2000, `${ms} ms`);
  });

  for (const code of [599, 999]) {
    test(`status ${code}: handed back, counted as a failure, nothing breaks`, async () => {
      const client = fresh({ ...FAST, breaker: { failureThreshold: 2 } });
      const id = uid(`status-${code}`);
      const res = await client.fetch(`${ORIGIN_A}/status?id=${id}&code=${code}`);
      assert.equal(res.status, code);
      assert.equal((await serverLog(ORIGIN_A, id)).length, 1, "not in retryOn: not retried");
      assert.equal(client.stats()[ORIGIN_A].failures, 1);
      assert.equal((await client.fetch(`${ORIGIN_A}/ok`)).status, 200);
    });
  }

  test("1 000 distinct origins: the registry stays at its bound, memory settles", async () => {
    const client = fresh({ retry: false, maxOrigins: 100, timeoutMs: 2000 });
    const port = new URL(ORIGIN_A).port;
    // 127.0.x.y are loopback addresses where nothing listens: each is refused at once.
    const origin = (i) => `http://127.0.${1 + Math.floor(i / 250)}.${1 + (i % 250)}:${port}`;
    await pool(200, 50, (i) => client.fetch(`${origin(i)}/`).catch(() => null));
    const after200 = memoryBytes();
    await pool(1000, 50, (i) => client.fetch(`${origin(i)}/`).catch(() => null));
    const origins = Object.keys(client.stats());
    assert.equal(origins.length, 100);
    assert.ok(origins.includes(origin(999)), "the most recent origin was evicted");
    assert.ok(!origins.includes(origin(0)), "the least recent origin was kept");
    assert.ok(memoryBytes() - after200 <= 65536, `memory grew ${memoryBytes() - after200} bytes`);
  });
});

describe("bad input from callers: each field, before any request", () => {
  // [policy, error class, words the message must contain]
  const cases = [
    [{ timeoutMs: 0 }, RangeError, ["timeoutMs", "1", "2147483647"]],
    [{ timeoutMs: 2 ** 31 }, RangeError, ["timeoutMs"]],
    [{ timeoutMs: 1.5 }, RangeError, ["timeoutMs", "integer"]],
    [{ timeoutMs: NaN }, RangeError, ["timeoutMs"]],
    [{ timeoutMs: "100" }, TypeError, ["timeoutMs"]],
    [{ totalTimeoutMs: 0 }, RangeError, ["totalTimeoutMs"]],
    [{ totalTimeoutMs: true }, TypeError, ["totalTimeoutMs"]],
    [{ retry: "yes" }, TypeError, ["retry"]],
    [{ retry: { maxAttempts: 0 } }, RangeError, ["retry.maxAttempts", "1", "20"]],
    [{ retry: { maxAttempts: 21 } }, RangeError, ["retry.maxAttempts", "20"]],
    [{ retry: { maxAttempts: "3" } }, TypeError, ["retry.maxAttempts"]],
    [{ retry: { baseDelayMs: -1 } }, RangeError, ["retry.baseDelayMs"]],
    [{ retry: { maxDelayMs: -1 } }, RangeError, ["retry.maxDelayMs"]],
    [{ retry: { baseDelayMs: 500, maxDelayMs: 100 } }, RangeError, ["retry.maxDelayMs", "baseDelayMs"]],
    [{ retry: { jitter: "random" } }, RangeError, ["retry.jitter", "full"]],
    [{ retry: { jitter: 1 } }, TypeError, ["retry.jitter"]],
    [{ retry: { retryOn: [99] } }, RangeError, ["retry.retryOn", "599"]],
    [{ retry: { retryOn: [600] } }, RangeError, ["retry.retryOn"]],
    [{ retry: { retryOn: "503" } }, TypeError, ["retry.retryOn"]],
    [{ retry: { maxRetryAfterMs: -1 } }, RangeError, ["retry.maxRetryAfterMs"]],
    [{ retry: { unknown: 1 } }, TypeError, ["unknown"]],
    [{ breaker: 5 }, TypeError, ["breaker"]],
    [{ breaker: { mode: "sometimes" } }, RangeError, ["breaker.mode"]],
    [{ breaker: { failureThreshold: 0 } }, RangeError, ["breaker.failureThreshold", "1000"]],
    [{ breaker: { failureThreshold: 1001 } }, RangeError, ["breaker.failureThreshold"]],
    [{ breaker: { cooldownMs: 0 } }, RangeError, ["breaker.cooldownMs"]],
    [{ breaker: { halfOpenMaxCalls: 0 } }, RangeError, ["breaker.halfOpenMaxCalls"]],
    [{ breaker: { failureRateThreshold: 0 } }, RangeError, ["breaker.failureRateThreshold"]],
    [{ breaker: { failureRateThreshold: 1.5 } }, RangeError, ["breaker.failureRateThreshold"]],
    [{ breaker: { minimumCalls: 0 } }, RangeError, ["breaker.minimumCalls"]],
    [{ breaker: { windowType: "calls" } }, RangeError, ["breaker.windowType"]],
    [{ breaker: { windowSize: 0 } }, RangeError, ["breaker.windowSize"]],
    [{ breaker: { windowSize: 1001 } }, RangeError, ["breaker.windowSize"]],
    [{ breaker: { windowMs: 0 } }, RangeError, ["breaker.windowMs"]],
    [{ retryBudget: "on" }, TypeError, ["retryBudget"]],
    [{ retryBudget: { capacity: 0 } }, RangeError, ["retryBudget.capacity"]],
    [{ retryBudget: { capacity: 10, retryCost: 11 } }, RangeError, ["retryBudget.retryCost"]],
    [{ retryBudget: { timeoutRetryCost: -1 } }, RangeError, ["retryBudget.timeoutRetryCost"]],
    [{ retryBudget: { noRetryIncrement: -1 } }, RangeError, ["retryBudget.noRetryIncrement"]],
    [{ bulkhead: { maxConcurrent: 0 } }, RangeError, ["bulkhead.maxConcurrent"]],
    [{ bulkhead: { maxQueue: -1 } }, RangeError, ["bulkhead.maxQueue"]],
    [{ idempotencyKey: "" }, RangeError, ["idempotencyKey"]],
    [{ idempotencyKey: "has space" }, RangeError, ["idempotencyKey"]],
    [{ idempotencyKey: 5 }, TypeError, ["idempotencyKey"]],
    [{ idempotencyHeader: "bad header" }, RangeError, ["idempotencyHeader"]],
    [{ idempotencyHeader: "" }, RangeError, ["idempotencyHeader"]],
    [{ idempotencyHeader: "Sec-Idempotency" }, RangeError, ["idempotencyHeader", "forbidden"]],
    [{ idempotencyHeader: "Cookie" }, RangeError, ["idempotencyHeader", "forbidden"]],
    [{ maxOrigins: 0 }, RangeError, ["maxOrigins"]],
    [{ onEvent: "log" }, TypeError, ["onEvent"]],
    [{ retyr: { maxAttempts: 2 } }, TypeError, ["retyr"]],
    // A function where data goes (retry.shouldRetry is a function field now: see decisions.test.mjs).
    [{ retry: { jitter: () => "full" } }, TypeError, ["retry.jitter", "function"]],
    [{ retry: { shouldRetry: "yes" } }, TypeError, ["retry.shouldRetry", "function"]],
    [{ retry: { retryOn: [503, [[[504]]]] } }, TypeError, ["retry.retryOn[1]"]],
  ];
  for (const [policy, type, words] of cases) {
    test(`${JSON.stringify(policy) ?? String(policy)} → ${type.name}`, async () => {
      const id = uid("bad");
      const check = (e) => {
        assert.ok(e instanceof type, `${e?.constructor?.name}: ${e?.message}`);
        for (const w of words) assert.ok(e.message.includes(w), `"${e.message}" does not mention ${w}`);
        return true;
      };
      await assert.rejects(fresh().fetch(`${ORIGIN_A}/ok?id=${id}`, undefined, policy), check);
      assert.throws(() => new ResilientClient(policy), check);
      assert.equal((await serverLog(ORIGIN_A, id)).length, 0, "a request was sent");
    });
  }

  test("a policy that is not an object, or an init that is not one", async () => {
    await assert.rejects(resilientFetch(`${ORIGIN_A}/ok`, undefined, 42), TypeError);
    await assert.rejects(resilientFetch(`${ORIGIN_A}/ok`, undefined, [1]), TypeError);
    await assert.rejects(resilientFetch(`${ORIGIN_A}/ok`, 42), TypeError);
  });

  test("hostile policies (throwing getters, proxies, cycles, bigints, deep nesting) reject the call, and the module lives on", async () => {
    const boom = new Error("boom");
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    const cyclic = { retry: {} };
    cyclic.retry.again = cyclic;
    let deep = { x: 1 };
    for (let i = 0; i < 10_000; i++) deep = { deep };
    const hostile = [
      [{ get timeoutMs() { throw boom; } }, (e) => e === boom],
      [{ retry: { get maxAttempts() { throw boom; } } }, (e) => e === boom],
      [{ get onEvent() { throw boom; } }, (e) => e === boom],
      [new Proxy({}, { ownKeys() { throw boom; } }), (e) => e === boom],
      [{ retry: new Proxy({ maxAttempts: 2 }, { get() { throw boom; } }) }, (e) => e === boom],
      [revoked.proxy, (e) => e instanceof TypeError],
      [{ breaker: revoked.proxy }, (e) => e instanceof TypeError],
      [cyclic, (e) => e instanceof TypeError && e.message.includes("retry.again")],
      [{ retry: deep }, (e) => e instanceof TypeError && e.message.includes("retry.deep")],
      [{ timeoutMs: 5000n }, (e) => e instanceof TypeError && /timeoutMs.*bigint/.test(e.message)],
      [{ retry: { jitter: Symbol("full") } }, (e) => e instanceof TypeError && /retry\.jitter.*symbol/.test(e.message)],
    ];
    // Many times over: a JS exception that unwound through wasm frames would leak the wasm
    // stack on every call, until the module fails for everyone.
    const client = new ResilientClient({ retry: false });
    for (let i = 0; i < 1000; i++) {
      for (const [policy, check] of hostile) {
        assert.throws(() => new ResilientClient(policy), check);
        await assert.rejects(client.fetch(`${ORIGIN_A}/ok`, undefined, policy), check);
      }
    }
    assert.equal((await resilientFetch(`${ORIGIN_A}/ok`)).status, 200, "the module still works");
    assert.equal((await client.fetch(`${ORIGIN_A}/ok`, undefined, { timeoutMs: 5000 })).status, 200);
  });

  test("a fetch (mock or polyfill) resolving with something not a Response: TypeError, not retried, module alive", async () => {
    const real = globalThis.fetch;
    let calls = 0;
    try {
      for (const bad of [undefined, null, 42, "ok", {}, { status: "200" }, { get status() { throw new Error("boom"); } }]) {
        globalThis.fetch = async () => { calls++; return bad; };
        calls = 0;
        await assert.rejects(fresh().fetch(`${ORIGIN_A}/ok`), (e) => {
          if (bad && typeof bad === "object" && Object.getOwnPropertyDescriptor(bad, "status")?.get) {
            return e.message === "boom";
          }
          return e instanceof TypeError && /not a Response/.test(e.message);
        });
        assert.equal(calls, 1, `retried after resolving with ${String(bad)}`);
      }
    } finally {
      globalThis.fetch = real;
    }
    assert.equal((await resilientFetch(`${ORIGIN_A}/ok`)).status, 200, "the module still works");
  });

  test("a fetch (mock or polyfill) that ignores its signal and never settles: limits and aborts still end the call", async () => {
    const real = globalThis.fetch;
    let calls = 0;
    globalThis.fetch = () => { calls++; return new Promise(() => {}); };
    try {
      // Each attempt's limit, retried, then the last attempt's TimeoutError.
      await assert.rejects(fresh().fetch(`${ORIGIN_A}/ok`, undefined, { timeoutMs: 30, retry: { baseDelayMs: 1 } }),
        (e) => e instanceof TimeoutError && e.timeoutMs === 30);
      assert.equal(calls, 3);
      // The whole call's limit.
      await assert.rejects(fresh().fetch(`${ORIGIN_A}/ok`, undefined, { timeoutMs: 10_000, totalTimeoutMs: 50 }),
        (e) => e instanceof TimeoutError && e.timeoutMs === 50);
      // The caller's abort.
      const ac = new AbortController();
      const p = fresh().fetch(`${ORIGIN_A}/ok`, { signal: ac.signal }, { timeoutMs: 10_000 });
      setTimeout(() => ac.abort(), 20);
      await assert.rejects(p, (e) => e.name === "AbortError");
    } finally {
      globalThis.fetch = real;
    }
  });

  test("random policies never crash the module: each is accepted or rejected with a TypeError/RangeError", async () => {
    let seed = 42;
    const rnd = () => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed / 2 ** 31; };
    const pick = (a) => a[Math.floor(rnd() * a.length)];
    const fields = ["timeoutMs", "totalTimeoutMs", "retry", "breaker", "retryBudget", "bulkhead", "idempotencyKey",
      "idempotencyHeader", "maxOrigins", "maxAttempts", "baseDelayMs", "maxDelayMs", "jitter", "retryOn", "mode",
      "failureThreshold", "cooldownMs", "capacity", "maxConcurrent", "windowType", "x"];
    const value = (depth) => pick([
      () => pick([0, -1, 1, 3, 2.5, 1e300, -0, NaN, Infinity, -Infinity, 2 ** 31, 2 ** 53 + 1]),
      () => pick(["", "full", "none", "x".repeat(300), "\u0000", "😀", "count", "failure-rate"]),
      () => pick([true, false, null, undefined]),
      () => (depth > 2 ? 1 : Array.from({ length: Math.floor(rnd() * 4) }, () => value(depth + 1))),
      () => (depth > 2 ? {} : object(depth + 1)),
      () => pick([() => 1, Symbol("s"), 10n, new Date(0)]),
    ])();
    const object = (depth) => Object.fromEntries(Array.from({ length: Math.floor(rnd() * 4) },
      () => [pick(fields), value(depth)]));
    let accepted = 0;
    for (let i = 0; i < 3000; i++) {
      const policy = object(0);
      try {
        new ResilientClient(policy).free();
        accepted++;
      } catch (e) {
        if (!(e instanceof TypeError || e instanceof RangeError)) {
          const show = JSON.stringify(policy, (_, v) => (typeof v === "bigint" || typeof v === "symbol" ? String(v) : v));
          assert.fail(`${e?.constructor?.name}: ${e?.message} for ${show}`);
        }
      }
    }
    assert.ok(accepted > 0);
    assert.equal((await resilientFetch(`${ORIGIN_A}/ok`)).status, 200, "the module still works");
  });
});

test("where Error.stackTraceLimit is read-only, timeouts and rejections still happen", async () => {
  const script = `import { ResilientClient, TimeoutError, CircuitOpenError } from "resilient-fetch";
    Object.defineProperty(Error, "stackTraceLimit", { value: 10, writable: false });
    const [a] = process.argv.slice(1);
    const c = new ResilientClient({ timeoutMs: 100, retry: false, breaker: { failureThreshold: 1 } });
    const t = await c.fetch(a + "/hang").catch((e) => e);
    const o = await c.fetch(a + "/ok").catch((e) => e);
    console.log(JSON.stringify([t instanceof TimeoutError, o instanceof CircuitOpenError]));`;
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script, ORIGIN_A],
    { cwd: SCRATCH, timeout: 10000, encoding: "utf8" });
  assert.deepEqual(JSON.parse(out), [true, true]);
});

describe("security", () => {
  test("keys come from the CSPRNG: two fresh module instances give different keys", async () => {
    const id = uid("fresh-instances");
    const script = `import { resilientFetch } from "resilient-fetch";
      await resilientFetch(process.argv[1], { method: "POST", body: "x" });`;
    for (let i = 0; i < 2; i++) {
      execFileSync(process.execPath, ["--input-type=module", "-e", script, `${ORIGIN_A}/ok?id=${id}`], { cwd: SCRATCH });
    }
    const keys = (await serverLog(ORIGIN_A, id)).map((r) => r.key);
    assert.equal(keys.length, 2);
    assert.notEqual(keys[0], keys[1]);
  });

  test("keys are never written to the console by the library", async () => {
    const id = uid("no-log");
    const seen = [];
    const saved = {};
    for (const m of ["log", "info", "warn", "error", "debug", "trace"]) {
      saved[m] = console[m];
      console[m] = (...a) => { seen.push(a.map(String).join(" ")); };
    }
    try {
      await fresh(FAST).fetch(`${ORIGIN_A}/flaky?id=${id}&fail=2&code=503`, { method: "POST", body: "x" });
    } finally {
      Object.assign(console, saved);
    }
    const key = (await serverLog(ORIGIN_A, id))[0].key;
    assert.ok(key);
    assert.ok(!seen.some((line) => line.includes(key)), "the key was logged");
    assert.deepEqual(seen, [], "the library wrote to the console");
  });

  test("no header is added by default but Idempotency-Key (and that on POST/PATCH only)", async () => {
    const get = uid("hdr-get"), plain = uid("hdr-plain"), post = uid("hdr-post"), postPlain = uid("hdr-post-plain");
    await fetch(`${ORIGIN_B}/ok?id=${plain}`);
    await resilientFetch(`${ORIGIN_B}/ok?id=${get}`);
    await fetch(`${ORIGIN_B}/ok?id=${postPlain}`, { method: "POST", body: "x" });
    await resilientFetch(`${ORIGIN_B}/ok?id=${post}`, { method: "POST", body: "x" });
    const names = async (id) => (await serverLog(ORIGIN_B, id))[0].headers;
    assert.deepEqual(await names(get), await names(plain));
    const plainPost = await names(postPlain);
    const added = (await names(post)).filter((h) => !plainPost.includes(h));
    assert.deepEqual(added, ["idempotency-key"]);
  });
});
