// The HTTP clients users already call, with the package under them: ky, ofetch, axios (its
// fetch adapter) and openapi-fetch, each set up as a user writes it, with resilientFetch,
// with a client's fetch (bound) and under install(). For each: a 503 then 200 is retried by
// ours, a slow attempt is cut at timeoutMs, a POST carries one Idempotency-Key on every retry,
// an open breaker sends nothing, and the error each outer client shows for ours. Then the
// layering: attempts that reach the server when both retry, and the setups that do not work.
// Against the fault server on 127.0.0.1, the package used by name, the clients from tools/.
import test, { afterEach, describe } from "node:test";
import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";
import {
  ORIGIN_A, ORIGIN_B, describeError, serverLog as logOf, toolsRequire, uid, waitLog, within,
} from "./helpers.mjs";
import * as rf from "resilient-fetch";

const { resilientFetch, ResilientClient, TimeoutError, CircuitOpenError } = rf;

// ky is ESM only; the others are loaded as their CommonJS builds.
const kyModule = await import(pathToFileURL(toolsRequire.resolve("ky")).href);
const ky = kyModule.default;
const { ofetch, FetchError } = toolsRequire("ofetch");
const axios = toolsRequire("axios");
const createClient = toolsRequire("openapi-fetch").default;

const FAST = { baseDelayMs: 1, maxDelayMs: 5 };
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const realFetch = globalThis.fetch;
afterEach(() => {
  rf.uninstall();
  globalThis.fetch = realFetch;
});

const url = (origin, path, query) => `${origin}${path}?${new URLSearchParams(query)}`;
const given = (fetch) => (fetch ? { fetch } : {}); // no fetch: the client uses the global one
const settle = (p) => within(p, 8000, "the call").then((value) => ({ value }), (error) => ({ error }));
const failed = (s) => {
  assert.ok(s.error, `expected a rejection, got ${JSON.stringify(s.value)}`);
  return s.error;
};
const statuses = (log) => log.map((e) => e.status);

/**
 * Each outer client: `make(fetch, origin)` is the recommended setup (the outer client's
 * retries off; ky's own timeout off too), `byDefault` the client's own defaults (axios and
 * openapi-fetch have no retries of their own), `retryingPosts` one that retries POSTs too;
 * `get`/`post` call it as its users do and give { status, body }; the rest assert the error
 * it shows for an error of ours (and return ours), for a final HTTP status and for a network
 * error once ours gave up. No fetch given (install()): the client uses the global one.
 */
const CLIENTS = [
  {
    name: "ky",
    make: (fetch) => ky.create({ ...given(fetch), retry: 0, timeout: false }),
    byDefault: (fetch) => ky.create({ ...given(fetch) }),
    retryingPosts: (fetch) => ky.create({ ...given(fetch), retry: { limit: 1, methods: ["post"] }, timeout: false }),
    async get(k, origin, path, query) {
      const res = await k.get(url(origin, path, query));
      return { status: res.status, body: await res.text() };
    },
    async post(k, origin, path, query, json) {
      const res = await k.post(url(origin, path, query), { json });
      return { status: res.status, body: await res.json() };
    },
    // ours, unwrapped (ky's isTimeoutError() is true for ours too: it matches by name)
    ours(s, Ours) {
      const e = failed(s);
      assert.ok(e instanceof Ours, `ky: ${describeError(e)}`);
      if (Ours === TimeoutError) assert.equal(kyModule.isTimeoutError(e), true);
      return e;
    },
    finalStatus(s, status) {
      const e = failed(s);
      assert.ok(e instanceof kyModule.HTTPError, `ky: ${describeError(e)}`);
      assert.equal(e.response.status, status);
    },
    networkError(s) {
      const e = failed(s);
      assert.ok(e instanceof kyModule.NetworkError, `ky: ${describeError(e)}`);
      assert.ok(e.cause instanceof TypeError, `ky's cause: ${describeError(e.cause)}`);
    },
  },
  {
    name: "ofetch",
    // the fetch goes in create's second argument (the global options), not in the defaults
    make: (fetch) => ofetch.create({ retry: 0 }, given(fetch)),
    byDefault: (fetch) => ofetch.create({}, given(fetch)),
    retryingPosts: (fetch) => ofetch.create({ retry: 1 }, given(fetch)),
    async get(o, origin, path, query) {
      const res = await o.raw(url(origin, path, query), { responseType: "text" });
      return { status: res.status, body: res._data };
    },
    async post(o, origin, path, query, json) {
      const res = await o.raw(url(origin, path, query), { method: "POST", body: json });
      return { status: res.status, body: res._data };
    },
    // FetchError, ours in cause, no response
    ours(s, Ours) {
      const e = failed(s);
      assert.ok(e instanceof FetchError, `ofetch: ${describeError(e)}`);
      assert.ok(e.cause instanceof Ours, `ofetch's cause: ${describeError(e.cause)}`);
      assert.ok(e.message.includes(`<no response> ${e.cause.message}`), e.message);
      assert.equal(e.status, undefined);
      return e.cause;
    },
    finalStatus(s, status) {
      const e = failed(s);
      assert.ok(e instanceof FetchError, `ofetch: ${describeError(e)}`);
      assert.equal(e.status, status);
      assert.equal(e.cause, undefined);
    },
    networkError(s) {
      const e = failed(s);
      assert.ok(e instanceof FetchError, `ofetch: ${describeError(e)}`);
      assert.ok(e.cause instanceof TypeError, `ofetch's cause: ${describeError(e.cause)}`);
    },
  },
  {
    name: "axios",
    make: (fetch) => axios.create({ adapter: "fetch", ...(fetch ? { env: { fetch } } : {}) }),
    byDefault: (fetch) => axios.create({ adapter: "fetch", ...(fetch ? { env: { fetch } } : {}) }),
    async get(a, origin, path, query) {
      const res = await a.get(url(origin, path, query), { responseType: "text" });
      return { status: res.status, body: res.data };
    },
    async post(a, origin, path, query, json) {
      const res = await a.post(url(origin, path, query), json);
      return { status: res.status, body: res.data };
    },
    // AxiosError named after ours, ours in cause, no code, no response
    ours(s, Ours) {
      const e = failed(s);
      assert.ok(axios.isAxiosError(e) && e instanceof axios.AxiosError, `axios: ${describeError(e)}`);
      assert.equal(e.name, Ours.name);
      assert.ok(e.cause instanceof Ours, `axios's cause: ${describeError(e.cause)}`);
      assert.equal(e.message, e.cause.message);
      assert.equal(e.code, undefined);
      assert.equal(e.response, undefined);
      return e.cause;
    },
    finalStatus(s, status) {
      const e = failed(s);
      assert.ok(axios.isAxiosError(e), `axios: ${describeError(e)}`);
      assert.equal(e.code, status >= 500 ? "ERR_BAD_RESPONSE" : "ERR_BAD_REQUEST");
      assert.equal(e.response.status, status);
    },
    networkError(s) {
      const e = failed(s);
      assert.ok(axios.isAxiosError(e), `axios: ${describeError(e)}`);
      assert.equal(e.code, "ERR_NETWORK");
      assert.equal(e.message, "Network Error");
      assert.ok(e.cause, "axios keeps the platform's cause");
    },
  },
  {
    name: "openapi-fetch",
    make: (fetch, origin) => createClient({ baseUrl: origin, ...given(fetch) }),
    byDefault: (fetch, origin) => createClient({ baseUrl: origin, ...given(fetch) }),
    async get(c, _origin, path, query) {
      const { data, error, response } = await c.GET(path, { params: { query }, parseAs: "text" });
      return { status: response.status, body: data ?? error };
    },
    async post(c, _origin, path, query, json) {
      const { data, error, response } = await c.POST(path, { params: { query }, body: json });
      return { status: response.status, body: data ?? error };
    },
    // ours, thrown as it is
    ours(s, Ours) {
      const e = failed(s);
      assert.ok(e instanceof Ours, `openapi-fetch: ${describeError(e)}`);
      return e;
    },
    // no throw for an HTTP status: { error, response }
    finalStatus(s, status) {
      assert.ok(!s.error, `openapi-fetch threw ${describeError(s.error)}`);
      assert.equal(s.value.status, status);
    },
    networkError(s) {
      const e = failed(s);
      assert.ok(e instanceof TypeError, `openapi-fetch: ${describeError(e)}`);
    },
  },
];

/**
 * The ways a user hands one of ours to the outer client: `fetch(policy)` gives what to pass
 * and the ResilientClient behind it (null: resilientFetch's module-wide one, not reachable).
 * `install()` must run before the outer client is made (openapi-fetch reads the global then).
 */
const FORMS = [
  { name: "with a client's fetch (api.fetch.bind(api))",
    fetch: (policy) => { const api = new ResilientClient(policy); return { fetch: api.fetch.bind(api), api }; } },
  { name: "under install()",
    fetch: (policy) => ({ fetch: undefined, api: rf.install(policy) }) },
];

for (const form of FORMS) {
  describe(form.name, () => {
    for (const c of CLIENTS) {
      test(`${c.name}: a 503 then 200 is retried by ours (the outer client's retries off)`, async () => {
        const { fetch, api } = form.fetch({ retry: FAST, breaker: false });
        const id = uid(`${c.name}-retry`);
        const s = await settle(c.get(c.make(fetch, ORIGIN_A), ORIGIN_A, "/flaky", { id, fail: 1, code: 503 }));
        assert.ok(!s.error, describeError(s.error));
        assert.deepEqual(s.value, { status: 200, body: "ok after 1" });
        assert.deepEqual(statuses(await logOf(ORIGIN_A, id)), [503, 200]);
        assert.equal(api.stats()[ORIGIN_A].retries, 1);
      });

      test(`${c.name}: a slow attempt is cut at timeoutMs, retried once, and shown as ours`, async () => {
        const { fetch, api } = form.fetch({ timeoutMs: 150, retry: { maxAttempts: 2, ...FAST }, breaker: false });
        const id = uid(`${c.name}-timeout`);
        const started = Date.now();
        const s = await settle(c.get(c.make(fetch, ORIGIN_A), ORIGIN_A, "/slow", { id, ms: 5000 }));
        const elapsed = Date.now() - started;
        const ours = c.ours(s, TimeoutError);
        assert.equal(ours.timeoutMs, 150);
        assert.ok(elapsed < 2000, `took ${elapsed} ms: not cut at 150 ms per attempt`);
        // both attempts were aborted, so the server saw the client hang up on each
        const log = await waitLog(ORIGIN_A, id, (l) => l.length === 2 && l.every((e) => e.closedEarly));
        assert.deepEqual(log.map((e) => e.closedEarly), [true, true]);
        assert.equal(api.stats()[ORIGIN_A].timeouts, 2);
      });

      test(`${c.name}: a POST carries one Idempotency-Key on every retry, applied once`, async () => {
        const { fetch } = form.fetch({ retry: FAST, breaker: false });
        const id = uid(`${c.name}-key`);
        const payload = { order: id };
        // the first two attempts are applied, then their connection is dropped
        const s = await settle(c.post(c.make(fetch, ORIGIN_A), ORIGIN_A, "/effect", { id, drop: 2 }, payload));
        assert.ok(!s.error, describeError(s.error));
        const log = await logOf(ORIGIN_A, id);
        assert.deepEqual(statuses(log), ["drop", "drop", 201]);
        const [key] = log.map((e) => e.key);
        assert.match(key ?? "", UUID_V4);
        assert.deepEqual(log.map((e) => e.key), [key, key, key]);
        assert.equal(s.value.status, 201);
        assert.deepEqual(s.value.body, { key, effects: 1, body: JSON.stringify(payload) });
        assert.deepEqual(await (await realFetch(`${ORIGIN_A}/effects?id=${id}`)).json(), { effects: 1, keys: [key] });
      });

      test(`${c.name}: once the breaker is open the call fails with CircuitOpenError and nothing is sent`, async () => {
        const { fetch, api } = form.fetch({ retry: false, breaker: { failureThreshold: 2, cooldownMs: 60_000 } });
        const outer = c.make(fetch, ORIGIN_A);
        const failing = uid(`${c.name}-breaker-503`);
        for (let i = 0; i < 2; i++) {
          c.finalStatus(await settle(c.get(outer, ORIGIN_A, "/status", { id: failing, code: 503 })), 503);
        }
        assert.equal(api.breakerState(ORIGIN_A), "open");
        const id = uid(`${c.name}-breaker-ok`);
        const ours = c.ours(await settle(c.get(outer, ORIGIN_A, "/ok", { id })), CircuitOpenError);
        assert.equal(ours.origin, ORIGIN_A);
        assert.ok(ours.retryAfterMs > 0 && ours.retryAfterMs <= 60_000, String(ours.retryAfterMs));
        assert.deepEqual(await logOf(ORIGIN_A, id), []);
        assert.equal((await logOf(ORIGIN_A, failing)).length, 2);
        assert.equal(api.stats()[ORIGIN_A].shortCircuits, 1);
      });

      test(`${c.name}: once ours gave up, a final 503 and a dropped connection show as the outer client's errors`, async () => {
        const { fetch } = form.fetch({ retry: { maxAttempts: 2, ...FAST }, breaker: false });
        const outer = c.make(fetch, ORIGIN_A);
        const down = uid(`${c.name}-final-503`);
        c.finalStatus(await settle(c.get(outer, ORIGIN_A, "/status", { id: down, code: 503 })), 503);
        assert.deepEqual(statuses(await logOf(ORIGIN_A, down)), [503, 503]);
        const gone = uid(`${c.name}-final-drop`);
        c.networkError(await settle(c.get(outer, ORIGIN_A, "/flaky", { id: gone, fail: 9, code: "drop" })));
        assert.deepEqual(statuses(await logOf(ORIGIN_A, gone)), ["drop", "drop"]);
      });
    }
  });
}

// resilientFetch goes through one module-wide client with the default policy: its 10 s
// timeout is the client form's path (above) and too long for a test. Its breakers are this
// file's: the retries use origin A (8 attempts, under the breaker's minimum of 10), the keys
// and the breaker origin B, the breaker last (it leaves B's open).
describe("with resilientFetch", () => {
  for (const c of CLIENTS) {
    test(`${c.name}: a 503 then 200 is retried by ours`, async () => {
      const id = uid(`${c.name}-rf-retry`);
      const s = await settle(c.get(c.make(resilientFetch, ORIGIN_A), ORIGIN_A, "/flaky", { id, fail: 1, code: 503 }));
      assert.ok(!s.error, describeError(s.error));
      assert.deepEqual(s.value, { status: 200, body: "ok after 1" });
      assert.deepEqual(statuses(await logOf(ORIGIN_A, id)), [503, 200]);
    });
  }
  for (const c of CLIENTS) {
    test(`${c.name}: a POST carries one Idempotency-Key on every retry`, async () => {
      const id = uid(`${c.name}-rf-key`);
      const payload = { order: id };
      const s = await settle(c.post(c.make(resilientFetch, ORIGIN_B), ORIGIN_B, "/effect", { id, drop: 1 }, payload));
      assert.ok(!s.error, describeError(s.error));
      const log = await logOf(ORIGIN_B, id);
      const key = log[0]?.key;
      assert.match(key ?? "", UUID_V4);
      assert.deepEqual(log.map((e) => [e.status, e.key]), [["drop", key], [201, key]]);
      assert.deepEqual(s.value.body, { key, effects: 1, body: JSON.stringify(payload) });
    });
  }
  for (const c of CLIENTS) {
    test(`${c.name}: once the module-wide breaker is open, CircuitOpenError and nothing is sent`, async () => {
      const outer = c.make(resilientFetch, ORIGIN_B);
      const failing = uid(`${c.name}-rf-breaker-503`);
      // failures until the breaker refuses (it may already be open: the breaker is module-wide)
      let open = false;
      for (let i = 0; i < 10 && !open; i++) {
        const s = await settle(c.get(outer, ORIGIN_B, "/status", { id: failing, code: 503 }));
        open = s.error !== undefined && [s.error, s.error.cause].some((e) => e instanceof CircuitOpenError);
        if (!open) c.finalStatus(s, 503);
      }
      assert.ok(open, "the breaker did not open after 10 calls of 3 failed attempts");
      const sent = (await logOf(ORIGIN_B, failing)).length;
      const id = uid(`${c.name}-rf-breaker-ok`);
      const ours = c.ours(await settle(c.get(outer, ORIGIN_B, "/ok", { id })), CircuitOpenError);
      assert.equal(ours.origin, ORIGIN_B);
      assert.deepEqual(await logOf(ORIGIN_B, id), []);
      assert.equal((await logOf(ORIGIN_B, failing)).length, sent);
    });
  }
});

describe("layering: both retry", () => {
  // attempts at the server for one GET of a 503 that never recovers, ours making 3
  const BOTH_ON = { ky: 9, ofetch: 6, axios: 3, "openapi-fetch": 3 };
  for (const c of CLIENTS) {
    test(`${c.name}: a lasting 503 reaches the server ${BOTH_ON[c.name]} times with the outer client's defaults, 3 with its retries off`, async () => {
      const policy = { retry: { maxAttempts: 3, ...FAST }, breaker: false };
      const api = new ResilientClient(policy);
      const fetch = api.fetch.bind(api);
      const both = uid(`${c.name}-both`);
      c.finalStatus(await settle(c.get(c.byDefault(fetch, ORIGIN_A), ORIGIN_A, "/status", { id: both, code: 503 })), 503);
      assert.equal((await logOf(ORIGIN_A, both)).length, BOTH_ON[c.name]);
      const ours = uid(`${c.name}-ours`);
      c.finalStatus(await settle(c.get(c.make(fetch, ORIGIN_A), ORIGIN_A, "/status", { id: ours, code: 503 })), 503);
      assert.equal((await logOf(ORIGIN_A, ours)).length, 3);
    });
  }

  test("a timeout of ours: ky does not retry it (it takes ours for its own), ofetch sends it again", async () => {
    const api = new ResilientClient({ timeoutMs: 150, retry: { maxAttempts: 2, ...FAST }, breaker: false });
    const fetch = api.fetch.bind(api);
    const [kyDef, ofetchDef] = ["ky", "ofetch"].map((n) => CLIENTS.find((c) => c.name === n));
    const k = uid("ky-both-timeout");
    kyDef.ours(await settle(kyDef.get(kyDef.byDefault(fetch), ORIGIN_A, "/slow", { id: k, ms: 5000 })), TimeoutError);
    assert.equal((await logOf(ORIGIN_A, k)).length, 2);
    const o = uid("ofetch-both-timeout");
    ofetchDef.ours(await settle(ofetchDef.get(ofetchDef.byDefault(fetch), ORIGIN_A, "/slow", { id: o, ms: 5000 })), TimeoutError);
    assert.equal((await logOf(ORIGIN_A, o)).length, 4);
  });

  test("ky's own timeout (10 s by default) bounds our whole call: ky's TimeoutError, and our attempt is aborted", async () => {
    const api = new ResilientClient({ timeoutMs: 3000, retry: FAST, breaker: false });
    const id = uid("ky-own-timeout");
    const outer = ky.create({ fetch: api.fetch.bind(api), retry: 0, timeout: 200 });
    const s = await settle(outer.get(url(ORIGIN_A, "/slow", { id, ms: 5000 })));
    const e = failed(s);
    assert.ok(e instanceof kyModule.TimeoutError, describeError(e));
    assert.ok(!(e instanceof TimeoutError), "ky's, not ours");
    const log = await waitLog(ORIGIN_A, id, (l) => l.length === 1 && l[0].closedEarly);
    assert.deepEqual(log.map((x) => x.closedEarly), [true]);
  });

  for (const name of ["ky", "ofetch"]) {
    test(`${name}: an outer retry of a POST is a new call with a new key, so the server applies it twice`, async () => {
      const c = CLIENTS.find((x) => x.name === name);
      const api = new ResilientClient({ retry: { maxAttempts: 3, ...FAST }, breaker: false });
      const id = uid(`${name}-double`);
      // our 3 attempts are applied and dropped; the outer client's retry then gets a 201
      const s = await settle(c.post(c.retryingPosts(api.fetch.bind(api)), ORIGIN_A, "/effect", { id, drop: 3 }, { n: 1 }));
      assert.ok(!s.error, describeError(s.error));
      const keys = (await logOf(ORIGIN_A, id)).map((e) => e.key);
      assert.equal(keys.length, 4);
      assert.equal(new Set(keys.slice(0, 3)).size, 1);
      assert.notEqual(keys[3], keys[0]);
      assert.deepEqual(await (await realFetch(`${ORIGIN_A}/effects?id=${id}`)).json(),
        { effects: 2, keys: [keys[0], keys[3]] });
    });
  }
});

describe("setups that do not send through ours", () => {
  test("ofetch.create({ fetch }) puts fetch in the defaults, where ofetch never calls it", async () => {
    const api = new ResilientClient({ retry: FAST });
    const id = uid("ofetch-defaults");
    const outer = ofetch.create({ fetch: api.fetch.bind(api), retry: 0 });
    const s = await settle(outer(url(ORIGIN_A, "/flaky", { id, fail: 1, code: 503 })));
    assert.ok(s.error instanceof FetchError && s.error.status === 503, describeError(s.error));
    assert.deepEqual(statuses(await logOf(ORIGIN_A, id)), [503]);
    assert.equal(api.stats()[ORIGIN_A], undefined);
  });

  test("openapi-fetch reads globalThis.fetch when the client is made: one made before install() bypasses it", async () => {
    const early = createClient({ baseUrl: ORIGIN_A });
    const api = rf.install({ retry: FAST });
    const id = uid("openapi-early");
    const { response } = await early.GET("/flaky", { params: { query: { id, fail: 1, code: 503 } }, parseAs: "text" });
    assert.equal(response.status, 503);
    assert.deepEqual(statuses(await logOf(ORIGIN_A, id)), [503]);
    assert.equal(api.stats()[ORIGIN_A], undefined);
  });

  test("axios in Node uses its http adapter unless adapter: \"fetch\" is set, so install() does not apply", async () => {
    const api = rf.install({ retry: FAST });
    const id = uid("axios-http");
    const s = await settle(axios.create().get(url(ORIGIN_A, "/flaky", { id, fail: 1, code: 503 })));
    assert.equal(s.error?.response?.status, 503, describeError(s.error));
    assert.deepEqual(statuses(await logOf(ORIGIN_A, id)), [503]);
    assert.equal(api.stats()[ORIGIN_A], undefined);
  });

  test("a client's fetch passed unbound (fetch: api.fetch) fails and sends nothing, under every client", async () => {
    const api = new ResilientClient({ retry: FAST });
    for (const c of CLIENTS) {
      const id = uid(`${c.name}-unbound`);
      const s = await settle(c.get(c.make(api.fetch, ORIGIN_A), ORIGIN_A, "/ok", { id }));
      assert.ok(s.error, `${c.name}: resolved ${JSON.stringify(s.value)}`);
      // A TypeError that says what to do (ofetch and axios carry it in cause).
      const ours = s.error.cause ?? s.error;
      assert.ok(ours instanceof TypeError && /api\.fetch\.bind\(api\)/.test(ours.message), `${c.name}: ${ours}`);
      assert.deepEqual(await logOf(ORIGIN_A, id), [], c.name);
    }
    assert.equal(api.stats()[ORIGIN_A], undefined);
    // and the client still works, bound
    const id = uid("bound-after-unbound");
    assert.equal((await api.fetch(url(ORIGIN_A, "/ok", { id }))).status, 200);
    assert.deepEqual(statuses(await logOf(ORIGIN_A, id)), [200]);
  });
});
