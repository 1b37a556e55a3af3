// Coalescing (policy `coalesce`): identical reads in flight share one call.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files); its
// imports are paths from this file, as the join resolves them.
import { INIT_MEMBERS } from "../../js/request.js";
import { linkCopy } from "../../js/body.js";

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

export { flightKey, joinFlight };
