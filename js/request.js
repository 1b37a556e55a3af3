// The caller's arguments, read once, in JS, when the call is made (as fetch reads them), so that
// the wasm shell gets what it needs in one call: input and init, the caller's signal, the
// origin (the fast path reads plain URL strings without the URL parser).
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files).
import { chainOf } from "./chain.js";
import { callPromise, endCall } from "./send.js";
import { BODY_NONE, BODY_REPLAYABLE, BODY_STREAM, READ_METHOD, READ_SLOT, READ_TOLD, READ_LOCAL, READ_SIGNAL, READ_REQUEST, METHOD_OTHER } from "./errors.js";

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

export { INIT_MEMBERS, readArguments, readFirst, setTaker, headerOf, originKey, setKey, requestError, keepReferrer };
