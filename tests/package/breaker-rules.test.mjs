// The breaker's slow-call rule and its growing cooldowns (docs/behaviour.md, "Circuit breaker per
// origin"), in both builds, against the fault server. Every time these tests judge is one the
// package itself reports (an attemptEnd's durationMs, a CircuitOpenError's retryAfterMs read in
// the same task as the transition that set it), never a wall-clock comparison of two runs.
import test from "node:test";
import assert from "node:assert/strict";
import { ORIGIN_A, errorOf, serverLog, sleep, uid } from "./helpers.mjs";

const { ResilientClient, CircuitOpenError } = await import("resilient-fetch");

// Promise: an attempt slower than slowCallMs is slow, and the breaker opens on the call whose slow
// share of the window reaches slowCallRateThreshold (once the window holds minimumCalls), saying
// "slowCallRate". The slowness is read from each attempt's own durationMs, so a busy machine that
// makes a fast answer slow moves the opening, never the rule.
test("slow calls open the breaker when their share of the window reaches the threshold; stats and the event say slowCallRate", async () => {
  const SLOW_MS = 150;
  const events = [];
  const client = new ResilientClient({
    retry: false,
    breaker: { slowCallMs: SLOW_MS, slowCallRateThreshold: 0.5, minimumCalls: 4, windowType: "count", windowSize: 4 },
    onEvent: (e) => events.push(e),
  });
  const id = uid("slow-calls");
  // Fast and slow answers, all 200: the slow ones are held 400 ms by the server.
  const paths = ["/ok", `/slow?ms=400&id=${id}`, "/ok", `/slow?ms=400&id=${id}`, "/ok", "/ok"];
  const results = [];
  for (const path of paths) results.push(await client.fetch(ORIGIN_A + path).then((r) => r.status, (e) => e));
  // The rule, replayed over the attempts' own durations: where it must have opened.
  const ends = events.filter((e) => e.type === "attemptEnd");
  const slow = ends.map((e) => e.durationMs > SLOW_MS);
  let expected = -1;
  for (let i = 0; i < slow.length && expected < 0; i++) {
    const window = slow.slice(Math.max(0, i - 3), i + 1);
    if (window.length >= 4 && slow[i] && window.filter(Boolean).length / window.length >= 0.5) expected = i;
  }
  assert.ok(expected >= 0 && expected <= 3, `the two 400 ms answers make it open by the fourth call: ${JSON.stringify(slow)}`);
  const opened = events.findIndex((e) => e.type === "breakerTransition" && e.to === "open");
  assert.equal(events[opened - 1], ends[expected], "it opened right after the attempt whose slow share reached the threshold");
  assert.equal(events[opened].reason, "slowCallRate");
  assert.ok(results.slice(0, expected + 1).every((r) => r === 200), "slow answers are answers: each resolved with its 200");
  assert.ok(results.slice(expected + 1).every((r) => r instanceof CircuitOpenError), String(results));
  assert.equal(client.stats()[ORIGIN_A].openedBy, "slowCallRate");
  assert.equal(client.breakerState(ORIGIN_A), "open");
  assert.equal(ends.length, expected + 1, "nothing sent once open");
  assert.equal((await serverLog(ORIGIN_A, id)).length, 2);
});

// Promise: without slowCallMs, slowness counts for nothing (a breaker of defaults never opens on
// answers, however slow); an error names a threshold given without its duration.
test("without slowCallMs slow answers never open it; slowCallRateThreshold alone is an error naming slowCallMs", async () => {
  const client = new ResilientClient({ retry: false, breaker: { minimumCalls: 2, windowType: "count", windowSize: 2 } });
  const id = uid("slow-off");
  for (let i = 0; i < 3; i++) assert.equal((await client.fetch(`${ORIGIN_A}/slow?ms=200&id=${id}`)).status, 200);
  assert.equal(client.breakerState(ORIGIN_A), "closed");
  assert.equal(client.stats()[ORIGIN_A].openedBy, undefined);
  assert.throws(() => new ResilientClient({ breaker: { slowCallRateThreshold: 0.5 } }),
    { name: "TypeError", message: /breaker\.slowCallRateThreshold must be given with breaker\.slowCallMs/ });
  assert.throws(() => new ResilientClient({ breaker: { failureThreshold: 3, slowCallMs: 100 } }), /breaker\.slowCallMs/);
  assert.throws(() => new ResilientClient({ breaker: { cooldownMs: 1000, maxCooldownMs: 500 } }),
    { name: "RangeError", message: "breaker.maxCooldownMs must be an integer from breaker.cooldownMs (1000) to 2147483647 (got 500)" });
});

/** One client of a consecutive(1) breaker whose cooldown of 100 ms grows to 800, and what its
 * openings were: each opening's reason and the refusal of a call made in its listener. */
function growingClient() {
  const openings = [];
  const client = new ResilientClient({
    retry: false,
    // No bulkhead: an open breaker refuses a call as it is made (the fast path), so the
    // refusal's wait is the cooldown the transition just set, read in the transition's own task.
    bulkhead: false,
    breaker: { failureThreshold: 1, cooldownMs: 100, maxCooldownMs: 800 },
    onEvent: (e) => {
      if (e.type !== "breakerTransition" || e.to !== "open") return;
      openings.push({ reason: e.reason, refused: errorOf(client.fetch(`${ORIGIN_A}/ok`)) });
    },
  });
  return { client, openings };
}

/** The cooldown each opening of `openings` set, from its listener's refused call. */
async function waits(openings) {
  const errors = await Promise.all(openings.map((o) => o.refused));
  for (const e of errors) assert.ok(e instanceof CircuitOpenError, String(e));
  return errors.map((e) => e.retryAfterMs);
}

// Promise: each reopening after a failed probe doubles the cooldown up to maxCooldownMs, drawn
// from the upper half of that (jitter), never below cooldownMs; a close starts again from it.
test("each reopening doubles the cooldown (jittered in its upper half) up to maxCooldownMs, and a close resets it", async () => {
  const { client, openings } = growingClient();
  const down = `${ORIGIN_A}/status?code=503&id=${uid("growing")}`;
  assert.equal((await client.fetch(down)).status, 503);
  // Four failed probes, each sent once the breaker lets one through.
  for (let n = 1; n <= 4; n++) {
    await sleep((await waits(openings)).at(-1) + 5);
    assert.equal((await client.fetch(down)).status, 503, `probe ${n} sent`);
  }
  const cooldowns = await waits(openings);
  assert.deepEqual(openings.map((o) => o.reason), ["failures", "probe", "probe", "probe", "probe"]);
  // [lowest, highest] of each cooldown: 100, then 2^n × 100 capped at 800, in its upper half.
  const bounds = [[100, 100], [100, 200], [200, 400], [400, 800], [400, 800]];
  cooldowns.forEach((w, n) => assert.ok(w >= bounds[n][0] - 1 && w <= bounds[n][1], `cooldown ${n}: ${w} ms in ${bounds[n]}`));
  assert.equal(client.stats()[ORIGIN_A].openedBy, "failures", "the rule that opened it, kept through its reopenings");
  // A probe that succeeds closes it; the next opening waits cooldownMs again.
  await sleep(cooldowns.at(-1) + 5);
  assert.equal((await client.fetch(`${ORIGIN_A}/ok`)).status, 200);
  assert.equal(client.breakerState(ORIGIN_A), "closed");
  assert.equal(client.stats()[ORIGIN_A].openedBy, undefined);
  assert.equal((await client.fetch(down)).status, 503);
  assert.equal((await waits(openings)).at(-1), 100);
});

// Promise: the jitter spreads a fleet: clients with the same history draw their own cooldowns.
test("clients reopened together draw their own cooldowns (a fleet's probes spread)", async () => {
  const fleet = Array.from({ length: 5 }, growingClient);
  const down = `${ORIGIN_A}/status?code=503&id=${uid("fleet")}`;
  await Promise.all(fleet.map(({ client }) => client.fetch(down)));
  for (let n = 1; n <= 2; n++) {
    const last = await Promise.all(fleet.map(async ({ openings }) => (await waits(openings)).at(-1)));
    await sleep(Math.max(...last) + 5);
    await Promise.all(fleet.map(({ client }) => client.fetch(down)));
  }
  // The second reopening's cooldown lies in [200, 400] for each: five equal draws would mean none.
  const second = await Promise.all(fleet.map(async ({ openings }) => (await waits(openings))[2]));
  assert.ok(second.every((w) => w >= 199 && w <= 400), String(second));
  assert.ok(new Set(second).size > 1, `five clients drew ${second}`);
});
