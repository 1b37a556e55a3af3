// What leaves the package as a user reads it (issue #39): every duration an error, an event,
// a hook's context or stats() gives is a whole number of milliseconds (the core's clock,
// performance.now(), has fractions), and an unknown policy field within two edits of a known
// one is named in the error ("did you mean"), as TypeScript names it. Node, against the fault
// server on 127.0.0.1, in both builds (tests/package/run.mjs).
import test from "node:test";
import assert from "node:assert/strict";
import { ORIGIN_A, errorOf, uid, fullOnly } from "./helpers.mjs";
import { CircuitOpenError, RateLimitError, ResilientClient, resilientFetch } from "resilient-fetch";

/** The fields of `object` whose name ends in Ms (durations), as [name, value]. */
const durations = (object) => Object.entries(object).filter(([name]) => name.endsWith("Ms"));

test("an open breaker's CircuitOpenError, the events of a retried call and its hooks' contexts give whole milliseconds", async () => {
  const events = [];
  const contexts = [];
  const retried = new ResilientClient({
    retry: { baseDelayMs: 3, maxDelayMs: 7, shouldRetry: (ctx) => { contexts.push(ctx); return undefined; } },
    breaker: false,
    onEvent: (e) => events.push(e),
  });
  // Two failures retried, then a success: attemptEnd (durationMs) and retry (delayMs) events.
  const ok = await retried.fetch(`${ORIGIN_A}/flaky?id=${uid("ms-flaky")}&fail=2&code=503`);
  assert.equal(ok.status, 200);
  // A failure that opens a breaker, and a call it refuses (shortCircuit's delayMs).
  const tripped = new ResilientClient({
    retry: false,
    breaker: { mode: "consecutive", failureThreshold: 1, cooldownMs: 5000 },
    onEvent: (e) => events.push(e),
  });
  await tripped.fetch(`${ORIGIN_A}/status?id=${uid("ms-open")}&code=503`);
  const refused = await errorOf(tripped.fetch(`${ORIGIN_A}/ok`));
  assert.ok(refused instanceof CircuitOpenError, String(refused));
  assert.ok(Number.isInteger(refused.retryAfterMs) && refused.retryAfterMs > 0 && refused.retryAfterMs <= 5000,
    `retryAfterMs ${refused.retryAfterMs}`);
  assert.match(refused.message, new RegExp(`next probe in ${refused.retryAfterMs} ms`));

  const seen = new Set();
  for (const e of events) {
    for (const [name, value] of durations(e)) {
      seen.add(`${e.type}.${name}`);
      assert.ok(Number.isInteger(value) && value >= 0, `${e.type}.${name} = ${value}`);
    }
  }
  // The ones this run must have made (a check over no duration would pass on nothing).
  for (const field of ["attemptEnd.durationMs", "retry.delayMs", "shortCircuit.delayMs"]) {
    assert.ok(seen.has(field), `no ${field} among ${[...seen]}`);
  }
  assert.ok(contexts.length >= 3, `shouldRetry asked ${contexts.length} times`);
  for (const ctx of contexts) {
    assert.ok(Number.isInteger(ctx.elapsedMs) && ctx.elapsedMs >= 0, `elapsedMs ${ctx.elapsedMs}`);
    assert.ok(Number.isInteger(ctx.remainingMs) && ctx.remainingMs <= 30_000, `remainingMs ${ctx.remainingMs}`);
  }
});

test("a RateLimitError's retryAfterMs and stats().waitMs are whole milliseconds", fullOnly(), async () => {
  const url = `${ORIGIN_A}/quota?id=${uid("ms-quota")}&limit=1&windowMs=1000&form=draft`;
  const client = new ResilientClient({ retry: false, breaker: false });
  await (await client.fetch(url)).text(); // learns the quota: spent until the window ends
  // One that may wait for the reset waits (stats' waitMs), one that may not is refused.
  await (await client.fetch(url)).text();
  const waitMs = client.stats()[ORIGIN_A].waitMs;
  assert.ok(Number.isInteger(waitMs) && waitMs > 0, `waitMs ${waitMs}`);
  const refused = await errorOf(client.fetch(url, undefined, { rateLimit: { maxWaitMs: 0 } }));
  assert.ok(refused instanceof RateLimitError, String(refused));
  assert.ok(Number.isInteger(refused.retryAfterMs) && refused.retryAfterMs > 0, `retryAfterMs ${refused.retryAfterMs}`);
  assert.match(refused.message, new RegExp(`asked to wait ${refused.retryAfterMs} ms`));
});

test("an unknown policy field within two edits of a known one is named: did you mean", async () => {
  const thrown = (make) => { try { make(); return null; } catch (e) { return e; } };
  const misspelt = thrown(() => new ResilientClient({ timeoutMS: 1000 }));
  assert.ok(misspelt instanceof TypeError, String(misspelt));
  assert.equal(misspelt.message, 'unknown policy field "timeoutMS": did you mean "timeoutMs"?');
  // A call's policy too, and a field of a section, named by its path.
  const nested = await errorOf(resilientFetch(`${ORIGIN_A}/ok`, undefined, { retry: { maxAttemps: 2 } }));
  assert.ok(nested instanceof TypeError, String(nested));
  assert.equal(nested.message, 'unknown policy field "retry.maxAttemps": did you mean "retry.maxAttempts"?');
  // Nothing near: the field alone.
  const far = thrown(() => new ResilientClient({ colour: "red" }));
  assert.equal(far?.message, 'unknown policy field "colour"');
});
