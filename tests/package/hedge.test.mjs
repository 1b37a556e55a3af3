// builds: full (a capability of resilient-fetch/full: tests/package/run.mjs)
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

test("shouldRetry's retry for a hedge's 404 does not end the race: the first attempt's 200 answers, no retry is sent", async () => {
  const id = uid("hedge-hook-404");
  const asked = [];
  const { client, events } = recorded({
    hedge: { delayMs: 40 },
    retry: { shouldRetry: ({ attempt, response }) => { asked.push([attempt, response?.status]); return response?.status === 404 ? true : undefined; } },
  });
  // The first request answers 200 after 300 ms; the hedge (and any retry) 404 at once.
  const res = await client.fetch(`${ORIGIN_A}/plan?id=${id}&answers=200@300,404@0`);
  assert.equal(res.status, 200, JSON.stringify(events));
  assert.equal(await res.text(), "200 1");
  const log = await serverLog(ORIGIN_A, id);
  assert.deepEqual(log.map((e) => [e.status, e.closedEarly]), [[200, false], [404, false]],
    "the first attempt was not aborted and no retry was sent");
  assert.deepEqual(asked, [[2, 404], [1, 200]]);
  assert.ok(!events.some((e) => e.type === "retry"), JSON.stringify(events));
  client.free();
});

test("shouldRetry is asked about every attempt of a hedged race that ended: the hedge's 503, then the first attempt's 200", async () => {
  const id = uid("hedge-hook-503");
  const asked = [];
  const client = new ResilientClient({
    hedge: { delayMs: 40 },
    retry: { shouldRetry: ({ attempt, response, error }) => { asked.push([attempt, response?.status ?? error?.name]); } },
  });
  const res = await client.fetch(`${ORIGIN_A}/plan?id=${id}&answers=200@200,503@0`);
  assert.equal(await res.text(), "200 1");
  assert.deepEqual(asked, [[2, 503], [1, 200]]);
  client.free();
});

test("an attempt of a race that answers for the call while the hook is asked keeps its whole body, though another ended after it", async () => {
  const id = uid("hedge-hook-order");
  // The hedge's 404 (at about 40 ms) is asked about for 200 ms; meanwhile the first attempt
  // ends with a 503 (at 150 ms), worth another attempt; then the 404 answers for the call.
  const client = new ResilientClient({
    hedge: { delayMs: 40 },
    retry: { shouldRetry: async ({ response }) => { if (response?.status === 404) await sleep(200); } },
  });
  const res = await client.fetch(`${ORIGIN_A}/plan?id=${id}&answers=503@150,404@0`);
  assert.equal(res.status, 404);
  assert.equal(await res.text(), "404 2");
  client.free();
});

test("a hedge sent while an ended attempt is asked about leaves that attempt's body whole", async () => {
  const id = uid("hedge-hook-body");
  // The first attempt's 404 (at 50 ms) is asked about until the origin has seen both hedges
  // (at 40 and 80 ms; at most 3 s: a hook that waited in vain leaves the log at fewer), so the
  // second, at least, goes while the ended attempt is asked about; then the 404 answers for the
  // call. The hedges' own answers (5 s) come after any of that.
  const client = new ResilientClient({
    hedge: { delayMs: 40, maxHedges: 2 },
    retry: { shouldRetry: async ({ response }) => { if (response?.status === 404) await waitLog(ORIGIN_A, id, (l) => l.length === 3); } },
  });
  const res = await client.fetch(`${ORIGIN_A}/plan?id=${id}&answers=404@50,200@5000`);
  assert.equal(res.status, 404);
  assert.equal(await res.text(), "404 1");
  const log = await waitLog(ORIGIN_A, id, (l) => l.length === 3 && l.slice(1).every((e) => e.closedEarly));
  assert.deepEqual(log.map((e) => e.closedEarly), [false, true, true], "both hedges were aborted");
  client.free();
});

test("a hedge gives its bulkhead slot to a real call: the hedge is aborted (its connection closed), the call is not refused", async () => {
  const [idA, idB] = [uid("hedge-slot-a"), uid("hedge-slot-b")];
  const { client, events } = recorded({ hedge: { delayMs: 30 }, bulkhead: { maxConcurrent: 2 } });
  // A's first attempt and its hedge hold both slots for 500 ms.
  const a = client.fetch(`${ORIGIN_A}/plan?id=${idA}&answers=200@500`);
  await waitLog(ORIGIN_A, idA, (l) => l.length === 2);
  const b = await client.fetch(`${ORIGIN_A}/plan?id=${idB}&answers=200@0`);
  assert.equal(await b.text(), "200 1");
  assert.equal(await (await a).text(), "200 1");
  const log = await waitLog(ORIGIN_A, idA, (l) => l[1]?.closedEarly === true);
  assert.deepEqual(log.map((e) => e.closedEarly), [false, true], "the hedge's connection was closed");
  assert.ok(events.some((e) => e.type === "attemptEnd" && e.attempt === 2 && e.outcome === "aborted"), JSON.stringify(events));
  assert.ok(!events.some((e) => e.type === "bulkheadRejected"));
  const stats = client.stats()[ORIGIN_A];
  assert.deepEqual([stats.hedges, stats.failures, stats.inFlight], [1, 0, 0]);
  client.free();
});
