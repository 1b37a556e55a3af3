// resilient-fetch/otel: OpenTelemetry traces and metrics for a ResilientClient, made from the
// client's own events (onEvent) and stats(). Opt-in: no other entry point imports this file,
// and @opentelemetry/api (an optional peer dependency) is the only module it imports.
//
// How it is built, and why:
// - instrument() makes the client itself, so that it owns the client's onEvent (composed with
//   the caller's, which is still called) and can read the client's stats() for the gauges.
// - Each call through the client's fetch (also install()'s global wrapper, which calls it) is
//   given a call policy of its own: an onEvent and a fetch bound to that call. A call's events
//   thus belong to it alone, however many calls run at once, with no call id in the events.
// - The caller's active context is read when the call is made (synchronously, in fetch()),
//   never later: the wasm runs every call's steps from one task queue, so the context active
//   when an attempt starts is whichever call scheduled that queue (Node), or none (browsers).
// - One span for the call (INTERNAL, child of the caller's active span), one CLIENT span per
//   attempt under it (OpenTelemetry's HTTP client conventions: a span per request sent,
//   http.request.resend_count from the second). The call span holds what happens between or
//   instead of attempts: backoff waits, breaker refusals, hedges, rate-limit waits; a call
//   refused before sending still has a span; and the attempts of one call stay in one trace
//   when the caller has none. Each attempt's fetch (the one the client would use: its fetch
//   option, what its install() wrapped, or the platform's) runs in its span's context, so an
//   HTTP instrumentation underneath nests its spans there, and `propagate` can send it on.
// The entry is the join of js/otel/ (this file first): scripts/join-js.mjs writes one import
// line of @opentelemetry/api and one `export { ... };` line last, which the build turns into a
// require and module.exports for the CommonJS copy (otel.cjs).
import { Telemetry } from "./telemetry.js";
import { WRAPPED } from "./call.js";
import { functionField, readOptions } from "./options.js";

/**
 * Makes a client with `make(policy)` (or `new make(policy)` for ResilientClient) and
 * instruments it: traces of its calls and metrics of its origins, to `options.tracerProvider`
 * and `options.meterProvider` (default: the global ones of @opentelemetry/api, looked up
 * when used, so they may be registered later). Returns the client.
 */
function instrument(make, policy, options = {}) {
  if (typeof make !== "function") {
    throw new TypeError("instrument(): make must be ResilientClient, install, or a function that makes a client from a policy");
  }
  if (policy !== undefined && policy !== null && (typeof policy !== "object" || Array.isArray(policy))) {
    throw new TypeError("instrument(): policy must be an object");
  }
  const own = policy ?? {};
  const onEvent = functionField(own, "onEvent");
  const send = functionField(own, "fetch");
  const telemetry = new Telemetry(readOptions(options), own);
  const listener = (event) => {
    try {
      telemetry.record(event, telemetry.instruments());
    } catch { /* telemetry must not disturb the caller's listener */ }
    return onEvent?.(event);
  };
  const clientPolicy = { ...own, onEvent: listener };
  const before = globalThis.fetch;
  const client = typeof make.prototype?.stats === "function" ? new make(clientPolicy) : make(clientPolicy);
  if (client === null || typeof client !== "object" || typeof client.fetch !== "function" ||
    typeof client.stats !== "function") {
    throw new TypeError("instrument(): make did not return a ResilientClient (an object with fetch and stats)");
  }
  // install()'s client sends through what it wrapped (never through what wraps the global
  // later); a client of its own looks the platform's fetch up at each attempt.
  const installed = globalThis.fetch !== before ? WRAPPED.get(globalThis.fetch) : undefined;
  telemetry.sendsWith = send ?? installed;
  const original = client.fetch;
  Object.defineProperty(client, "fetch", {
    configurable: true,
    writable: true,
    value: function fetch(input, init, callPolicy) {
      const call = telemetry.begin(input, init, callPolicy, telemetry.sendsWith, onEvent);
      if (call === null) return original.call(client, input, init, callPolicy);
      let result;
      try {
        result = original.call(client, input, init, call.policy);
      } catch (error) {
        call.end(undefined, error);
        throw error;
      }
      Promise.resolve(result).then((response) => call.end(response), (error) => call.end(undefined, error));
      return result;
    },
  });
  telemetry.watch(client);
  return client;
}

export { instrument };
