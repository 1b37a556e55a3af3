// Hedged reads (policy `hedge`) through the package used by name against the fault server
// on 127.0.0.1: the hedge answers for a slow first attempt, whose request is really aborted.
import test from "node:test";
import assert from "node:assert/strict";
import { ORIGIN_A, countListeners, serverLog, sleep, uid, waitLog } from "./helpers.mjs";
import { ResilientClient } from "resilient-fetch";

/** A client whose events are kept. */
function recorded(policy) {
  const events = [];
  const client = new ResilientClient({ ...policy, onEvent: (e) => events.push(e) });
  return { client, events };
}

test("a slow GET is hedged: the hedge answers, the first attempt's request is aborted (the server sees it closed)", async () => {
  const id = uid("hedge");
  const { client, events } = recorded({ hedge: { delayMs: 50 } });
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
  const timersBefore = timers();
  const t0 = performance.now();
  const res = await client.fetch(`${ORIGIN_A}/tail?id=${id}&slow=1&ms=3000`);
  const ms = performance.now() - t0;
  assert.equal(await res.text(), "tail");
  await sleep(0);
  assert.equal(timers(), timersBefore, "no attempt's timer is left (the loser's was cleared)");
  assert.ok(ms < 1000, `answered after ${Math.round(ms)} ms, not 3 s`);
  const log = await waitLog(ORIGIN_A, id, (l) => l[0]?.closedEarly === true);
  assert.equal(log.length, 2);
  assert.equal(log[0].closedEarly, true, "the slow attempt's connection was closed");
  assert.equal(log[1].status, 200);
  const hedge = events.find((e) => e.type === "hedge");
  assert.deepEqual([hedge?.attempt, hedge?.delayMs], [2, 50]);
  assert.ok(events.some((e) => e.type === "attemptEnd" && e.attempt === 1 && e.outcome === "aborted"), JSON.stringify(events));
  const stats = client.stats()[ORIGIN_A];
  assert.deepEqual([stats.hedges, stats.hedgeWins, stats.failures, stats.inFlight], [1, 1, 0, 0]);
  client.free();
});

test("no hedge for a fast answer, a POST, or a client without hedge", async () => {
  const id = uid("hedge");
  const { client, events } = recorded({ hedge: { delayMs: 200 } });
  await (await client.fetch(`${ORIGIN_A}/tail?id=${id}&slow=0`)).text();
  await (await client.fetch(`${ORIGIN_A}/tail?id=${id}&slow=3&ms=300`, { method: "POST", body: "x" })).text();
  const plain = new ResilientClient();
  await (await plain.fetch(`${ORIGIN_A}/tail?id=${id}&slow=3&ms=300`)).text();
  assert.equal((await serverLog(ORIGIN_A, id)).length, 3, "one request per call");
  assert.ok(!events.some((e) => e.type === "hedge"));
  client.free(); plain.free();
});

test("the caller's abort stops the attempt and its hedge alike", async () => {
  const id = uid("hedge");
  const client = new ResilientClient({ hedge: { delayMs: 30 } });
  const controller = new AbortController();
  const listeners = countListeners(controller.signal);
  const call = client.fetch(`${ORIGIN_A}/tail?id=${id}&slow=5&ms=5000`, { signal: controller.signal });
  await waitLog(ORIGIN_A, id, (l) => l.length === 2);
  controller.abort();
  await assert.rejects(call, { name: "AbortError" });
  assert.equal(listeners.live, 0, "no listener left on the caller's signal");
  const log = await waitLog(ORIGIN_A, id, (l) => l.every((e) => e.closedEarly));
  assert.deepEqual(log.map((e) => e.closedEarly), [true, true]);
  assert.equal(client.stats()[ORIGIN_A].inFlight, 0);
  client.free();
});

test("hedge: true learns the origin's latency: after 20 fast answers a slow GET is hedged within milliseconds", async () => {
  const { client, events } = recorded({ hedge: true });
  const warm = uid("hedge-warm");
  for (let i = 0; i < 20; i++) await (await client.fetch(`${ORIGIN_A}/tail?id=${warm}&slow=0`)).text();
  assert.ok(!events.some((e) => e.type === "hedge"), "fast answers are not hedged");
  const id = uid("hedge-auto");
  const t0 = performance.now();
  const res = await client.fetch(`${ORIGIN_A}/tail?id=${id}&slow=1&ms=3000`);
  assert.equal(await res.text(), "tail");
  const ms = performance.now() - t0;
  assert.ok(ms < 1000, `answered after ${Math.round(ms)} ms, not 3 s (nor the 2 s of an unlearnt delay)`);
  const hedge = events.find((e) => e.type === "hedge");
  assert.ok(hedge && hedge.delayMs >= 10 && hedge.delayMs < 500, `hedge after ${hedge?.delayMs} ms`);
  client.free();
});
