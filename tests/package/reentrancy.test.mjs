// Calling back into the client from onEvent and from each hook: every count still lands.
// The client's origin state is updated before any event is told or hook asked, so a callback
// that reads stats(), breakerState() or even sends another call finds nothing borrowed.
import test from "node:test";
import assert from "node:assert/strict";
import { ORIGIN_A, ORIGIN_B, serverLog, uid, waitLog, within } from "./helpers.mjs";
import { ResilientClient } from "resilient-fetch";

const FAST = { baseDelayMs: 1, maxDelayMs: 5 };

test("onEvent, shouldRetry, isFailure and the fetch option calling back into the client see every count", async () => {
  const id = uid("reentry");
  const seen = { events: 0, hooks: 0, nested: 0 };
  let client, nested;
  const touch = () => {
    // Everything the client answers synchronously, from inside its own callbacks.
    const stats = client.stats()[ORIGIN_A];
    client.breakerState(ORIGIN_A);
    return stats;
  };
  client = new ResilientClient({
    retry: { ...FAST, maxAttempts: 3, shouldRetry: () => { seen.hooks++; touch(); return undefined; } },
    breaker: { mode: "consecutive", failureThreshold: 4, cooldownMs: 60_000, isFailure: () => { seen.hooks++; touch(); return undefined; } },
    fetch: (input, init) => { touch(); return fetch(input, init); },
    onEvent: (e) => {
      seen.events++;
      touch();
      // A call sent from inside an event: it runs through the same registry.
      if (e.type === "giveUp" && seen.nested === 0) {
        seen.nested++;
        nested = client.fetch(`${ORIGIN_B}/ok?id=${id}`);
      }
    },
  });
  // A call of three 503s (three failures), then one more: its first attempt is the fourth
  // failure in a row, which opens the breaker, so it gives up on its retry; a third call
  // is refused at once.
  assert.equal((await client.fetch(`${ORIGIN_A}/status?id=${id}&code=503`)).status, 503);
  assert.equal((await client.fetch(`${ORIGIN_A}/status?id=${id}&code=503`)).status, 503);
  const refused = await client.fetch(`${ORIGIN_A}/status?id=${id}&code=503`).then(() => null, (e) => e);
  assert.equal(refused?.name, "CircuitOpenError");
  assert.equal((await nested).status, 200);
  const a = client.stats()[ORIGIN_A], b = client.stats()[ORIGIN_B];
  assert.equal((await serverLog(ORIGIN_A, id)).length, 4);
  assert.equal((await waitLog(ORIGIN_B, id, (l) => l.length === 1)).length, 1);
  assert.deepEqual(
    [a.attempts, a.retries, a.failures, a.successes, a.shortCircuits, a.inFlight],
    [4, 2, 4, 0, 1, 0], JSON.stringify(a));
  assert.deepEqual([b.attempts, b.successes, b.inFlight], [1, 1, 0], JSON.stringify(b));
  assert.equal(client.breakerState(ORIGIN_A), "open");
  // Each hook was asked about every attempt, and every event was seen.
  assert.equal(seen.hooks, 2 * 5, JSON.stringify(seen));
  assert.ok(seen.events >= 15, JSON.stringify(seen));
  client.free();
});

// A call reads its arguments before it enters the wasm (js/request.js readFirst): a getter of
// its init that makes calls of its own (through the same client, and the module-wide one) runs
// in the middle of that reading. Each call keeps its own promise and arguments.
test("an init getter that makes calls of its own: each call settles with its own answer", async () => {
  const { resilientFetch } = await import("resilient-fetch");
  const client = new ResilientClient({ retry: false });
  const inner = [];
  const init = {
    get method() {
      inner.push(client.fetch(`${ORIGIN_A}/status?code=201`), resilientFetch(`${ORIGIN_A}/status?code=202`));
      return "GET";
    },
  };
  const outer = await within(client.fetch(`${ORIGIN_A}/status?code=203`, init), 5000, "the outer call");
  const [first, second] = await within(Promise.all(inner), 5000, "the calls made by the getter");
  assert.deepEqual([outer.status, first.status, second.status], [203, 201, 202]);
  client.free();
});
