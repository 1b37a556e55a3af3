// The caller's arguments, read once, in JS, when the call is made (as fetch
// reads them), so that the wasm shell gets what it needs in one call without
// moving property names across the boundary: input and init, the caller's
// signal (during the call and, for the returned body, after it), the policy;
// and each attempt's send. (One module for all of it: every snippet is one more
// module a page without a bundler loads.)
// Keep the single `export { ... }` line last: the build turns it into
// `module.exports` for the CommonJS copy.

// The RequestInit members fetch reads, own or inherited, plain or getters.
const INIT_MEMBERS = ["body", "cache", "credentials", "duplex", "headers", "integrity", "keepalive", "method",
  "mode", "priority", "redirect", "referrer", "referrerPolicy", "signal", "window"];
const STANDARD_METHODS = ["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"];

/**
 * Reads `input` and `init` as fetch would, now. Returns
 * [init copy without its signal, the caller's signal or undefined,
 *  fast-path origin or null, fast-path method or null, body is a stream].
 * The copy keeps own enumerable properties (runtime extensions such as
 * Workers' `cf` or undici's `dispatcher`) and every standard member, inherited
 * or a getter; whatever a getter throws rejects the call, as with fetch.
 */
function readArguments(input, init) {
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
  const stream = isA(copy.body, "ReadableStream");
  const fast = fastTarget(input, copy);
  return [copy, signal, fast && fast[0], fast && fast[1], stream];
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
  try {
    const url = new URL(input);
    origin = url.username || url.password ? null : url.origin;
  } catch {
    origin = null; // the general path throws fetch's own error
  }
  if (input.length <= ORIGINS_KEY_MAX) {
    if (ORIGINS.size >= ORIGINS_MAX) ORIGINS.clear();
    ORIGINS.set(input, origin);
  }
  return origin;
}

/** One fast-path attempt: the same arguments, this attempt's signal. */
function sendDirect(input, init, signal) {
  init.signal = signal;
  return fetch(input, init);
}

/**
 * The status of what fetch resolved with. A fetch replaced by a mock or a
 * polyfill may resolve with anything: what is not a Response-like object with
 * a numeric status is a TypeError (thrown here, where it is caught).
 */
function statusOf(response) {
  const status = response?.status;
  if (typeof status !== "number") throw new TypeError("fetch resolved with something that is not a Response");
  return status;
}

/** The fast path's init has no headers of the caller's: `name: value` becomes its only one. */
function setOnlyHeader(init, name, value) {
  init.headers = { [name]: value };
}

/** One attempt of a built request (a clone per attempt), with this attempt's signal. */
function sendRequest(request, signal) {
  const init = { signal };
  keepReferrer(init, request);
  return fetch(request, init);
}

// ---- the caller's signal after the call: aborting it still stops the reading
// of the returned response's body, as with fetch. Each attempt's fetch gets only
// our own controller's signal; once the call resolves with a response, the
// caller's signal is linked to that attempt's controller for as long as the
// response lives (no AbortSignal.any: some runtimes keep every signal it ever
// made on a long-lived source signal).

/** What an aborted signal rejects with: its reason, or an AbortError where a polyfill has none. */
function abortReason(signal) {
  if (signal.reason !== undefined) return signal.reason;
  if (typeof DOMException === "function") return new DOMException("This operation was aborted", "AbortError");
  const error = new Error("This operation was aborted");
  error.name = "AbortError";
  return error;
}

// The response keeps its controller alive (and nothing else does); when the
// response is collected, its listener leaves the caller's signal.
const CONTROLLERS = new WeakMap();
const UNLINK = typeof FinalizationRegistry === "function"
  ? new FinalizationRegistry(({ signal, onAbort }) => signal.removeEventListener("abort", onAbort))
  : null;

/** Makes aborting `signal` abort `controller` (whose attempt gave `response`) while `response` lives. */
function keepAbortable(signal, controller, response) {
  if (signal.aborted) {
    controller.abort(abortReason(signal));
    return;
  }
  // Held weakly by the listener, strongly by the response only.
  const target = typeof WeakRef === "function" ? new WeakRef(controller) : { deref: () => controller };
  const onAbort = () => target.deref()?.abort(abortReason(signal));
  signal.addEventListener("abort", onAbort, { once: true });
  CONTROLLERS.set(response, controller);
  UNLINK?.register(response, { signal, onAbort });
}

// ---- the policy argument: read once, in JS (getters and proxy traps run here,
// where what they throw is caught and rejects the call, as fetch does with its
// init), so the wasm decodes a plain copy (serde-wasm-bindgen) that cannot
// throw, recurse without end or hold anything but data.

// Policy fields are at most 3 levels deep (retry.retryOn[i]); deeper data is an error.
const MAX_DEPTH = 4;
const KINDS = "a number, string, boolean, array or plain object";

/**
 * Returns [plain copy without onEvent, onEvent or undefined]. Throws a
 * TypeError naming the field for what no policy field takes: functions (but
 * onEvent), symbols, bigints, cycles and deeper nesting.
 */
function readPolicy(policy) {
  if (typeof policy !== "object" || Array.isArray(policy)) throw new TypeError("policy must be an object");
  const onEvent = policy.onEvent;
  if (onEvent !== undefined && onEvent !== null && typeof onEvent !== "function") {
    throw new TypeError("policy.onEvent must be a function");
  }
  return [copyObject(policy, "", 1, [], "onEvent"), onEvent ?? undefined];
}

function copyObject(object, path, depth, ancestors, skip) {
  ancestors.push(object);
  const copy = {};
  for (const key of Object.keys(object)) {
    if (key !== skip) copy[key] = copyValue(object[key], path ? `${path}.${key}` : key, depth, ancestors);
  }
  ancestors.pop();
  return copy;
}

function copyValue(value, path, depth, ancestors) {
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
        const copy = Array.from(value, (item, i) => copyValue(item, `${path}[${i}]`, depth + 1, ancestors));
        ancestors.pop();
        return copy;
      }
      return copyObject(value, path, depth + 1, ancestors, null);
    default:
      throw new TypeError(`${path} must be ${KINDS} (got a ${typeof value})`);
  }
}

export { readArguments, readPolicy, abortReason, keepAbortable, sendDirect, setOnlyHeader, sendRequest, statusOf };
