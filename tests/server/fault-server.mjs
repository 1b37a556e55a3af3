// A fault-injecting HTTP server for the tests and the demo, on 127.0.0.1 only.
//
// It listens on two ports (two origins, "a" and "b"). Run as a program, it
// prints one JSON line when ready: {"a":"http://127.0.0.1:PORT","b":"http://127.0.0.1:PORT"}.
//   node fault-server.mjs [--ports 0,0]
// or import { startFaultServer } from it.
//
// Faults are chosen per request by the path and query, and counted per `id`:
//   /ok                                  200 "ok"
//   /status?code=503                     that status
//   /flaky?id=X&fail=N&code=503          the first N requests of X fail with code
//                                        (code may be drop = reset, hang = never answer), then 200
//   /hang?id=X                           never answers; records when the client hangs up
//   /auth?id=X&token=T                   200 with "authorization: Bearer T", else 401
//   /partial-headers?id=X&then=reset     half a header, then a reset (or then=hang: nothing more)
//   /stalled-body?id=X                   200 and a first chunk, then the body never ends
//   /slow?id=X&ms=N&bytes=B              answers after N ms ("slow", or B bytes of "s")
//   /trickle?id=X&chunks=N&everyMs=M&stallAfter=K
//                                        200 and headers at once, then one chunk every M ms (the first at
//                                        once), N chunks in all, then the end; with stallAfter, nothing
//                                        more after K chunks and no end (the log entry counts `sent`)
//   /redirect?id=X&to=PATH               302 to PATH (same origin)
//   /strict-cors?id=X                    CORS that lists only content-type: OPTIONS (the preflight) 204 with
//                                        access-control-allow-origin * and -allow-headers content-type;
//                                        other methods 201 "created" with allow-origin *. Both are logged
//                                        (a preflight's entry has `requestHeaders`, what it asked to send)
//   /retry-after?id=X&value=V&code=503   first request: code + Retry-After: V (V "date:2" =
//                                        an HTTP-date 2 s ahead, "date:-60" a minute ago), then 200
//   /quota?id=X&limit=N&windowMs=W&form=draft|x|both&quietFor=Q
//                                        a fixed-window quota per id (windows aligned to multiples of W
//                                        since the epoch): N requests per window get 200 "ok", the rest
//                                        429 with Retry-After (whole seconds to the window's end). Every
//                                        answer advertises the quota: form draft = RateLimit-Policy
//                                        "q";q=N;w=W/1000 and RateLimit "q";r=R;t=T (T whole seconds,
//                                        rounded up); x = X-RateLimit-Limit/-Remaining/-Reset (epoch
//                                        seconds of the window's end); both (the default) = all of them;
//                                        bare = RateLimit alone (no stated limit);
//                                        the first Q requests of X get 200 with no such header, uncounted
//   /far-reset?id=X&claims=N&code=C      the first N requests of X (1 by default) answer C (200 by default)
//                                        claiming a quota of 60 spent for a year: X-RateLimit-Limit 60,
//                                        -Remaining 0, -Reset the epoch seconds a year on; the later ones
//                                        200 "ok" with what is really left of the 60 (-Reset in 60 s);
//                                        with ms=M each answer goes M ms after the request came
//   /effect?id=X&drop=N&dropRate=P (POST) applies the effect once per Idempotency-Key, then drops the
//                                        connection on the first N attempts of X (and on a random
//                                        fraction P of all) instead of answering
//   /tail?id=X&slow=N&ms=M               the first N requests of X answer 200 "tail" after M ms, the rest at once
//   /plan?id=X&answers=200@300,404@0     the n-th request of X answers the n-th STATUS@MS of the list (that
//                                        status, body "STATUS n", after MS ms), the rest as the last one
//   /kept?id=X&good=N&then=C&cc=CC&vary=V&bytes=B&chunked=1&private=1
//                                        stale answers: the first N requests of X (1 by default) answer 200
//                                        with Cache-Control CC and Vary V (each if given), ETag "n", body
//                                        "kept n V:value" (the request's value of the varied header; or B bytes
//                                        of "k", sent in two writes without Content-Length when chunked=1);
//                                        the later ones fail with C (a status, drop or hang; 503 by default)
//   /outage?id=X&from=T&ms=D             503 while the wall clock is in [T, T + D) (epoch ms), else 200 "ok"
//   /down?id=X&on=a&fail=N&code=503      failover's: on the origins named in `on` (comma-separated: a, b)
//                                        the first N requests of X (all of them without fail) fail with code
//                                        (or drop, hang); on the others, and after them, 200 "ok NAME"; the
//                                        log entry keeps the request's body (`body`, as text)
//   /log?id=X                            JSON: every request of X {method, key, t, closedEarly, status,
//                                        headers (the names the client sent), referer, traceparent,
//                                        answered (when its answer began, status and headers;
//                                        absent when it was never answered)}
//   /effects?id=X                        JSON: {effects, keys} applied for X
//   /chaos (GET/PUT JSON)                the origin's chaos settings for /api (the demo's controls;
//                                        rateLimit N: /api takes N requests a second, advertises it, 429s beyond)
//   /api?id=G                            answers according to /chaos; a POST applies its effect once
//                                        per Idempotency-Key (see /effects?id=G), even when it then fails
//   /resource?id=X&bytes=N&cuts=a,b&stalls=c&etag=E&ignoreRange=1&changeEtagAfter=K&encoding=gzip&text=1
//                                        (GET) a deterministic body of N bytes (seeded bytes; text=1: UTF-8
//                                        "a€😀é" repeated, multi-byte characters), with Content-Length,
//                                        Accept-Ranges: bytes and ETag "E" ("v1"; etag=none: no ETag;
//                                        etag=weak: W/"v1"; lastModified=1: a Last-Modified a day before its start, before
//                                        Date); honours Range: bytes=S- (206 with Content-Range) when
//                                        If-Range is absent or equals the ETag, else 200 with all of it;
//                                        ignoreRange=1: always 200; changeEtagAfter=K: from the (K+1)-th
//                                        request of X on, the ETag is "E-2" (the resource changed);
//                                        encoding=gzip: the body is gzipped, Content-Encoding: gzip (the
//                                        offsets count gzipped bytes). Each cut (an offset of the whole
//                                        resource, counted from 0 across requests) is made once: the
//                                        answer sends the bytes before it, then the socket is destroyed;
//                                        each stall likewise sends the bytes before it, then nothing more
//                                        (no end). The log entry of each request has range, ifRange,
//                                        status, start (its first offset) and sent (bytes written);
//                                        the headers a resume reads are exposed to other origins (CORS)
//   /sse?id=X&script=JSON                server-sent events: the n-th connection of X plays the n-th plan of
//                                        the JSON array (the last one again after it), each
//                                        {status (200), type ("text/event-stream"), chunks: [text...] written
//                                        everyMs (0) apart, echo (write "data: <request body>\n\n" first),
//                                        then: "end" (the default) | "drop" (reset, 30 ms on) | "hang" (silent, open) |
//                                        "beat" (":\n" every beatMs for beatForMs, then silent, open)}. The log entry
//                                        has lastEventId (null: none), accept, cacheControl, body, closedAt
// Every response but /strict-cors's allows CORS and exposes Retry-After.
import http from "node:http";
import zlib from "node:zlib";

import { fileURLToPath } from "node:url";

/** /resource's Last-Modified (lastModified=1): a day before the server started, the same for every answer. */
const LAST_MODIFIED = new Date(Date.now() - 86_400_000).toUTCString();

/** /sse: the n-th connection plays the n-th plan of `script` (see the header). */
function sseRoute(req, res, q, entry, n) {
  let plans;
  try { plans = JSON.parse(q.get("script") || "[{}]"); } catch { plans = [{ status: 400 }]; }
  const plan = plans[Math.min(n, plans.length - 1)] || {};
  entry.lastEventId = req.headers["last-event-id"] ?? null;
  entry.accept = req.headers.accept ?? null;
  entry.cacheControl = req.headers["cache-control"] ?? null;
  res.on("close", () => { entry.closedAt = Date.now(); });
  let body = "";
  req.on("data", (c) => { body += c; });
  req.on("end", () => {
    entry.body = body;
    entry.status = plan.status ?? 200;
    res.writeHead(entry.status, { "content-type": plan.type ?? "text/event-stream", "cache-control": "no-store" });
    if (entry.status === 204 || entry.status >= 300 && plan.then !== "drop") { res.end(); return; }
    if (plan.echo) res.write(`data: ${body}\n\n`);
    const chunks = [...(plan.chunks ?? [])];
    const timers = new Set();
    const later = (fn, ms) => { const t = setTimeout(() => { timers.delete(t); fn(); }, ms); timers.add(t); };
    res.on("close", () => { for (const t of timers) clearTimeout(t); });
    const finish = () => {
      if (res.destroyed) return;
      // A reset once what was written has gone out (at once, the client might get nothing).
      if (plan.then === "drop") later(() => req.socket.destroy(), 30);
      else if (plan.then === "hang") return;
      else if (plan.then === "beat") {
        const until = Date.now() + (plan.beatForMs ?? 1000);
        const beat = () => { if (Date.now() < until) { res.write(":\n"); later(beat, plan.beatMs ?? 100); } };
        beat();
      } else res.end();
    };
    const next = () => {
      if (res.destroyed) return;
      if (chunks.length === 0) return finish();
      res.write(chunks.shift());
      if (plan.everyMs) later(next, plan.everyMs); else next();
    };
    next();
  });
}

function createOrigin(name) {
  const logs = new Map(); // id -> [{...}]
  const effects = new Map(); // id -> Set of idempotency keys applied
  // id -> an idempotent ledger (the outbox's proof): { down, applied: key -> { body, answers }, order: [body] }
  const ledgers = new Map();
  // The demo's controls for /api: errorRate in [0, 1], failStatus 503 | 500 | 429 (with Retry-After).
  // rateLimit: requests per second /api takes (0: no limit); it then advertises its quota
  // (RateLimit/RateLimit-Policy and X-RateLimit-*) and answers 429 beyond it.
  const CALM = { errorRate: 0, latencyMs: 0, hang: false, failStatus: 503, retryAfter: "1", outage: false, rateLimit: 0 };
  const chaos = { ...CALM };
  let apiSeq = 0;
  const quotaUsed = new Map(); // "id windowStart" -> requests in that window (/quota, /api)
  /**
   * One request of `key` against a fixed-window quota of `limit` per `windowMs` (windows
   * aligned to multiples of windowMs since the epoch): whether it is within the quota, and the
   * headers that advertise it in `form` (draft: RateLimit-Policy + RateLimit; bare: RateLimit
   * alone; x: X-RateLimit-*; both), plus Retry-After (whole seconds to the window's end) when over.
   */
  const quota = (key, limit, windowMs, form, name) => {
    const now = Date.now(), start = Math.floor(now / windowMs) * windowMs, end = start + windowMs;
    const k = `${key} ${start}`;
    const used = (quotaUsed.get(k) || 0) + 1;
    quotaUsed.set(k, used);
    if (quotaUsed.size > 10000) quotaUsed.clear();
    const ok = used <= limit, remaining = Math.max(0, limit - used), seconds = Math.ceil((end - now) / 1000);
    const headers = {};
    if (form !== "x") {
      if (form !== "bare") headers["ratelimit-policy"] = `"${name}";q=${limit};w=${Math.max(1, Math.round(windowMs / 1000))}`;
      headers.ratelimit = `"${name}";r=${remaining};t=${seconds}`;
    }
    if (form === "x" || form === "both") {
      headers["x-ratelimit-limit"] = String(limit);
      headers["x-ratelimit-remaining"] = String(remaining);
      headers["x-ratelimit-reset"] = String(end / 1000);
    }
    if (!ok) headers["retry-after"] = String(seconds);
    return { ok, headers };
  };

  const record = (id, entry) => {
    if (!id) return entry;
    if (!logs.has(id)) logs.set(id, []);
    const log = logs.get(id);
    log.push(entry);
    if (log.length > 10000) log.splice(0, log.length - 10000); // the demo runs for long
    return entry;
  };
  const send = (res, status, body, headers = {}) => {
    if (res.destroyed) return;
    res.writeHead(status, { "content-type": "text/plain", ...headers });
    res.end(body);
  };
  const json = (res, status, value) => send(res, status, JSON.stringify(value), { "content-type": "application/json" });
  const fail = (req, res, code, entry) => {
    if (code === "drop") { entry.status = "drop"; req.socket.destroy(); return; }
    if (code === "hang") { entry.status = "hang"; return; }
    entry.status = Number(code);
    send(res, Number(code), "fault " + code);
  };
  const seen = (id) => (logs.get(id) || []).length;
  // A log entry, as the other endpoints make theirs (below).
  const newEntry = (req) => ({ method: req.method, key: req.headers["idempotency-key"] || null,
    t: Date.now(), closedEarly: false, status: null, origin: name, headers: Object.keys(req.headers).sort(),
    referer: req.headers.referer || null, traceparent: req.headers.traceparent || null });
  // Only content-type may be sent cross-origin: a request with any other
  // non-safelisted header (an Idempotency-Key) fails its preflight in a browser.
  const strictCors = (req, res) => {
    const id = new URL(req.url, "http://127.0.0.1").searchParams.get("id");
    const entry = record(id, newEntry(req));
    res.on("close", () => { if (!res.writableFinished) entry.closedEarly = true; });
    if (req.method === "OPTIONS") {
      entry.requestHeaders = req.headers["access-control-request-headers"] || null;
      entry.status = 204;
      res.writeHead(204, { "access-control-allow-origin": "*", "access-control-allow-headers": "content-type",
        "access-control-allow-methods": "GET, HEAD, POST, PUT, PATCH, DELETE" });
      res.end();
      return;
    }
    req.resume();
    req.on("end", () => {
      entry.status = 201;
      send(res, 201, "created", { "access-control-allow-origin": "*" });
    });
  };

  // ---- /resource: a body that breaks at chosen offsets, resumed with Range (see the header).
  const resources = new Map(); // id -> { requests, fired: Set of offsets cut or stalled }
  const resourceBody = (q) => {
    const n = Math.max(0, Math.min(Number(q.get("bytes") || 1000), 64 * 1024 * 1024));
    let body;
    if (q.get("text") === "1") {
      const unit = Buffer.from("a€😀é");
      body = Buffer.alloc(n);
      for (let i = 0; i < n; i++) body[i] = unit[i % unit.length];
    } else {
      body = Buffer.alloc(n);
      let x = 0x9e3779b9;
      for (let i = 0; i < n; i++) { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; body[i] = x & 0xff; }
    }
    return q.get("encoding") === "gzip" ? zlib.gzipSync(body) : body;
  };
  const resource = (req, res, q, id, entry) => {
    record(id, entry);
    const state = resources.get(id) ?? { requests: 0, fired: new Set() };
    resources.set(id, state);
    state.requests += 1;
    const body = resourceBody(q);
    const base = q.get("etag") ?? "v1";
    const changed = q.has("changeEtagAfter") && state.requests > Number(q.get("changeEtagAfter"));
    const tag = `"${base}${changed ? "-2" : ""}"`;
    const headers = { "content-type": q.get("text") === "1" ? "text/plain; charset=utf-8" : "application/octet-stream",
      "accept-ranges": "bytes", date: new Date().toUTCString(),
      // What a resume reads, exposed to a page of another origin.
      "access-control-expose-headers": "etag, content-range, accept-ranges, content-encoding, date, last-modified" };
    if (base === "weak") headers.etag = `W/"v1"`;
    else if (base !== "none") headers.etag = tag;
    // The same date for every request of the server's life: read per request, the date of a
    // resume could be a second later than the first answer's, and its If-Range would not match.
    if (q.get("lastModified") === "1") headers["last-modified"] = LAST_MODIFIED;
    if (q.get("encoding") === "gzip") headers["content-encoding"] = "gzip";
    entry.range = req.headers.range ?? null;
    entry.ifRange = req.headers["if-range"] ?? null;
    const asked = /^bytes=(\d+)-$/.exec(req.headers.range ?? "");
    const ifRange = req.headers["if-range"];
    const honoured = asked !== null && q.get("ignoreRange") !== "1" && (ifRange === undefined || ifRange === headers.etag
      || (headers.etag === undefined && ifRange === headers["last-modified"]));
    const start = honoured ? Math.min(Number(asked[1]), body.length) : 0;
    entry.start = start;
    entry.sent = 0;
    if (honoured && start < body.length) {
      entry.status = 206;
      headers["content-range"] = `bytes ${start}-${body.length - 1}/${body.length}`;
    } else {
      entry.status = 200;
    }
    headers["content-length"] = String(body.length - start);
    res.writeHead(entry.status, headers);
    const offsets = (name) => (q.get(name) ?? "").split(",").filter(Boolean).map(Number);
    const breaks = [...offsets("cuts").map((at) => ({ at, cut: true })), ...offsets("stalls").map((at) => ({ at, cut: false }))]
      .filter(({ at }) => at >= start && at < body.length && !state.fired.has(at)).sort((x, y) => x.at - y.at);
    const stop = breaks[0];
    const end = stop === undefined ? body.length : stop.at;
    if (stop !== undefined) state.fired.add(stop.at);
    let at = start;
    const pump = () => {
      while (at < end) {
        const chunk = body.subarray(at, Math.min(end, at + 65536));
        at += chunk.length;
        entry.sent += chunk.length;
        if (!res.write(chunk)) { res.once("drain", pump); return; }
      }
      if (stop === undefined) res.end();
      // The bytes before a cut reach the client (a moment for them to be read: a stream that
      // errors empties its queue), then the connection breaks; a stall sends no more.
      else if (stop.cut) res.write("", () => setTimeout(() => res.socket?.destroy(), 20));
    };
    pump();
  };

  return http.createServer((req, res) => {
    if (req.url.startsWith("/strict-cors")) { strictCors(req, res); return; }
    res.setHeader("access-control-allow-origin", "*");
    res.setHeader("access-control-allow-headers", "*");
    res.setHeader("access-control-allow-methods", "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS");
    res.setHeader("access-control-expose-headers",
      "retry-after, x-attempt, x-effects, ratelimit, ratelimit-policy, x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset");
    if (req.method === "OPTIONS") { res.writeHead(204); res.end(); return; }

    const url = new URL(req.url, "http://127.0.0.1");
    const q = url.searchParams;
    const id = q.get("id");
    const entry = { method: req.method, key: req.headers["idempotency-key"] || null,
      t: Date.now(), closedEarly: false, status: null, origin: name, headers: Object.keys(req.headers).sort(),
      referer: req.headers.referer || null, traceparent: req.headers.traceparent || null };
    res.on("close", () => { if (!res.writableFinished) entry.closedEarly = true; });
    // When the answer began (its status and headers written; epoch ms; absent for a drop, a
    // hang or a hang-up): no client can act on an answer before this, so tests measure
    // causes from it.
    const writeHead = res.writeHead;
    res.writeHead = function (...args) { entry.answered ??= Date.now(); return writeHead.apply(this, args); };

    switch (url.pathname) {
      case "/ok": record(id, entry).status = 200; send(res, 200, "ok"); return;
      case "/resource": resource(req, res, q, id, entry); return;
      case "/status": record(id, entry); entry.status = Number(q.get("code") || 500);
        send(res, entry.status, "status " + entry.status); return;
      case "/flaky": {
        const n = seen(id); record(id, entry);
        if (n < Number(q.get("fail") || 1)) return fail(req, res, q.get("code") || "503", entry);
        entry.status = 200; send(res, 200, "ok after " + n, { "x-attempt": String(n + 1) }); return;
      }
      case "/hang": record(id, entry).status = "hang"; return;
      case "/auth": { // 200 only with "authorization: Bearer <token>", else 401
        const ok = req.headers.authorization === `Bearer ${q.get("token")}`;
        record(id, entry).status = ok ? 200 : 401;
        send(res, entry.status, ok ? "welcome" : "unauthorized"); return;
      }
      case "/stalled-body": // headers and a first chunk at once, then nothing more
        record(id, entry).status = 200;
        res.writeHead(200, { "content-type": "text/plain" });
        res.write("first chunk");
        return;
      case "/partial-headers":
        // half a status line and header, then a reset (then=reset) or nothing more (then=hang)
        record(id, entry).status = "partial";
        req.socket.write("HTTP/1.1 200 OK\r\nContent-Ty");
        if (q.get("then") !== "hang") setTimeout(() => req.socket.destroy(), 20);
        return;
      case "/trickle": { // headers at once, then a chunk every everyMs, maybe stalling after stallAfter
        record(id, entry).status = 200;
        entry.sent = 0;
        const chunks = Number(q.get("chunks") || 10);
        const everyMs = Number(q.get("everyMs") || 50);
        const stallAfter = q.has("stallAfter") ? Number(q.get("stallAfter")) : Infinity;
        res.writeHead(200, { "content-type": "text/plain" });
        let timer = null;
        const next = () => {
          timer = null;
          if (res.destroyed) return;
          if (entry.sent >= stallAfter) return; // stalled: no more chunks, no end
          if (entry.sent >= chunks) { res.end(); return; }
          res.write(`chunk ${entry.sent}\n`);
          entry.sent++;
          timer = setTimeout(next, everyMs);
        };
        res.on("close", () => { if (timer) clearTimeout(timer); });
        next();
        return;
      }
      case "/redirect": record(id, entry).status = 302;
        send(res, 302, "", { location: q.get("to") || "/ok" }); return;
      case "/tail": {
        const n = seen(id); record(id, entry);
        const answer = () => { entry.status = 200; send(res, 200, "tail"); };
        if (n < Number(q.get("slow") || 1)) setTimeout(answer, Number(q.get("ms") || 1000)); else answer();
        return;
      }
      case "/plan": {
        const n = seen(id); record(id, entry);
        const answers = (q.get("answers") || "200@0").split(",");
        const [code, ms] = answers[Math.min(n, answers.length - 1)].split("@").map(Number);
        setTimeout(() => { if (res.destroyed) return; entry.status = code; send(res, code, `${code} ${n + 1}`); }, ms || 0);
        return;
      }
      case "/kept": {
        const n = seen(id); record(id, entry);
        if (n >= Number(q.get("good") || 1)) return fail(req, res, q.get("then") || "503", entry);
        const vary = q.get("vary");
        const headers = { etag: `"${n + 1}"`, "access-control-expose-headers": "age, etag, vary" };
        if (q.has("cc")) headers["cache-control"] = q.get("cc");
        if (vary) headers.vary = vary;
        const body = q.has("bytes") ? "k".repeat(Number(q.get("bytes")))
          : `kept ${n + 1}${vary ? ` ${vary}:${req.headers[vary.toLowerCase()] ?? ""}` : ""}`;
        entry.status = 200;
        if (q.get("chunked") !== "1") { send(res, 200, body, headers); return; }
        res.writeHead(200, { "content-type": "text/plain", ...headers });
        res.write(body.slice(0, body.length >> 1));
        res.end(body.slice(body.length >> 1));
        return;
      }
      case "/outage": {
        const from = Number(q.get("from")), now = Date.now();
        record(id, entry).status = now >= from && now < from + Number(q.get("ms")) ? 503 : 200;
        send(res, entry.status, entry.status === 200 ? "ok" : "outage"); return;
      }
      case "/slow": record(id, entry);
        setTimeout(() => { entry.status = 200; send(res, 200, q.has("bytes") ? "s".repeat(Number(q.get("bytes"))) : "slow"); },
          Number(q.get("ms") || 1000)); return;
      case "/retry-after": {
        const n = seen(id); record(id, entry);
        if (n > 0) { entry.status = 200; send(res, 200, "ok"); return; }
        let value = q.has("value") ? q.get("value") : "1";
        const m = /^date:([+-]?\d+)$/.exec(value);
        if (m) value = new Date(Date.now() + Number(m[1]) * 1000).toUTCString();
        entry.status = Number(q.get("code") || 503);
        send(res, entry.status, "later", { "retry-after": value }); return;
      }
      case "/quota": {
        const n = seen(id); record(id, entry);
        if (n < Number(q.get("quietFor") || 0)) { entry.status = 200; send(res, 200, "ok"); return; }
        const { ok, headers } = quota(id, Number(q.get("limit") || 10), Number(q.get("windowMs") || 1000),
          q.get("form") || "both", "q");
        entry.status = ok ? 200 : 429;
        send(res, entry.status, ok ? "ok" : "over quota", headers); return;
      }
      case "/far-reset": {
        const n = seen(id); record(id, entry);
        const claims = Number(q.get("claims") || 1), claimed = n < claims, now = Math.floor(Date.now() / 1000);
        entry.status = claimed ? Number(q.get("code") || 200) : 200;
        const answer = () => send(res, entry.status, claimed ? "spent" : "ok", {
          "x-ratelimit-limit": "60",
          "x-ratelimit-remaining": String(claimed ? 0 : Math.max(0, 59 - (n - claims))),
          "x-ratelimit-reset": String(now + (claimed ? 365 * 86400 : 60)),
        });
        if (q.has("ms")) setTimeout(answer, Number(q.get("ms"))); else answer();
        return;
      }
      case "/effect": {
        const n = seen(id); record(id, entry);
        let body = "";
        req.on("data", (c) => { body += c; });
        req.on("end", () => {
          // the effect happens once per key; a request without a key is an effect of its own
          if (!effects.has(id)) effects.set(id, new Set());
          const applied = effects.get(id);
          applied.add(entry.key || `no-key-${n}`);
          const dropped = n < Number(q.get("drop") || 0) || Math.random() < Number(q.get("dropRate") || 0);
          if (dropped) { entry.status = "drop"; req.socket.destroy(); return; }
          entry.status = 201;
          json(res, 201, { key: entry.key, effects: applied.size, body });
        });
        return;
      }
      case "/ledger": { // POST: while down 503 (or a dropped connection), else the effect once per key
        if (!ledgers.has(id)) ledgers.set(id, { down: false, drop: false, applied: new Map(), order: [], refused: [] });
        const ledger = ledgers.get(id);
        record(id, entry);
        if (req.method === "PUT") { // switch: ?down=0|1&drop=0|1&delayMs=N (each POST answered N ms late)
          ledger.down = q.get("down") === "1"; ledger.drop = q.get("drop") === "1";
          ledger.delayMs = Number(q.get("delayMs") || 0);
          entry.status = 204; res.writeHead(204); res.end(); return;
        }
        if (req.method === "GET") { entry.status = 200;
          json(res, 200, { order: ledger.order, refused: ledger.refused,
            keys: Object.fromEntries([...ledger.applied].map(([k, v]) => [k, { body: v.body, answers: v.answers }])) }); return; }
        let body = "";
        req.on("data", (c) => { body += c; });
        req.on("end", () => setTimeout(() => {
          if (ledger.down) {
            if (ledger.drop) { entry.status = "drop"; req.socket.destroy(); return; }
            entry.status = 503; send(res, 503, "down"); return;
          }
          if (!entry.key) { entry.status = 400; send(res, 400, "an Idempotency-Key is required"); return; }
          if (q.has("refuse") && body.includes(q.get("refuse"))) { // a final refusal for one payload
            ledger.refused.push(body); entry.status = 422; send(res, 422, "refused"); return;
          }
          const known = ledger.applied.get(entry.key);
          if (known && known.body !== body) { entry.status = 422; send(res, 422, "key reused with another payload"); return; }
          if (!known) { ledger.applied.set(entry.key, { body, answers: 0, headers: entry.headers }); ledger.order.push(body); }
          ledger.applied.get(entry.key).answers++;
          entry.status = 201; json(res, 201, { key: entry.key, body });
        }, ledger.down ? 0 : ledger.delayMs || 0));
        return;
      }
      case "/down": { // failover's: an outage of the named origins only (header comment)
        const n = seen(id); record(id, entry);
        const down = (q.get("on") || "a").split(",").includes(name) && (!q.has("fail") || n < Number(q.get("fail")));
        const chunks = [];
        req.on("data", (c) => chunks.push(c));
        req.on("end", () => {
          entry.body = Buffer.concat(chunks).toString();
          if (down) return fail(req, res, q.get("code") || "503", entry);
          entry.status = 200; send(res, 200, "ok " + name);
        });
        return;
      }
      case "/sse": { const n = seen(id); sseRoute(req, res, q, record(id, entry), n); return; }
      case "/log": json(res, 200, logs.get(id) || []); return;
      case "/effects": {
        const applied = effects.get(id) || new Set();
        json(res, 200, { effects: applied.size, keys: [...applied.keys()] }); return;
      }
      case "/chaos":
        if (req.method === "PUT" || req.method === "POST") {
          let body = "";
          req.on("data", (c) => { body += c; });
          req.on("end", () => {
            try {
              const next = JSON.parse(body || "{}");
              for (const k of Object.keys(next)) {
                if (!(k in chaos) || typeof next[k] !== typeof chaos[k]) throw new Error(`bad chaos field ${k}`);
              }
              Object.assign(chaos, next);
              json(res, 200, chaos);
            } catch (e) { json(res, 400, { error: String(e.message) }); }
          });
          return;
        }
        json(res, 200, chaos); return;
      case "/api": {
        const group = id || "api";
        record(group, entry);
        const go = () => {
          // a full outage or a hang: nothing is applied
          if (chaos.outage) return fail(req, res, "503", entry);
          if (chaos.hang) return fail(req, res, "hang", entry);
          let limits = {};
          if (chaos.rateLimit > 0) {
            // the origin's own quota ("\0" keeps it apart from /quota's ids)
            const answer = quota("\0api", chaos.rateLimit, 1000, "both", "api");
            limits = answer.headers;
            if (!answer.ok) {
              entry.status = 429;
              return send(res, 429, "over the rate limit", limits);
            }
          }
          if (req.method === "POST") {
            // the effect is applied once per idempotency key (a request without one is
            // an effect of its own), even when the answer then fails: "3 attempts, 1 charge"
            if (!effects.has(group)) effects.set(group, new Set());
            effects.get(group).add(entry.key || `no-key-${++apiSeq}`);
          }
          if (Math.random() < chaos.errorRate) {
            const headers = { ...limits, ...(chaos.failStatus === 429 ? { "retry-after": String(chaos.retryAfter) } : {}) };
            entry.status = chaos.failStatus;
            return send(res, chaos.failStatus, "chaos", headers);
          }
          entry.status = 200;
          send(res, 200, JSON.stringify({ origin: name, seq: ++apiSeq }), { "content-type": "application/json", ...limits });
        };
        if (chaos.latencyMs > 0) setTimeout(go, chaos.latencyMs); else go();
        return;
      }
      case "/reset":
        logs.clear(); effects.clear(); ledgers.clear(); resources.clear();
        Object.assign(chaos, CALM);
        json(res, 200, { ok: true }); return;
      default:
        send(res, 404, "not found");
    }
  });
}

/**
 * Starts origins "a" and "b" on 127.0.0.1 (port 0: any free port).
 * Resolves to { a, b, close } where a and b are the origins' URLs.
 */
export async function startFaultServer(ports = [0, 0]) {
  const servers = [createOrigin("a"), createOrigin("b")];
  const urls = {};
  await Promise.all(servers.map((server, i) => new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(ports[i] || 0, "127.0.0.1", () => {
      urls["ab"[i]] = `http://127.0.0.1:${server.address().port}`;
      resolve();
    });
  })));
  const close = () => Promise.all(servers.map((server) => new Promise((resolve) => {
    server.closeAllConnections();
    server.close(resolve);
  })));
  return { ...urls, close };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf("--ports");
  const ports = i >= 0 ? process.argv[i + 1].split(",").map(Number) : [0, 0];
  const { a, b } = await startFaultServer(ports);
  process.stdout.write(JSON.stringify({ a, b }) + "\n");
  for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(0));
}
