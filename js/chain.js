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

export { CHAIN, SENDING, chainOf, isLocalError };
