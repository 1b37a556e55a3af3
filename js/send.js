// Sending an attempt: its limit, its settlement, and what its response says (status, rate limits).
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files).
import { keepReferrer } from "./request.js";
import { CHAIN, SENDING } from "./chain.js";
import { ATTEMPT, platformFetch } from "./install.js";
import { discardBody } from "./hooks.js";
import { guardResponse } from "./body.js";
import { makeTimeoutError, TIMEOUT_KIND_ATTEMPT, TIMEOUT_KIND_CALL, SEND_FLAG_REPLAY, SEND_FLAG_HEDGE, SEND_FLAG_RATES, STATUS_FLAG_LIMITS } from "./errors.js";

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

export { isTimeout, SETTLER, setSettler, settleLater, callPromise, endCall, endGuarded, sendAttempt, sendLocal, statusOf, limitsOf, isOffline, onlineWait };
