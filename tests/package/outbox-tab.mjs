// builds: full (a capability of resilient-fetch/full: tests/package/run.mjs)
// One page of the outbox's Chromium proof (browser-outbox.test.mjs): a client whose outbox is
// the browser's IndexedDB, posting numbered bodies to the fault server's /ledger.

/** The page's client and what the test drives it with (on `window`). */
export function setUp({ ResilientClient, QueuedError }, { url, name, breaker = { cooldownMs: 300 } }) {
  const events = [];
  const client = new ResilientClient({
    outbox: { name },
    // The page and the fault server are different origins: the key goes cross-origin too.
    idempotencyKey: true,
    retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 },
    breaker,
    timeoutMs: 2000,
    onEvent: (e) => { if (["queued", "delivered", "deadLettered"].includes(e.type)) events.push([e.type, e.id]); },
  });
  return {
    events,
    /** POSTs `bodies` one after another: per body, "kept:<reason>", "status:<n>" or "error:<name>". */
    async post(bodies) {
      const results = [];
      for (const body of bodies) {
        try {
          results.push(`status:${(await client.fetch(url, { method: "POST", body })).status}`);
        } catch (e) {
          results.push(e instanceof QueuedError ? `kept:${e.reason}` : `error:${e.name}:${e.notQueued ?? e.message}`);
        }
      }
      return results;
    },
    flush: () => client.outbox.flush().then((t) => ({ ...t })),
    list: () => client.outbox.list().then((l) => l.map((e) => e.id)),
    deadLetters: () => client.outbox.deadLetters().then((l) => l.map((e) => [e.id, e.deadLetter])),
  };
}
