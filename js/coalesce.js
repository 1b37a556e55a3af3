// Coalescing (policy `coalesce`): a GET or HEAD identical to one in flight on the same client
// joins it instead of being sent again, and resolves with its own clone of the response.
// Keep the single `export { ... }` line last (see arguments.js).

// The request options fetch reads besides URL, method, headers and body.
const OPTIONS = ["cache", "credentials", "integrity", "keepalive", "mode", "priority", "redirect", "referrer", "referrerPolicy"];

/**
 * What makes two calls the same request: the method, the URL, the headers (names lower-cased, in order,
 * as Headers iterates them) and the request options; `request` is the general path's
 * Request, undefined on the fast path (an absolute URL string and an init without headers).
 */
function flightKey(method, input, init, request) {
  const parts = [method];
  if (request === undefined) {
    parts.push(input);
    for (const name of OPTIONS) if (init[name] !== undefined && init[name] !== null) parts.push(`${name}=${init[name]}`);
  } else {
    parts.push(request.url);
    for (const [name, value] of request.headers) parts.push(`${name}:${value}`);
    for (const name of OPTIONS) if (request[name] !== undefined) parts.push(`${name}=${request[name]}`);
  }
  return parts.join("\n");
}

// In flight, by client and key: { waiters: Set, abort }.
const FLIGHTS = new Map();

/**
 * Joins the flight of `key` on client `client`, or starts it: `start()` runs the call, and
 * `abort()` stops it. The caller's `signal` detaches only this caller; the call is aborted
 * when every caller has left. Each caller gets its own response: the last one the response
 * itself, the others clones made before anyone reads it.
 */
function joinFlight(client, key, signal, start, abort) {
  const id = `${client}\n${key}`;
  let flight = FLIGHTS.get(id);
  if (flight === undefined) {
    flight = { waiters: new Set(), abort };
    FLIGHTS.set(id, flight);
    const settle = (ok, value) => {
      if (FLIGHTS.get(id) === flight) FLIGHTS.delete(id);
      const waiters = [...flight.waiters];
      flight.waiters.clear();
      if (ok && waiters.length === 0) value.body?.cancel().catch(() => {});
      waiters.forEach((w, i) => {
        w.leave();
        if (!ok) w.reject(value);
        else w.resolve(i === waiters.length - 1 ? value : value.clone());
      });
    };
    start().then((r) => settle(true, r), (e) => settle(false, e));
  }
  const joined = flight;
  return new Promise((resolve, reject) => {
    const waiter = { resolve, reject, leave: () => signal?.removeEventListener("abort", onAbort) };
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
