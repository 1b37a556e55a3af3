// builds: full (a capability of resilient-fetch/full: tests/package/run.mjs)
// The events scenario that Chromium (browser-events.test.mjs) and workerd (edge-events.test.mjs)
// run with the same streams of the fault server: what its result and the server's log must show.
import assert from "node:assert/strict";
import { ORIGIN_A, serverLog, waitLog } from "./helpers.mjs";

/**
 * Checks the scenario's `result` (the field rules, the events heard) and the fault server's log
 * for the streams of `id`: a reconnect with Last-Event-ID after a cut and after an idle gap, the
 * backoff's bounds, nothing sent while the breaker was open, 204, and close() reaching the server.
 */
export async function checkScenario(result, id) {
  assert.deepEqual(result.fields.map((i) => [i.data, i.event, i.id, i.retry ?? null]), [
    ["a", "message", "", null], ["b1\nb2", "message", "", null], ["", "ping", "", null], ["c", "message", "", null],
    ["d", "message", "8", null], ["e", "message", "8", 250], ["g", "message", "9", null],
  ]);
  assert.deepEqual(result.heard, ["open", "message one 1", "error 0", "open", "message two 1"]);
  assert.deepEqual((await serverLog(ORIGIN_A, `${id}-cut`)).map((e) => e.lastEventId), [null, "1"]);

  assert.deepEqual(result.idle, ["x", "y"]);
  const [first, second] = await serverLog(ORIGIN_A, `${id}-idle`);
  const lived = first.closedAt - first.t;
  assert.ok(lived >= 1400 + 1000 - 20 && lived < 1600 + 1000 + 500, `closed after ${lived} ms`);
  assert.equal(second.lastEventId, "a");

  const backoff = await serverLog(ORIGIN_A, `${id}-backoff`);
  assert.equal(backoff.length, 4);
  const windows = [300, 600, 1000];
  backoff.slice(1).forEach((e, k) => {
    const gap = e.t - (backoff[k].closedAt ?? backoff[k].t);
    assert.ok(gap >= -5 && gap <= windows[k] + 100, `reconnect ${k}: ${gap} ms (window ${windows[k]})`);
  });

  const breaker = await serverLog(ORIGIN_A, `${id}-breaker`);
  assert.equal(breaker.length, 3, "nothing sent while the breaker was open");
  assert.ok(breaker[2].t - breaker[1].t >= 1500, `the probe went ${breaker[2].t - breaker[1].t} ms after the second 503`);

  assert.deepEqual(result.noContent, { name: "EventStreamError", code: "no-content", status: 204 });
  assert.equal((await serverLog(ORIGIN_A, `${id}-204`)).length, 1);

  assert.equal(result.closedState, 2);
  const [closed] = await waitLog(ORIGIN_A, `${id}-close`, (log) => log[0]?.closedAt);
  assert.ok(closed.closedAt - result.closedAt < 300, `the server saw the close ${closed.closedAt - result.closedAt} ms later`);
}
