// Joined by scripts/join-js.mjs from js/request.js, js/chain.js, js/install.js, js/cors.js, js/send.js, js/hooks.js, js/policy-arg.js, src/coalesce/coalesce.js, src/resume/resume.js: edit those, then run it.
import { BODY_NONE, BODY_REPLAYABLE, BODY_STREAM, READ_METHOD, READ_SLOT, READ_TOLD, READ_LOCAL, READ_SIGNAL, READ_REQUEST, METHOD_OTHER, makeTimeoutError, TIMEOUT_KIND_ATTEMPT, TIMEOUT_KIND_CALL, SEND_FLAG_REPLAY, SEND_FLAG_HEDGE, SEND_FLAG_RATES, STATUS_FLAG_LIMITS, HOOK_SAID_NO, HOOK_SAID_YES, HOOK_SAID_DEFAULT } from "../errors.js";
import { guardResponse, linkCopy, readThrough, BODY } from "../body.js";

// The caller's arguments, read once, in JS, when the call is made (as fetch reads them), so that
// the wasm shell gets what it needs in one call: input and init, the caller's signal, the
// origin (the fast path reads plain URL strings without the URL parser).
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files).

// The RequestInit members fetch reads, own or inherited, plain or getters.
const INIT_MEMBERS = ["body", "cache", "credentials", "duplex", "headers", "integrity", "keepalive", "method",
  "mode", "priority", "redirect", "referrer", "referrerPolicy", "signal", "window"];
// ---- methods: js/otel/names.js has a copy (scripts/codes.mjs).
/** The methods fetch sends upper-cased, whatever their case (it sends any other as written). */
const STANDARD_METHODS = ["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"];
// ---- end of methods

// How what readArguments read reaches the wasm: taker(copy, signal, origin, method, chain,
// request, at, promise), one callback for all calls (src/wasm/arguments.rs), given once; `at`:
// when (performance.now()), the call's start; `promise`: the call's (callPromise), when asked.
let TAKER = null;

/** Keeps the wasm's callback for what readArguments read. */
function setTaker(taker) {
  TAKER = taker;
}

// The origins the wasm has been told, by slot: an origin crosses as text once, then its slot
// names it (READ_TOLD / READ_SLOT slots, reused in turn when all are taken).
const TOLD = new Map();
const TOLD_SLOTS = READ_TOLD / READ_SLOT;
const TOLD_BY_SLOT = [];
let TOLD_NEXT = 0;

/** The slot of `origin` times READ_SLOT, plus READ_TOLD when the wasm is told it now (as the origin's text). */
function toldSlot(origin) {
  const slot = TOLD.get(origin);
  if (slot !== undefined) return slot * READ_SLOT;
  const next = TOLD_NEXT;
  TOLD_NEXT = (next + 1) % TOLD_SLOTS;
  if (TOLD_BY_SLOT[next] !== undefined) TOLD.delete(TOLD_BY_SLOT[next]);
  TOLD_BY_SLOT[next] = origin;
  TOLD.set(origin, next);
  return next * READ_SLOT + READ_TOLD;
}

// The methods with a code of their own, at their codes (src/wasm/codes.rs `Method`, whose
// order tests/package/origins.test.mjs checks); any other crosses as text.
const METHOD_CODES = ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"];

/**
 * Reads `input` and `init` as fetch would, now, for a call of client `client` (its id), and
 * hands the wasm's taker what it read: the init's copy without its signal, the caller's signal
 * (or undefined), the origin ("" for a URL that is no server's: data:, blob:), the method, the
 * call's chain (see CHAIN) and, off the fast path, the request built once. Returns the numbers
 * packed as src/wasm/codes.rs `Read` says (the body's BODY_ code, the method's, the origin's
 * slot, flags). With `call` (an id), the call's promise is made too, once all is read, and
 * handed over with the rest: one crossing fewer than asking for it apart. Throws fetch's
 * TypeError for a bad URL or init.
 * The copy keeps own enumerable properties (runtime extensions such as
 * Workers' `cf` or undici's `dispatcher`) and every standard member, inherited
 * or a getter; whatever a getter throws rejects the call, as with fetch.
 */
function readArguments(input, init, client, call) {
  const copy = {};
  if (init !== undefined && init !== null) {
    if (typeof init !== "object" && typeof init !== "function") throw new TypeError("init must be an object");
    Object.assign(copy, init);
    for (const member of INIT_MEMBERS) {
      if (!(member in copy)) {
        const value = init[member];
        if (value !== undefined) copy[member] = value;
      }
    }
  }
  const isRequest = isA(input, "Request");
  // init.signal unless undefined (null means none), else the Request's own
  let signal = copy.signal !== undefined ? copy.signal : isRequest ? input.signal : undefined;
  if (signal === null) signal = undefined;
  else if (signal !== undefined && !isSignal(signal)) throw new TypeError("init.signal must be an AbortSignal");
  copy.signal = null;
  if (isRequest) keepReferrer(copy, input);
  // The body: none, one that can be sent again, a stream (sent once).
  let body = isA(copy.body, "ReadableStream") ? BODY_STREAM
    : copy.body === undefined || copy.body === null ? BODY_NONE : BODY_REPLAYABLE;
  const fast = fastTarget(input, copy);
  const chain = chainOf(copy, client);
  let origin, method, request;
  if (fast !== null) {
    origin = fast[0];
    method = fast[1];
  } else {
    // The general path: the request built once, as fetch builds it (`body ||`: BODY_NONE is 0).
    request = new Request(input, copy);
    origin = targetOf(request.url);
    method = request.method;
    body = body || (request.body === null ? BODY_NONE : BODY_REPLAYABLE);
  }
  const code = METHOD_CODES.indexOf(method);
  const said = body + (code < 0 ? METHOD_OTHER : code) * READ_METHOD + (origin === "" ? READ_LOCAL : toldSlot(origin)) +
    (signal === undefined ? 0 : READ_SIGNAL) + (request === undefined ? 0 : READ_REQUEST);
  TAKER(copy, signal, origin, method, chain, request, performance.now(), call === undefined ? undefined : callPromise(call));
  return said;
}

// ---- read first: a call that brings no policy of its own has nothing for the wasm to check
// before its arguments are read, so JS reads them (readArguments, which hands the taker what it
// read) before it enters the wasm (the client's `_enter`): two crossings where the entry,
// readArguments and its taker were three (the taker is given by the client's `_id`, asked
// first). A call with a policy enters first (the policy is checked before the arguments are
// read, and its errors come first). The call promises JS makes are odd-numbered, the wasm's
// even (src/wasm/settle.rs `next_call`).
let NEXT_CALL = 1;
const CLIENT_ID = Symbol("resilient-fetch client id");

/**
 * Makes the glue's `Inner.prototype.fetch` (ResilientClient's) read first (above), and returns
 * the module-wide `resilientFetch`, which calls the same `fetch` on the module-wide client (the
 * glue's `moduleClient()`). (The glue's functions one by one: a bundler keeps the glue's others
 * out.)
 */
function readFirst(Inner, moduleClient) {
  const enterFirst = Inner.prototype.fetch;
  function fetch(input, init, policy) {
    // Not a client (an unbound method), or a policy to check first: the wasm's own entry says.
    if (policy !== undefined || !(this instanceof Inner)) return enterFirst.call(this, input, init, policy);
    // Taken before the init's getters run: one of them may make a call of its own.
    const call = NEXT_CALL;
    NEXT_CALL = (call + 2) >>> 0;
    let promise;
    try {
      // The client's id, asked of the wasm once (it names the client in chains of calls).
      const client = this[CLIENT_ID] ?? (this[CLIENT_ID] = this._id());
      // The taker is handed what was read, and no promise: the call's stays here.
      const said = readArguments(input, init, client, undefined);
      promise = callPromise(call);
      this._enter(said, call, input, init);
    } catch (e) {
      // Unreadable arguments (fetch's TypeError), a call that sends through itself, a freed client.
      if (promise === undefined) return Promise.reject(e);
      endCall(call, false, e);
    }
    return promise;
  }
  Inner.prototype.fetch = fetch;
  let moduleWide;
  return function resilientFetch(input, init, policy) {
    try {
      moduleWide ??= moduleClient();
    } catch (e) {
      return Promise.reject(e);
    }
    return fetch.call(moduleWide, input, init, policy);
  };
}

/** The value of the request's header `name`, or null. */
function headerOf(request, name) {
  return request.headers.get(name);
}

/** The origin of an absolute URL, "" for a URL that is no server's (data:, blob:); a TypeError for any other scheme. */
function targetOf(url) {
  const parsed = new URL(url);
  const scheme = parsed.protocol;
  if (scheme === "http:" || scheme === "https:") return parsed.origin;
  if (scheme === "data:" || scheme === "blob:") return "";
  throw new TypeError(`resilientFetch: ${scheme} URLs cannot be fetched (only http:, https:, data: and blob:)`);
}

/** The registry key `value` names (an origin, or a URL of one), for breakerState() and reset(). */
function originKey(value) {
  const what = "an origin is scheme://host[:port] of an http: or https: URL, e.g. https://api.example.com";
  if (typeof value !== "string") throw new TypeError(`resilientFetch: origin must be a string (${what})`);
  let origin = "";
  try {
    origin = targetOf(value);
  } catch { /* said below */ }
  if (origin === "") throw new TypeError(`resilientFetch: "${value}" is not an origin or URL of one (${what})`);
  return origin;
}

/**
 * Sets the call's key header `header: key`: on its request (false when the request's
 * mode keeps it from being set: "no-cors"), or, on the fast path, as the init's only header.
 */
function setKey(request, init, header, key) {
  if (request === undefined) {
    init.headers = { [header]: key };
    return true;
  }
  request.headers.set(header, key);
  return request.headers.get(header) !== null;
}

/** The error new Request(input, init) throws, or undefined: were the arguments fetch refused bad? */
function requestError(input, init) {
  try {
    new Request(input, init);
    return undefined;
  } catch (error) {
    return error;
  }
}
/** Whether `value` is a platform object of interface `name`, of this realm or another (an iframe's). */
function isA(value, name) {
  return value !== null && typeof value === "object" && Object.prototype.toString.call(value) === `[object ${name}]`;
}

/**
 * An AbortSignal: the platform's, of any realm, or a polyfill's (a boolean
 * `aborted` and `addEventListener`), which Node's fetch honours too.
 */
function isSignal(value) {
  return isA(value, "AbortSignal") ||
    (value !== null && typeof value === "object" && typeof value.aborted === "boolean" &&
      typeof value.addEventListener === "function");
}

/**
 * A non-empty init resets a request's referrer and referrer policy (Fetch,
 * Request constructor): where `init` sets neither, keep the request's.
 * (Workers have no referrer: only strings are copied.)
 */
function keepReferrer(init, request) {
  if (init.referrer === undefined && typeof request.referrer === "string") init.referrer = request.referrer;
  if (init.referrerPolicy === undefined && typeof request.referrerPolicy === "string") {
    init.referrerPolicy = request.referrerPolicy;
  }
}

/**
 * The fast path: an absolute http(s) URL string whose init has no headers,
 * no "no-cors" mode and no body but a string (not on GET or HEAD), and no
 * credentials in the URL: [origin, method] are known without building a
 * Request, and every attempt sends the same arguments. Otherwise null.
 */
function fastTarget(input, init) {
  if (typeof input !== "string") return null;
  const scheme = input.slice(0, 8).toLowerCase();
  if (!scheme.startsWith("http://") && !scheme.startsWith("https://")) return null;
  if (init.headers !== undefined || init.mode === "no-cors") return null;
  let method = "GET";
  if (init.method !== undefined) {
    if (typeof init.method !== "string") return null;
    const upper = init.method.toUpperCase();
    method = STANDARD_METHODS.includes(upper) ? upper : init.method;
  }
  const body = init.body;
  const plain = body === undefined || body === null || (typeof body === "string" && method !== "GET" && method !== "HEAD");
  if (!plain) return null;
  const origin = originOf(input);
  return origin === null ? null : [origin, method];
}

// Parsed origins of recent URL strings: a program calls the same few endpoints
// over and over, and parsing a URL costs more than the rest of the fast path.
// An absolute URL string always parses the same way; the map is emptied when it
// gets large, and long strings (data in the query) are not kept at all.
const ORIGINS = new Map();
const ORIGINS_MAX = 256;
const ORIGINS_KEY_MAX = 2048;

/** The origin of an absolute URL string, or null if it does not parse or has credentials. */
function originOf(input) {
  let origin = ORIGINS.get(input);
  if (origin !== undefined) return origin;
  origin = plainOrigin(input);
  if (origin === undefined) {
    try {
      const url = new URL(input);
      origin = url.username || url.password ? null : url.origin;
    } catch {
      origin = null; // the general path throws fetch's own error
    }
  }
  if (input.length <= ORIGINS_KEY_MAX) {
    if (ORIGINS.size >= ORIGINS_MAX) ORIGINS.clear();
    ORIGINS.set(input, origin);
  }
  return origin;
}

// A plain absolute http(s) URL: scheme, a host of ASCII letters, digits, dots and hyphens, an
// optional port, then the end or a path, query or fragment; no whitespace, control character
// or backslash anywhere (the parser drops or rewrites those). Cases are spelt out, not /i: V8
// compiles a regular expression on its first runs, and /i costs case folding there (Node: the
// first two plainOrigin calls 258 µs with /i, 145 without).
const PLAIN_URL = /^([hH][tT][tT][pP][sS]?):\/\/([a-zA-Z0-9.-]+)(?::(\d*))?(?:[/?#][^\x00-\x20\\]*)?$/;
// A last label the URL parser reads as a number (IPv4 in any of its forms), and an IPv4
// address already as the parser writes it (four parts 0–255, no leading zero); both read the
// lower-cased host.
const NUMERIC_LABEL = /^(?:\d+|0x[\da-f]*)$/;
const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/**
 * The origin of a plain absolute http(s) URL as the URL standard serialises it (scheme and host
 * lower-cased, a default port dropped), without the URL parser, which costs more than the rest
 * of a call in browsers; undefined for anything the parser must decide: an empty label, a
 * punycode label (xn--, which it checks), a host that ends in a number but is not an IPv4
 * address as the parser writes it (0x7f.1, 010.0.0.1, 1.2.3), a port over 65535 (tests/package/origins.test.mjs fuzzes it against new URL).
 */
function plainOrigin(input) {
  const m = PLAIN_URL.exec(input);
  if (m === null) return undefined;
  const scheme = m[1].toLowerCase();
  const host = m[2].toLowerCase();
  const labels = host.split(".");
  if (labels.some((l) => l === "" || l.startsWith("xn--")) ||
    (NUMERIC_LABEL.test(labels[labels.length - 1]) && !IPV4.test(host))) return undefined;
  let port = "";
  if (m[3] !== undefined && m[3] !== "") {
    const n = Number(m[3]);
    if (n > 65535) return undefined;
    if (n !== (scheme === "http" ? 80 : 443)) port = `:${n}`;
  }
  return `${scheme}://${host}${port}`;
}


// Calls that send through themselves (a client met twice in a chain of calls).
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files).

// ---- calls that send through themselves. An attempt's init is ours; a call
// that arrives with it (or a copy of it) was made by the fetch one of our attempts
// called (a wrapper of resilientFetch put on globalThis.fetch, say). Each such init
// carries the chain of clients its call runs in: a client met twice in a chain would
// send through itself for ever, so that call fails at once with a TypeError that
// every outer attempt passes on (not retried, not held against the origin).
// A wrapper that drops the init but calls back at once is caught too: SENDING holds
// the clients whose fetch is being called right now.
// The chain is a property of the attempt's init: a WeakMap of short-lived keys would
// make every garbage collection walk it, and a property added to its AbortSignal costs
// Node about a microsecond.
const CHAIN = Symbol("resilient-fetch chain");
const MAX_CHAIN = 8;
const LOCAL_ERRORS = new WeakSet();
const SENDING = [];

/** The chain of a new call of `client`: its id alone, or the chain it was sent from plus it. */
function chainOf(init, client) {
  const parent = init[CHAIN];
  const chain = parent === undefined ? [] : typeof parent === "number" ? [parent] : parent;
  if (SENDING.includes(client) || chain.includes(client) || chain.length >= MAX_CHAIN) {
    const error = new TypeError("resilientFetch: the fetch it sends with calls back into the same client " +
      "(is globalThis.fetch a wrapper of resilientFetch? use install(), or give the client a `fetch` option)");
    LOCAL_ERRORS.add(error);
    throw error;
  }
  return chain.length === 0 ? client : [...chain, client];
}

/** Whether a send failed for a reason of the caller's setup (a call that sends through itself). */
function isLocalError(error) {
  return typeof error === "object" && error !== null && LOCAL_ERRORS.has(error);
}


// install(): a resilient wrapper on globalThis.fetch.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files).

// ---- install(): a resilient wrapper on globalThis.fetch, sending through the
// fetch that was there before. Clients without a `fetch` option look the global
// up at each attempt; finding the wrapper, they use what it wraps instead.
let INSTALLED = null; // { wrapper, original, client }
// What each install() wrapper wraps, by the wrapper itself (not a property a spy or a proxy
// of it would carry too), in one map every copy of this package in the realm shares (two
// versions in one app). resilient-fetch/otel reads it too (js/otel/call.js, with a copy of
// platformFetch), to send each attempt with what the client would have used.
const WRAPPED = shared("resilient-fetch wrappers", () => new WeakMap());
// On the init an attempt sends, for any copy's wrapper: this call is an attempt (CHAIN is
// this copy's own: its client ids mean nothing to another copy).
const ATTEMPT = Symbol.for("resilient-fetch attempt");

/** The realm-wide value under the registered symbol `name`, made by `make()` the first time. */
function shared(name, make) {
  const key = Symbol.for(name);
  if (!Object.prototype.hasOwnProperty.call(globalThis, key)) {
    Object.defineProperty(globalThis, key, { value: make() });
  }
  return globalThis[key];
}

// ---- platform fetch: js/otel/call.js has a copy (scripts/codes.mjs).
/** The platform's fetch now: the global, or what an install() (of any copy) wrapped. */
function platformFetch() {
  const f = globalThis.fetch;
  return WRAPPED.get(f) ?? f;
}
// ---- end of platform fetch

/** What install() wraps: the platform's fetch now (the original behind an earlier install). */
function fetchToWrap() {
  const original = platformFetch();
  if (typeof original !== "function") throw new TypeError("install(): there is no globalThis.fetch to wrap");
  return original;
}

/**
 * Puts a wrapper sending through `client` on globalThis.fetch (replacing an earlier install);
 * `client` sends through `original` (fetchToWrap()), so what wraps the wrapper later (an
 * instrumentation library) is never called by it, and the other clients' attempts that reach
 * the wrapper through it go straight to `original`. The wrapper keeps working after uninstall.
 */
function installFetch(client, original) {
  // An attempt of another client of this library that reached the global anyway (something
  // wrapped the wrapper after install(), instrumentation, and passed the attempt's init on)
  // has its own timeouts, retries and breaker: it goes on through what was wrapped, not
  // through this client's as well.
  const wrapper = function fetch(input, init) {
    let attempt = false;
    try {
      attempt = init?.[ATTEMPT] === true;
    } catch { /* client.fetch reports a bad init */ }
    // As fetch, never a synchronous throw (a freed client's TypeError rejects).
    try {
      return attempt ? original(input, init) : client.fetch(input, init);
    } catch (e) {
      return Promise.reject(e);
    }
  };
  WRAPPED.set(wrapper, original);
  try {
    globalThis.fetch = wrapper;
  } catch { /* said below */ }
  if (globalThis.fetch !== wrapper) {
    throw new TypeError("install(): globalThis.fetch cannot be replaced here (read-only); give clients a `fetch` option instead");
  }
  INSTALLED = { wrapper, original, client };
}

/** Puts the original fetch back if the wrapper is still there; returns whether it did. */
function uninstallFetch() {
  if (INSTALLED === null || globalThis.fetch !== INSTALLED.wrapper) return false;
  globalThis.fetch = INSTALLED.original;
  INSTALLED = null;
  return true;
}


// Where automatic keys may go under CORS.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files).

// ---- where keys may go. In a browser page or worker a header that is not
// CORS-safelisted makes a cross-origin request need a preflight the server may
// refuse: automatic keys go to the page's own origin only. Server runtimes
// (Node, Deno, Workers) have no CORS.
let PAGE_ORIGIN;

/** Whether a request to `origin` is cross-origin under CORS (false outside browsers). */
function crossOrigin(origin) {
  if (PAGE_ORIGIN === undefined) {
    const location = globalThis.location;
    const browser = typeof globalThis.Deno === "undefined" && typeof location === "object" && location !== null &&
      (typeof globalThis.document === "object" || typeof globalThis.importScripts === "function" ||
        typeof globalThis.WorkerGlobalScope === "function");
    PAGE_ORIGIN = browser ? String(location.origin) : null;
  }
  return PAGE_ORIGIN !== null && origin !== PAGE_ORIGIN;
}


// Sending an attempt: its limit, its settlement, and what its response says (status, rate limits).
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files).

// The attempts' own timeouts, told apart from every other rejection.
const TIMEOUTS = new WeakSet();

/** Whether an attempt rejected because its limit ran out. */
function isTimeout(error) {
  return typeof error === "object" && error !== null && TIMEOUTS.has(error);
}

// How an attempt's outcome reaches the wasm: settler(slot, generation, fulfilled, value,
// status, 0), one callback for all attempts (src/wasm/settle.rs), given once; for an attempt's
// answer `status` is what statusOf says of it plus one, for any other settlement 0 (every
// argument is passed: wasm-bindgen's debug glue checks each number).
let SETTLER = null;

/** Keeps the wasm's settlement callback. */
function setSettler(settler) {
  SETTLER = settler;
}

// The calls' promises by id, until the wasm settles them (src/wasm/settle.rs `promise_with`).
const CALLS = new Map();

/** A call's promise, kept under `id` until endCall settles it. */
function callPromise(id) {
  return new Promise((resolve, reject) => CALLS.set(id, [resolve, reject]));
}

/** Settles the call promise `id`: fulfils it with `value` when `ok`, else rejects it. */
function endCall(id, ok, value) {
  const settle = CALLS.get(id);
  CALLS.delete(id);
  settle[ok ? 0 : 1](value);
}

/**
 * Fulfils the call promise `id` with its answer, guarded (js/body.js guardResponse, whose
 * arguments follow): one crossing where guarding, then ending the call, took two.
 */
function endGuarded(id, response, controller, signal, deadline, totalMs, idleMs, expire, origin, onEvent) {
  endCall(id, true, guardResponse(response, controller, signal, deadline, totalMs, idleMs, expire, origin, onEvent));
}

/**
 * Reports how `promise` settles to the wasm's `slot` (`value` maps what it fulfils with): for
 * modules joined apart, whose CommonJS copy cannot see SETTLER change (src/sse/events.js).
 */
function settleLater(promise, slot, generation, value = (v) => v) {
  const settler = SETTLER;
  promise.then((v) => settler(slot, generation, true, value(v), 0, 0), (e) => settler(slot, generation, false, e, 0, 0));
}

/**
 * Calls `fetchFn` (undefined: the platform's fetch now) for one attempt run by
 * `controller`, in call chain `chain`, within `ms`, and reports how it settles to the
 * settler under (slot, generation): when the limit runs out first, the controller is
 * aborted (the socket is released) and the attempt settles with a TimeoutError (of the
 * call's deadline when `deadline`, for the limit `limitMs`), even if fetch ignores its
 * signal; an answer is reported with what statusOf (`rates`: its own) says of it. Whatever fetch returns is awaited as a promise (a mock may return a Response,
 * undefined or a thenable); what it throws synchronously, this throws.
 */
function send(fetchFn, input, init, controller, chain, ms, deadline, limitMs, slot, generation, rates) {
  init[CHAIN] = chain;
  init[ATTEMPT] = true;
  SENDING.push(typeof chain === "number" ? chain : chain[chain.length - 1]);
  let settled;
  try {
    settled = sendLocal(fetchFn, input, init);
  } finally {
    SENDING.pop();
  }
  const settler = SETTLER;
  let timedOut = false;
  const unwatch = watch(ms, () => {
    timedOut = true;
    const error = makeTimeoutError(deadline ? TIMEOUT_KIND_CALL : TIMEOUT_KIND_ATTEMPT, limitMs);
    TIMEOUTS.add(error);
    controller.abort(error);
    settler(slot, generation, false, error, 0, 0);
  });
  settled.then((value) => {
    unwatch();
    // A fetch that ignored its signal answered after the limit: nobody will read this body.
    if (timedOut) discardBody(value);
    else settler(slot, generation, true, value, toldStatus(value, rates), 0);
  }, (error) => { unwatch(); settler(slot, generation, false, error, 0, 0); });
}

/** What statusOf says of an answer, plus one, for the settler; 0 for what is no Response (the wasm asks again for its error). */
function toldStatus(value, rates) {
  try {
    return statusOf(value, rates) + 1;
  } catch {
    return 0;
  }
}

// ---- the attempts' limits: one timer for every attempt in flight, armed for the earliest
// limit (setting and clearing a timer per attempt cost a browser about 2 µs a call), and a
// timer per attempt in Cloudflare Workers, where a timer belongs to the request that set it.
// In Node the one timer holds the process only while an attempt is in flight, as the
// attempt's own timer did; in Deno likewise.
const OWN_TIMERS = typeof navigator === "object" && navigator.userAgent === "Cloudflare-Workers";
const WATCHED = new Set(); // { at, fire }
let ARMED; // the timer, while armed
let ARMED_AT = Infinity; // when it fires

/** Calls `fire()` in `ms` unless what this returns is called first. */
function watch(ms, fire) {
  if (OWN_TIMERS) {
    const timer = setTimeout(fire, ms);
    return () => clearTimeout(timer);
  }
  const limit = { at: performance.now() + ms, fire };
  if (WATCHED.size === 0) hold(true);
  WATCHED.add(limit);
  if (limit.at < ARMED_AT) arm(limit.at);
  return () => {
    if (WATCHED.delete(limit) && WATCHED.size === 0) hold(false);
  };
}

/** Arms the one timer for `at` (performance.now() time). */
function arm(at) {
  if (ARMED !== undefined) clearTimeout(ARMED);
  ARMED_AT = at;
  ARMED = setTimeout(expire, Math.max(0, Math.ceil(at - performance.now())));
  if (WATCHED.size === 0) hold(false);
}

/**
 * Fires the limits the timer was armed for and any before it (the timer's own clock decides,
 * so a page's or test's fake timers work as with a timer per attempt), after arming it for the
 * earliest limit left: a limit that throws stops no other.
 */
function expire() {
  const due = ARMED_AT;
  ARMED = undefined;
  ARMED_AT = Infinity;
  const fired = [];
  let next = Infinity;
  for (const limit of WATCHED) {
    if (limit.at <= due) {
      WATCHED.delete(limit);
      fired.push(limit);
    } else if (limit.at < next) {
      next = limit.at;
    }
  }
  if (next !== Infinity) arm(next);
  for (const limit of fired) {
    try {
      limit.fire();
    } catch { /* the others still fire */ }
  }
}

// Node and Deno only: a process the armed timer must not hold when no attempt is in flight.
// Asked when first needed, not at load: workerd makes its `process` when it is first touched,
// about 1 ms of a fresh isolate's first request (bench/edge-startup.mjs), and in Cloudflare
// Workers (OWN_TIMERS) nothing asks.
let PROCESS;
const inProcess = () =>
  (PROCESS ??= typeof process === "object" && typeof process?.versions?.node === "string" || !!globalThis.Deno);

/** Whether the armed timer holds a Node or Deno process alive: only while attempts are in flight. */
function hold(on) {
  if (ARMED === undefined) return;
  if (typeof ARMED === "object" && typeof ARMED.unref === "function") {
    if (on) ARMED.ref?.(); else ARMED.unref();
  } else if (globalThis.Deno?.unrefTimer) {
    if (on) globalThis.Deno.refTimer?.(ARMED); else globalThis.Deno.unrefTimer(ARMED);
  } else if (!on && inProcess()) {
    // A setTimeout that cannot be unref'd (a page's shim in Node): cleared, as the attempts'
    // own timers were.
    clearTimeout(ARMED);
    ARMED = undefined;
    ARMED_AT = Infinity;
  }
}

/**
 * One attempt: the fast path's URL and init (its signal set to this attempt's), or, with
 * `init` undefined, a built request with this attempt's signal and its referrer kept,
 * cloned first when `replay` and it has a body (the clone tees it, so every attempt sends
 * what the first sent; a request without a body is sent as it is: fetch does not use it up).
 * Returns the attempt's AbortController, made here (one crossing for both): the wasm's from then on.
 */
function sendAttempt(fetchFn, input, init, how, chain, ms, deadline, limitMs, slot, generation) {
  const controller = new AbortController();
  // A hedge (another attempt of the call is on the wire) bypasses a browser's HTTP cache
  // unless the caller chose a cache mode: a browser lets one request per URL through its
  // cache at a time, so a hedge through it would wait for the very attempt it is meant to
  // overtake. Elsewhere there is no such cache, and some runtimes refuse the option.
  const hedge = (how & SEND_FLAG_HEDGE) !== 0 && BROWSER_CACHE;
  if (init === undefined) {
    if ((how & SEND_FLAG_REPLAY) !== 0 && input.body !== null) input = input.clone();
    if (hedge && input.cache === "default") input = new Request(input, { cache: "no-store" });
    init = { signal: controller.signal };
    keepReferrer(init, input);
  } else if (hedge && (init.cache === undefined || init.cache === "default")) {
    init = { ...init, cache: "no-store", signal: controller.signal };
  } else {
    init.signal = controller.signal;
  }
  send(fetchFn, input, init, controller, chain, ms, deadline, limitMs, slot, generation, (how & SEND_FLAG_RATES) !== 0);
  return controller;
}

// A browser page or worker (Cloudflare Workers look like a worker but have no HTTP cache).
const BROWSER_CACHE = (typeof document === "object" || typeof WorkerGlobalScope === "function") &&
  !(typeof navigator === "object" && navigator.userAgent === "Cloudflare-Workers");

/** A URL that is no server's (data:, blob:): sent as fetch would, once, with the caller's arguments. */
function sendLocal(fetchFn, input, init) {
  // A mock may return a Response, undefined or a thenable: a promise of it, whatever it is.
  return Promise.resolve((fetchFn ?? platformFetch())(input, init));
}

/**
 * The status of what fetch resolved with, plus STATUS_FLAG_LIMITS when the response says something of its
 * origin's limits (a Retry-After on an error status; with `rates`, rate-limit headers): only
 * then does the wasm ask limitsOf for them (one crossing per answer on the common path). A fetch
 * replaced by a mock or a polyfill may resolve with anything: what is not a Response-like object
 * with a numeric status is a TypeError (thrown here, where it is caught).
 */
function statusOf(response, rates) {
  const status = response?.status;
  if (typeof status !== "number") throw new TypeError("fetch resolved with something that is not a Response");
  try {
    const h = response.headers;
    if ((status >= 400 && h.get("retry-after") !== null) ||
      (rates && (h.get("ratelimit") !== null || h.get("ratelimit-remaining") !== null ||
        h.get("x-ratelimit-remaining") !== null))) return status + STATUS_FLAG_LIMITS;
  } catch { /* a mock's odd headers say nothing */ }
  return status;
}

/**
 * What a response says of its origin's limits, read in one crossing: undefined when it says
 * nothing, else [Retry-After (read only when `error`), RateLimit, RateLimit-Policy, remaining,
 * reset, limit], the last three from RateLimit-* or else X-RateLimit-* (src/pacing/rate_limit.rs parses
 * them; `rates`: whether to read those at all). A mock's odd headers say nothing.
 */
function limitsOf(response, error, rates) {
  try {
    const h = response.headers;
    const retryAfter = error ? h.get("retry-after") : null;
    let draft = null, remaining = null, x = "ratelimit-";
    if (rates) {
      draft = h.get("ratelimit");
      remaining = h.get(x + "remaining");
      if (remaining === null) remaining = h.get((x = "x-ratelimit-") + "remaining");
    }
    if (retryAfter === null && draft === null && remaining === null) return undefined;
    const split = (name) => (remaining === null ? undefined : h.get(x + name) ?? undefined);
    return [retryAfter ?? undefined, draft ?? undefined, draft === null ? undefined : h.get("ratelimit-policy") ?? undefined,
      remaining ?? undefined, split("reset"), split("limit")];
  } catch {
    return undefined;
  }
}

/**
 * Whether the runtime says it has no network now: a browser's (or a web worker's)
 * navigator.onLine is false. false where it cannot tell (Node, Deno, Workers).
 */
function isOffline() {
  return globalThis.navigator?.onLine === false;
}

// One promise for every call waiting for the network; a new one after each `online` event.
let online;

/**
 * Reports the next `online` event of the global scope to the settler under (slot,
 * generation); never where there is none.
 */
function onlineWait(slot, generation) {
  const settler = SETTLER;
  online ??= new Promise((resolve) => {
    if (typeof globalThis.addEventListener !== "function") return;
    globalThis.addEventListener("online", () => {
      online = undefined;
      resolve();
    }, { once: true });
  });
  online.then(() => settler(slot, generation, true, undefined, 0, 0));
}


// The caller's functions (onEvent, shouldRetry, isFailure), called so that nothing they do reaches the wasm.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files).

// ---- the caller's functions, called so that nothing they do reaches the wasm.

/** Calls an onEvent listener: what it throws, or the promise it returns rejects with, is dropped. */
function callListener(listener, event) {
  try {
    const result = listener(event);
    if (result !== null && typeof result === "object" && typeof result.then === "function") {
      result.then(undefined, () => {});
    }
  } catch { /* a listener must not disturb the call */ }
}

/**
 * `object` with each of `values` that is given (not undefined, not NaN) under its name in
 * `names` (space-separated, in order; src/wasm/events.rs). A duration (a name ending in Ms) is
 * whole milliseconds, rounded up: the core's clock has fractions.
 */
function fill(object, names, values) {
  names.split(" ").forEach((name, i) => {
    const value = values[i];
    if (value !== undefined && value === value) object[name] = name.endsWith("Ms") ? Math.ceil(value) : value;
  });
  return object;
}

/** An event as onEvent gets it: { type, origin }, then `values` under `names` (fill). */
function makeEvent(type, origin, names, ...values) {
  return fill({ type, origin }, names, values);
}

/**
 * Adds `origin`'s entry to `stats` (what stats() returns): its breaker's state, why it opened
 * (while open or half-open; "" otherwise), then `values` (numbers) under `names` (fill).
 */
function statsEntry(stats, origin, breakerState, openedBy, names, values) {
  const entry = (stats[origin] = { breakerState });
  if (openedBy) entry.openedBy = openedBy;
  fill(entry, names, values);
}

/**
 * What retry.shouldRetry and breaker.isFailure see of an attempt that ended. The response
 * is a clone made when first read, so the body the caller gets stays whole.
 */
function hookContext(attempt, method, input, output, isResponse, elapsedMs, remainingMs, key) {
  // Whole milliseconds: the time spent rounded up, the time left rounded down (never overstated).
  const ctx = { attempt, method, url: typeof input === "string" ? input : input.url,
    elapsedMs: Math.ceil(elapsedMs), remainingMs: Math.floor(remainingMs) };
  if (key !== undefined) ctx.idempotencyKey = key;
  if (isResponse) {
    let copy;
    Object.defineProperty(ctx, "response", { enumerable: true, get: () => (copy ??= output.clone()) });
    // Once the hook has answered, a clone it left unread is cancelled, so its branch of the
    // body does not buffer the whole body (a stream, a download) for nobody.
    ctx[RELEASE] = () => { if (copy !== undefined) discardBody(copy); };
  } else {
    ctx.error = output;
  }
  return ctx;
}
const RELEASE = Symbol("resilient-fetch release");

/** breaker.isFailure(ctx): true, false, or undefined (the built-in rule; also when it throws). */
function askIsFailure(hook, ctx) {
  try {
    const answer = hook(ctx);
    return said(answer);
  } catch {
    return HOOK_SAID_DEFAULT;
  } finally {
    ctx[RELEASE]?.();
  }
}

/**
 * retry.shouldRetry(ctx), awaited; settles (slot, generation) with HOOK_SAID_YES (retry),
 * HOOK_SAID_NO (stop) or HOOK_SAID_DEFAULT (the built-in answer), or fails with what the hook threw or its promise rejected with.
 */
function askShouldRetry(hook, ctx, slot, generation) {
  const settler = SETTLER;
  new Promise((resolve) => resolve(hook(ctx))).then(
    (answer) => settler(slot, generation, true, said(answer), 0, 0),
    (error) => settler(slot, generation, false, error, 0, 0)).finally(() => ctx[RELEASE]?.());
}

/** A hook's answer as a HOOK_SAID_ code. */
function said(answer) {
  return answer === true ? HOOK_SAID_YES : answer === false ? HOOK_SAID_NO : HOOK_SAID_DEFAULT;
}

/** Cancels a response's body nobody will read; a failure to cancel is harmless. */
function discardBody(response) {
  try {
    const body = response?.body;
    if (body && !body.locked) body.cancel().catch(() => {});
  } catch { /* not a Response (a mock's), or already gone */ }
}


// The policy argument, read once into a plain copy the wasm reads.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files).

// ---- the policy argument: read once, in JS (getters and proxy traps run here,
// where what they throw is caught and rejects the call, as fetch does with its
// init), so the wasm reads a plain copy that cannot throw, recurse without end or
// hold anything but data; the function fields are handed over beside it.

// Policy fields are at most 3 levels deep (retry.retryOn[i]); deeper data is an error.
const MAX_DEPTH = 4;
const KINDS = "a number, string, boolean, array or plain object";

/**
 * Returns [plain copy without its functions, then the FUNCTIONS and the HELD, in their order]: each function field is undefined when absent, null when given as
 * null. Throws a TypeError naming the field for what no policy field takes: functions
 * (but those), symbols, bigints, cycles and deeper nesting.
 */
function readPolicy(policy) {
  if (typeof policy !== "object" || Array.isArray(policy)) throw new TypeError("policy must be an object");
  const functions = {};
  const plain = copyObject(policy, "", 1, [], functions);
  return [plain, ...FUNCTIONS.map((path) => functions[path]), ...HELD.map((path) => functions[path])];
}

// The policy fields that hold functions, taken out of the copy (in the schema's order).
const FUNCTIONS = ["retry.shouldRetry", "breaker.isFailure", "breaker.key", "outbox.onReplay", "onEvent", "fetch"];
// The policy fields that hold objects the client keeps as they are (in the schema's order).
const HELD = ["share.durableObject", "outbox.store", "stale.store"];

function copyObject(object, path, depth, ancestors, functions) {
  ancestors.push(object);
  const copy = {};
  for (const key of Object.keys(object)) {
    const at = path ? `${path}.${key}` : key;
    const value = object[key];
    if (FUNCTIONS.includes(at)) {
      if (value !== undefined && value !== null && typeof value !== "function") {
        throw new TypeError(`policy.${at} must be a function`);
      }
      functions[at] = value;
    } else if (HELD.includes(at)) {
      const methods = at === "outbox.store" ? ["put", "delete", "list"] : at === "stale.store" ? ["get", "put", "delete"] : ["idFromName", "get"];
      const what = methods.length > 2 ? `an object with ${methods[0]}, ${methods[1]} and ${methods[2]} methods`
        : "a Durable Object namespace (OriginHealth's binding)";
      if (value !== undefined && value !== null && !methods.every((m) => typeof value?.[m] === "function")) {
        throw new TypeError(`policy.${at} must be ${what}`);
      }
      functions[at] = value;
    } else {
      copy[key] = copyValue(value, at, depth, ancestors, functions);
    }
  }
  ancestors.pop();
  return copy;
}

function copyValue(value, path, depth, ancestors, functions) {
  switch (typeof value) {
    case "undefined":
    case "boolean":
    case "number":
    case "string":
      return value;
    case "object":
      if (value === null) return null;
      if (ancestors.includes(value)) throw new TypeError(`${path} must be ${KINDS} (got a reference back to itself)`);
      if (depth >= MAX_DEPTH) throw new TypeError(`${path} is nested deeper than any policy field`);
      if (Array.isArray(value)) {
        ancestors.push(value);
        const copy = Array.from(value, (item, i) => copyValue(item, `${path}[${i}]`, depth + 1, ancestors, functions));
        ancestors.pop();
        return copy;
      }
      return copyObject(value, path, depth + 1, ancestors, functions);
    default:
      throw new TypeError(`${path} must be ${KINDS} (got a ${typeof value})`);
  }
}


// Coalescing (policy `coalesce`): identical reads in flight share one call.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files); its
// imports are paths from this file, as the join resolves them.

// ---------------------------------------------------------------- coalescing (policy `coalesce`)
// A GET or HEAD identical to one in flight on the same client joins it instead of being sent
// again, and resolves with its own clone of the response.

// The request options fetch reads besides the URL, method, headers, body and signal.
const OPTIONS = INIT_MEMBERS.filter((m) => !["body", "duplex", "headers", "method", "signal", "window"].includes(m));

/**
 * What makes two calls the same request: the method, the URL, the headers (names lower-cased, in order,
 * as Headers iterates them) and the request options; `request` is the general path's
 * Request, undefined on the fast path (an absolute URL string and an init without headers).
 */
function flightKey(method, input, init, request) {
  const parts = [method];
  const defaults = optionDefaults();
  // An option at its default is left out: fetch(url), fetch(url, { cache: "default" }) and
  // fetch(new Request(url)) are the same request.
  const option = (name, value) => {
    if (value !== undefined && value !== null && value !== defaults[name]) parts.push(`${name}=${value}`);
  };
  if (request === undefined) {
    parts.push(input);
    // The fast path's only headers are ours (a key given to the call).
    for (const [name, value] of Object.entries(init.headers ?? {})) parts.push(`${name.toLowerCase()}:${value}`);
    for (const name of OPTIONS) option(name, init[name]);
  } else {
    parts.push(request.url);
    for (const [name, value] of request.headers) parts.push(`${name}:${value}`);
    // An option the platform's Request does not expose (priority, in most) is the init's.
    for (const name of OPTIONS) option(name, name in request ? request[name] : init[name]);
  }
  // As JSON: a URL string or an option may hold a line break, which must not read as another part.
  return JSON.stringify(parts);
}

// The defaults of the options a platform's Request may not expose (the Fetch standard's).
const INIT_DEFAULTS = { priority: "auto", keepalive: false, integrity: "", referrerPolicy: "" };

let DEFAULTS;
/** The request options' defaults on this platform (what a Request made without them has). */
function optionDefaults() {
  if (DEFAULTS === undefined) {
    DEFAULTS = { ...INIT_DEFAULTS };
    try {
      const request = new Request("http://127.0.0.1/");
      for (const name of OPTIONS) if (name in request) DEFAULTS[name] = request[name];
    } catch { /* no defaults known but the standard's: every other option counts */ }
  }
  return DEFAULTS;
}

// In flight, by client and key: { waiters: Set, abort }.
const FLIGHTS = new Map();

/**
 * Joins the flight of `key` on client `client`, or starts it: `start()` runs the call and
 * returns [its promise, a function that aborts it]. The caller's `signal` detaches only this
 * caller; the call is aborted when every caller has left. Each caller gets its own response
 * (the last one the response itself, the others clones made before anyone reads it), whose
 * body its signal stops, and only that one.
 */
function joinFlight(client, key, signal, start) {
  const id = `${client}\n${key}`;
  let flight = FLIGHTS.get(id);
  if (flight === undefined) {
    const [promise, abort] = start();
    flight = { waiters: new Set(), abort };
    FLIGHTS.set(id, flight);
    const settle = (ok, value) => {
      if (FLIGHTS.get(id) === flight) FLIGHTS.delete(id);
      const waiters = [...flight.waiters];
      flight.waiters.clear();
      if (ok && waiters.length === 0) value.body?.cancel().catch(() => {});
      // Every copy is made before any is handed out (a clone of a read body cannot be made).
      const copies = ok ? waiters.map((w, i) => (i === waiters.length - 1 ? value : value.clone())) : [];
      waiters.forEach((w, i) => {
        w.leave();
        // Each caller's signal stops its own copy's body, and only that.
        if (ok) w.resolve(linkCopy(copies[i], w.signal));
        else w.reject(value);
      });
    };
    promise.then((r) => settle(true, r), (e) => settle(false, e));
  }
  const joined = flight;
  return new Promise((resolve, reject) => {
    const waiter = { resolve, reject, signal, leave: () => signal?.removeEventListener("abort", onAbort) };
    function onAbort() {
      if (!joined.waiters.delete(waiter)) return;
      waiter.leave();
      reject(signal.reason);
      if (joined.waiters.size === 0) {
        if (FLIGHTS.get(id) === joined) FLIGHTS.delete(id);
        joined.abort();
      }
    }
    joined.waiters.add(waiter);
    signal?.addEventListener("abort", onAbort);
  });
}


// Resumed downloads (policy resume): a GET's body that breaks is asked for again from the
// byte it broke at, and the rest is read on in the caller's one stream (js/body.js `readThrough`).
// Whether it may, the request's headers and the answer are judged in Rust (src/resume/body.rs);
// the waits and attempts are the engine's (src/resume/shell.rs). Here: what Rust reads of a
// response, the range request, and handing the rest's reader to the guard.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files).

const HEAD = ["etag", "last-modified", "date", "content-encoding", "accept-ranges", "content-range", "content-length"];

/** What a resume reads of `response`: [status, then each of HEAD's values or undefined]. */
function resumeHead(response) {
  const out = [response.status];
  for (const name of HEAD) out.push(response.headers.get(name) ?? undefined);
  return out;
}

/**
 * The call's request asking for the rest: `input` (a Request, or the fast path's URL with
 * its `init`) with `Range` and `If-Range` set.
 */
function rangeRequest(input, init, range, ifRange) {
  const request = new Request(input, init);
  const headers = new Headers(request.headers);
  headers.set("range", range);
  headers.set("if-range", ifRange);
  return new Request(request, { headers });
}

/** Schedules `fn` after `ms`; the timer does not keep Node or Deno alive by itself. */
function unrefTimer(fn, ms) {
  const id = setTimeout(fn, ms);
  if (typeof id === "object" && typeof id?.unref === "function") id.unref();
  return id;
}

/**
 * Makes `response`'s guarded body (js/body.js) read a stream that goes on past a break: its
 * reads come from the platform's body, then from each resumed answer's. `resumer.resume(bytes,
 * error, gap)` (src/resume/shell.rs) resolves with [the answer, its AbortController] whose body
 * is the rest, or null when nothing is left, or rejects with why not; `resumer.cancel()` stops
 * the one under way. The guard keeps the
 * deadline and the caller's signal (aborting the current attempt's controller); the gaps of
 * bodyTimeoutMs are timed here, for a gap is resumed, not fatal. (A clone of the response reads
 * its own branch of the first answer, bounded by the deadline.)
 */
function attachResume(response, resumer) {
  let reader = null;
  let got = 0;
  let cancelled = false;
  let shared;
  let idleMs = 0;
  const read = (controller, resolve, reject) => {
    let gap = false;
    const t = idleMs > 0 ? unrefTimer(() => {
      gap = true;
      let error;
      try { error = shared.expire(false, idleMs, shared.origin, shared.onEvent); } catch { /* the client is gone */ }
      try { shared.controller.abort(error); } catch { /* ended */ }
    }, idleMs) : undefined;
    reader.read().then(({ done, value }) => {
      clearTimeout(t);
      try {
        if (done) {
          controller.close();
        } else {
          got += value.byteLength;
          controller.enqueue(value);
        }
      } catch { /* cancelled meanwhile */ }
      resolve();
    }, (error) => {
      clearTimeout(t);
      if (shared.failed !== undefined || cancelled) return reject(shared.failed ?? error);
      resumer.resume(got, error, gap).then((answer) => {
        if (answer === null) {
          if (!cancelled) controller.close();
          return resolve();
        }
        // Ended meanwhile (the deadline, the caller's signal, a cancel): the answer is let go.
        if (shared.failed !== undefined || cancelled) {
          answer[1].abort(shared.failed);
          return shared.failed === undefined ? resolve() : reject(shared.failed);
        }
        shared.controller = answer[1];
        reader = answer[0].body.getReader();
        read(controller, resolve, reject);
      }, reject);
    });
  };
  const stream = new ReadableStream({
    pull(controller) {
      reader ??= BODY.call(response).getReader();
      return new Promise((resolve, reject) => read(controller, resolve, reject));
    },
    cancel(reason) {
      cancelled = true;
      resumer.cancel();
      // The current body may have failed already (the break): its cancel's failure is not the caller's.
      return (reader ?? BODY.call(response))?.cancel(reason).catch(() => {});
    },
  }, { highWaterMark: 0 });
  shared = readThrough(response, stream);
  if (shared === undefined) return;
  idleMs = shared.idleMs;
  shared.idleMs = 0;
}

/** The TypeError a body that could not be resumed errors with (as fetch's own broken body does): `message` says why, `reason` names it, `cause` is the failure it could not resume. */
function resumeError(message, reason, cause) {
  const error = new TypeError(`resilient-fetch: ${message}`, cause === undefined ? undefined : { cause });
  error.reason = reason;
  return error;
}


export { INIT_MEMBERS, readArguments, readFirst, setTaker, headerOf, originKey, setKey, requestError, keepReferrer, CHAIN, SENDING, chainOf, isLocalError, ATTEMPT, platformFetch, fetchToWrap, installFetch, uninstallFetch, crossOrigin, isTimeout, SETTLER, setSettler, settleLater, callPromise, endCall, endGuarded, sendAttempt, sendLocal, statusOf, limitsOf, isOffline, onlineWait, callListener, makeEvent, statsEntry, hookContext, askIsFailure, askShouldRetry, discardBody, readPolicy, flightKey, joinFlight, resumeHead, rangeRequest, attachResume, resumeError };
