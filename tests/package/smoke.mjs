// One smoke run of the package in whatever runtime imports this file (Node,
// Deno, a browser page, a Vite app, a Cloudflare worker): imports, retries,
// breaker, idempotency key, timeout, shared health and the outbox, each checked against the
// fault server.
// Plain ESM with no runtime-specific imports. Returns { imports, retries,
// breaker, key, timeout }, each { ok, detail }.

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * `entry`: the specifier the caller imported `api` by ("resilient-fetch" or
 * "resilient-fetch/full"): the lean build must refuse share and the outbox, the full one must
 * keep both promises.
 */
export async function smoke(api, originA, originB, entry) {
  if (entry !== "resilient-fetch" && entry !== "resilient-fetch/full") throw new TypeError(`smoke(): entry ${entry}`);
  const lean = entry === "resilient-fetch";
  const { resilientFetch, ResilientClient, TimeoutError, CircuitOpenError } = api;
  const uid = (name) => `smoke-${name}-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const log = async (id) => (await fetch(`${originA}/log?id=${id}`)).json();
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const check = async (fn) => {
    try {
      const detail = await fn();
      return { ok: detail.ok, detail };
    } catch (e) {
      return { ok: false, detail: { error: `${e?.name}: ${e?.message}` } };
    }
  };
  const fast = { retry: { baseDelayMs: 1, maxDelayMs: 5 } };
  // The lean build ("resilient-fetch") has neither shared health nor the outbox: it must refuse
  // each with its TypeError naming the full build, and accept `false`.
  const refused = (option) => {
    new ResilientClient({ [option]: false }).free();
    try {
      new ResilientClient({ [option]: option === "share" ? uid("lacks") : { name: uid("lacks") } }).free();
      return { ok: false, error: `${option} was accepted by the lean build` };
    } catch (e) {
      return { ok: e instanceof TypeError && e.message.startsWith(`${option} needs "resilient-fetch/full"`), lean: true, error: String(e) };
    }
  };
  const report = {};

  report.imports = await check(async () => ({
    ok: typeof resilientFetch === "function" && typeof ResilientClient === "function"
      && typeof TimeoutError === "function" && typeof CircuitOpenError === "function",
  }));

  report.retries = await check(async () => {
    const id = uid("retry");
    const res = await resilientFetch(`${originA}/flaky?id=${id}&fail=2&code=503`, undefined, fast);
    const attempts = (await log(id)).length;
    return { ok: res.status === 200 && attempts === 3, status: res.status, attempts };
  });

  report.key = await check(async () => {
    const id = uid("key");
    // The fault server lists Idempotency-Key in its CORS answers, so in a browser (where the
    // page is another origin) keys may go there: said explicitly, as a user would.
    const res = await resilientFetch(`${originA}/effect?id=${id}&drop=1`, { method: "POST", body: "x" },
      { ...fast, idempotencyKey: true });
    const keys = (await log(id)).map((r) => r.key);
    return { ok: res.status === 201 && keys.length === 2 && keys[0] === keys[1] && UUID_V4.test(keys[0]),
      status: res.status, keys };
  });

  report.timeout = await check(async () => {
    const id = uid("timeout");
    const err = await resilientFetch(`${originA}/hang?id=${id}`, undefined, { timeoutMs: 100, retry: false })
      .then(() => null, (e) => e);
    let closedEarly = false;
    for (let i = 0; i < 50 && !closedEarly; i++) {
      closedEarly = (await log(id))[0]?.closedEarly === true;
      if (!closedEarly) await sleep(20);
    }
    return { ok: err instanceof TimeoutError && err.name === "TimeoutError" && closedEarly,
      error: err && err.name, closedEarly };
  });

  report.breaker = await check(async () => {
    const client = new ResilientClient({ retry: false, breaker: { failureThreshold: 2, cooldownMs: 60000 } });
    const id = uid("breaker");
    await client.fetch(`${originA}/status?id=${id}&code=503`);
    await client.fetch(`${originA}/status?id=${id}&code=503`);
    const err = await client.fetch(`${originA}/status?id=${id}&code=503`).then(() => null, (e) => e);
    const sent = (await log(id)).length;
    const other = await client.fetch(`${originB}/ok`);
    return { ok: err instanceof CircuitOpenError && sent === 2 && client.breakerState(originA) === "open"
      && client.breakerState(originB) === "closed" && other.status === 200,
      error: err && err.name, sent };
  });

  // Shared origin health: where the runtime has a BroadcastChannel (browsers, Node, Deno),
  // a peer of the same share name opens with the client that tripped; where it has none
  // (workerd), share is accepted and the peer stays closed.
  report.share = await check(async () => {
    if (lean) return refused("share");
    const share = uid("share"), breaker = { failureThreshold: 2, cooldownMs: 60000 };
    const a = new ResilientClient({ share, retry: false, breaker });
    const b = new ResilientClient({ share, retry: false, breaker });
    const url = `${originA}/status?id=${uid("share")}&code=503`;
    await a.fetch(url);
    await a.fetch(url);
    const channel = typeof BroadcastChannel === "function";
    for (let i = 0; i < 50 && channel && b.breakerState(url) !== "open"; i++) await sleep(10);
    const peer = b.breakerState(url);
    a.free();
    b.free();
    return { ok: peer === (channel ? "open" : "closed"), channel, peer };
  });

  // The outbox with the runtime's built-in store (IndexedDB in a browser, memory elsewhere):
  // a POST to a down origin is kept, and delivered once when it is back (by flush(), or by the
  // outbox's own timer if that came first: flush() then finds it gone).
  report.outbox = await check(async () => {
    if (lean) return refused("outbox");
    const id = uid("outbox"), url = `${originA}/ledger?id=${id}`;
    const down = (on) => fetch(`${url}&down=${on ? 1 : 0}`, { method: "PUT" });
    await down(true);
    const client = new ResilientClient({ outbox: { name: id }, idempotencyKey: true, retry: false, breaker: false });
    const err = await client.fetch(url, { method: "POST", body: "smoke" }).then(() => null, (e) => e);
    const kept = (await client.outbox.list()).length;
    await down(false);
    const tally = await client.outbox.flush();
    const left = (await client.outbox.list()).length;
    const { order: applied, keys } = await (await fetch(url)).json();
    const answers = Object.values(keys).map((k) => k.answers);
    client.free();
    return { ok: err?.name === "QueuedError" && kept === 1 && tally.delivered <= 1 && left === 0
      && applied.join() === "smoke" && answers.join() === "1", error: err?.name, kept, left, applied, answers };
  });

  return report;
}
