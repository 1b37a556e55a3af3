// builds: full (a capability of resilient-fetch/full: tests/package/run.mjs)
// One "tab" of the shared-health proof (share.test.mjs runs it in Node worker_threads,
// browser-share.test.mjs in Chromium pages): a client sending a GET every `everyMs` until
// `stopAt` (wall clock), keeping when its breaker changed state. It imports nothing: the
// caller hands it the package's API.
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs the tab; resolves with { opened, closed (wall-clock ms of its transitions to open
 * and to closed), sent, shortCircuits, failed, ok, state (its breaker's at the end) }.
 */
export async function runTab(api, { url, share, cooldownMs, everyMs = 50, startAt = Date.now(), stopAt }) {
  const opened = [], closed = [];
  const client = new api.ResilientClient({
    ...(share ? { share } : {}),
    retry: false,
    timeoutMs: 2000,
    // Five failures in a row open it (the site's row, when shared); with the failure-rate rule
    // the rate is the site's too, so a busy site needs as many failures as its successes.
    breaker: { mode: "consecutive", failureThreshold: 5, cooldownMs },
    onEvent: (e) => {
      if (e.type === "breakerTransition" && e.to === "open") opened.push(Date.now());
      if (e.type === "breakerTransition" && e.to === "closed") closed.push(Date.now());
    },
  });
  const counts = { sent: 0, shortCircuits: 0, failed: 0, ok: 0 };
  const pending = [];
  await sleep(Math.max(0, startAt - Date.now()));
  while (Date.now() < stopAt) {
    counts.sent++;
    pending.push(client.fetch(url).then(
      async (r) => { await r.text(); counts[r.ok ? "ok" : "failed"]++; },
      (e) => { counts[e?.name === "CircuitOpenError" ? "shortCircuits" : "failed"]++; },
    ));
    await sleep(everyMs);
  }
  await Promise.all(pending);
  const state = client.breakerState(url);
  client.free();
  return { opened, closed, ...counts, state };
}

/**
 * What the server's log of the shared tabs (`shared`) and of one tab alone (`alone`) says
 * of an outage [from, from + ms) with `cooldownMs`: requests during it, the gaps between
 * the shared tabs' requests once their breakers had opened, and the successful probe.
 */
export function judge({ shared, alone, from, ms, firstOpen }) {
  const during = (log) => log.filter((e) => e.t >= from && e.t < from + ms);
  const sharedDuring = during(shared);
  // Requests sent once a breaker had opened (the burst before it is the trip itself).
  const probes = sharedDuring.filter((e) => e.t > firstOpen + 20).map((e) => e.t);
  const gaps = probes.slice(1).map((t, i) => t - probes[i]);
  const recovery = shared.find((e) => e.t >= from + ms);
  return { sharedCount: sharedDuring.length, aloneCount: during(alone).length, probes, gaps, recovery };
}

/**
 * The proof's claims (issue: shared origin health), checked with `assert` (node:assert/strict,
 * handed in: this module also runs in pages): at most 1.2× the lone tab's requests during the
 * outage, one probe per cooldown, every tab closed within 200 ms of the successful probe.
 * `diagnostic` gets the figures.
 */
export function checkProof({ assert, diagnostic, verdict, tabs, cooldownMs, detail }) {
  diagnostic(`during the outage: shared ${verdict.sharedCount} requests, alone ${verdict.aloneCount}; ` +
    `${verdict.probes.length} probes, gaps ${verdict.gaps.join(" ")} ms; closed ` +
    `${tabs.map((x) => x.closed.at(-1) - verdict.recovery?.t).join(" ")} ms after the probe`);
  assert.ok(verdict.aloneCount >= 10, `the lone tab saw the outage: ${detail}`);
  assert.ok(verdict.sharedCount <= 1.2 * verdict.aloneCount,
    `shared ${verdict.sharedCount} vs alone ${verdict.aloneCount}: ${detail}`);
  assert.ok(verdict.probes.length >= 7, `probes went on through the outage: ${detail}`);
  assert.ok(verdict.gaps.every((g) => g >= 0.9 * cooldownMs && g <= 1.6 * cooldownMs), `one probe per cooldown: ${detail}`);
  assert.equal(verdict.recovery?.status, 200, detail);
  for (const x of tabs) {
    assert.equal(x.state, "closed", detail);
    const closedAt = x.closed.at(-1);
    assert.ok(closedAt >= verdict.recovery.t && closedAt - verdict.recovery.t <= 200,
      `closed ${closedAt - verdict.recovery.t} ms after the probe: ${detail}`);
  }
}
