// Failover (policy `failover`): an attempt's request sent to an alternate origin instead of the
// call's own, with the same path, query, method, headers (the idempotency key among them) and body.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files).
// What a Request is built with beside its URL, method, headers and body: copied when set.
const REQUEST_OPTIONS = ["mode", "credentials", "cache", "redirect", "referrer", "referrerPolicy", "integrity"];

/**
 * Reports to `settler` (the wasm's, src/wasm/settle.rs) under (slot, generation) what an attempt to `origin` sends instead of
 * `input`: for an absolute URL string, that URL at `origin`; for a Request, a Request of that URL
 * with the same method, headers, options and body (read from a clone when `replay`, so that the
 * Request can be cloned for each attempt; else its one stream, passed on). A failure (a body that
 * cannot be read) is reported as a rejection: the attempt's own error, not the origin's.
 */
function failoverTo(input, origin, replay, settler, slot, generation) {
  const at = (url) => {
    const u = new URL(url);
    return origin + u.pathname + u.search + u.hash;
  };
  try {
    if (typeof input === "string") return settler(slot, generation, true, at(input), 0, 0);
    const init = { method: input.method, headers: input.headers };
    for (const name of REQUEST_OPTIONS) {
      const value = input[name];
      if (value !== undefined && value !== "" && value !== "navigate") init[name] = value;
    }
    if (input.keepalive === true) init.keepalive = true;
    const url = at(input.url);
    if (input.body === null) return settler(slot, generation, true, new Request(url, init), 0, 0);
    if (!replay) return settler(slot, generation, true, new Request(url, { ...init, body: input.body, duplex: "half" }), 0, 0);
    input.clone().arrayBuffer().then((body) => settler(slot, generation, true, new Request(url, { ...init, body }), 0, 0),
      (error) => settler(slot, generation, false, error, 0, 0));
  } catch (error) {
    settler(slot, generation, false, error, 0, 0);
  }
}

export { failoverTo };
