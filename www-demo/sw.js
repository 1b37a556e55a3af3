// The demo's chaos backend as a service worker, for the static build of the demo
// (scripts/demo-static.sh: no Node server, e.g. on GitHub Pages).
//
// It serves two mock origins, https://a.demo.invalid and https://b.demo.invalid. The page's
// fetches to them are cross-origin, but a service worker sees every fetch of the pages it
// controls and answers these with Responses it builds: nothing goes to the network (.invalid
// never resolves, so an answer can only come from here). Every other request (the page, the
// package) is left alone. The endpoints the page uses behave as the Node fault server's
// (tests/server/fault-server.mjs), with the same JSON shapes and headers (Retry-After, the
// RateLimit and X-RateLimit-* quota headers); the CORS headers are left out: the browser does
// not check them on a worker's own Responses.
//   /chaos (GET/PUT JSON)  errorRate, latencyMs, hang, failStatus 503|500|429 (+ Retry-After
//                          retryAfter), outage, rateLimit (requests/s /api takes, 0 = none)
//   /api?id=G              answers per /chaos; a POST applies its effect once per Idempotency-Key
//   /log?id=X              every request of X: {method, key, t, closedEarly, status, origin, headers, referer}
//   /effects?id=X          {effects, keys} applied for X
//   /reset                 forgets the logs and effects, calms the chaos
// A network error is Response.error(); a hang is an answer that does not come.
//
// The state (chaos settings, logs, effects) lives in this worker's memory only. The browser
// stops a worker that has been idle a while (the page pings it to keep it awake) and may stop
// it at other times too (a tab in the background, memory pressure): it then starts again calm
// and empty, and the page's controls may show chaos the backend no longer has. Acceptable for
// a demo; reload the page to start over.

const CALM = { errorRate: 0, latencyMs: 0, hang: false, failStatus: 503, retryAfter: "1", outage: false, rateLimit: 0 };
// A hang ends when the page aborts the request, where the browser tells the worker (the
// request's signal: the spec says so, Chromium does not do it yet). Otherwise it ends, as a
// network error, after this long: no hang holds the worker (or its memory) for ever.
const HANG_MS = 120_000;

const text = (status, body, headers = {}) =>
  new Response(body, { status, headers: { "content-type": "text/plain", ...headers } });
const json = (status, value) => text(status, JSON.stringify(value), { "content-type": "application/json" });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A never-answered request: settles (as a network error) on abort or after HANG_MS. */
function hang(request) {
  return new Promise((resolve) => {
    const end = () => {
      clearTimeout(timer);
      request.signal.removeEventListener("abort", end);
      resolve(Response.error());
    };
    const timer = setTimeout(end, HANG_MS);
    request.signal.addEventListener("abort", end);
  });
}

/** One mock origin: its chaos settings, request logs and applied effects, and its handler. */
function createOrigin(name) {
  const logs = new Map(); // id -> [entry]
  const effects = new Map(); // id -> Set of idempotency keys applied
  const chaos = { ...CALM };
  const apiWindow = { start: 0, used: 0 };
  let apiSeq = 0;

  const record = (id, entry) => {
    if (!logs.has(id)) logs.set(id, []);
    const log = logs.get(id);
    log.push(entry);
    if (log.length > 10000) log.splice(0, log.length - 10000); // the demo runs for long
    return entry;
  };

  async function api(request, group, entry) {
    record(group, entry);
    if (chaos.latencyMs > 0) await sleep(chaos.latencyMs);
    // a full outage or a hang: nothing is applied
    if (chaos.outage) { entry.status = 503; return text(503, "fault 503"); }
    if (chaos.hang) { entry.status = "hang"; return hang(request); }
    const limits = {};
    if (chaos.rateLimit > 0) { // a fixed window of one second
      const now = Date.now(), start = Math.floor(now / 1000) * 1000;
      if (apiWindow.start !== start) Object.assign(apiWindow, { start, used: 0 });
      apiWindow.used++;
      const left = Math.max(0, chaos.rateLimit - apiWindow.used), seconds = Math.ceil((start + 1000 - now) / 1000);
      Object.assign(limits, {
        "ratelimit-policy": `"api";q=${chaos.rateLimit};w=1`, ratelimit: `"api";r=${left};t=${seconds}`,
        "x-ratelimit-limit": String(chaos.rateLimit), "x-ratelimit-remaining": String(left),
        "x-ratelimit-reset": String((start + 1000) / 1000),
      });
      if (apiWindow.used > chaos.rateLimit) {
        entry.status = 429;
        return text(429, "over the rate limit", { ...limits, "retry-after": String(seconds) });
      }
    }
    if (request.method === "POST") {
      // once per idempotency key (a request without one is an effect of its own), even when
      // the answer then fails: "3 attempts, 1 charge"
      if (!effects.has(group)) effects.set(group, new Set());
      effects.get(group).add(entry.key || `no-key-${++apiSeq}`);
    }
    if (Math.random() < chaos.errorRate) {
      entry.status = chaos.failStatus;
      return text(chaos.failStatus, "chaos",
        { ...limits, ...(chaos.failStatus === 429 ? { "retry-after": String(chaos.retryAfter) } : {}) });
    }
    entry.status = 200;
    return text(200, JSON.stringify({ origin: name, seq: ++apiSeq }), { "content-type": "application/json", ...limits });
  }

  async function putChaos(request) {
    try {
      const next = JSON.parse((await request.text()) || "{}");
      for (const k of Object.keys(next)) {
        if (!(k in chaos) || typeof next[k] !== typeof chaos[k]) throw new Error(`bad chaos field ${k}`);
      }
      Object.assign(chaos, next);
      return json(200, chaos);
    } catch (e) {
      return json(400, { error: String(e.message) });
    }
  }

  return (request) => {
    const url = new URL(request.url);
    const id = url.searchParams.get("id");
    switch (url.pathname) {
      case "/api": {
        const entry = { method: request.method, key: request.headers.get("idempotency-key"), t: Date.now(),
          closedEarly: false, status: null, origin: name, headers: [...request.headers.keys()].sort(),
          referer: request.referrer || null };
        const onAbort = () => { entry.closedEarly = true; };
        request.signal.addEventListener("abort", onAbort);
        return api(request, id || "api", entry).finally(() => request.signal.removeEventListener("abort", onAbort));
      }
      case "/chaos":
        return request.method === "PUT" || request.method === "POST" ? putChaos(request) : json(200, chaos);
      case "/log": return json(200, logs.get(id) || []);
      case "/effects": {
        const applied = effects.get(id) || new Set();
        return json(200, { effects: applied.size, keys: [...applied] });
      }
      case "/reset":
        logs.clear();
        effects.clear();
        Object.assign(chaos, CALM);
        return json(200, { ok: true });
      default:
        return text(404, "not found");
    }
  };
}

const ORIGINS = new Map([
  ["https://a.demo.invalid", createOrigin("a")],
  ["https://b.demo.invalid", createOrigin("b")],
]);

self.addEventListener("fetch", (event) => {
  const origin = ORIGINS.get(new URL(event.request.url).origin);
  if (origin) event.respondWith(origin(event.request)); // anything else: the network, as usual
});

// Control the page from its first load: no waiting for a reload to take over.
self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));
// "claim": a page the worker does not control yet (e.g. after a hard reload) asks to be.
// "ping": the page's keep-alive (an event resets the browser's idle timer); nothing to do.
self.addEventListener("message", (event) => {
  if (event.data === "claim") event.waitUntil(self.clients.claim());
});
