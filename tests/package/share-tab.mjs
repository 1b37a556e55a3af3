// builds: full (a capability of resilient-fetch/full: tests/package/run.mjs)
// One "tab" of the shared-health proof (share.test.mjs runs it in Node worker_threads,
// browser-share.test.mjs in Chromium pages): a client sending a GET every `everyMs` until
// `stopAt` (wall clock), keeping when its breaker changed state. It imports nothing: the
// caller hands it the package's API.
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs the tab; resolves with { opened, closed (wall-clock ms of its transitions to open
 * and to closed), moves (every transition: { to, at }), calls (each call: { at, when it
 * began, sent: false when its breaker refused it, true when it went to the origin }), sent,
 * shortCircuits, failed, ok, state (its breaker's at the end) }.
 */
export async function runTab(api, { url, share, cooldownMs, everyMs = 50, startAt = Date.now(), stopAt }) {
  const opened = [], closed = [], moves = [], calls = [];
  const client = new api.ResilientClient({
    ...(share ? { share } : {}),
    retry: false,
    timeoutMs: 2000,
    // Five failures in a row open it (the site's row, when shared); with the failure-rate rule
    // the rate is the site's too, so a busy site needs as many failures as its successes.
    breaker: { mode: "consecutive", failureThreshold: 5, cooldownMs },
    onEvent: (e) => {
      if (e.type !== "breakerTransition") return;
      moves.push({ to: e.to, at: Date.now() });
      if (e.to === "open") opened.push(Date.now());
      if (e.to === "closed") closed.push(Date.now());
    },
  });
  const counts = { sent: 0, shortCircuits: 0, failed: 0, ok: 0 };
  const pending = [];
  await sleep(Math.max(0, startAt - Date.now()));
  while (Date.now() < stopAt) {
    counts.sent++;
    const call = { at: Date.now(), sent: true };
    calls.push(call);
    pending.push(client.fetch(url).then(
      async (r) => { await r.text(); counts[r.ok ? "ok" : "failed"]++; },
      (e) => { if (e?.name === "CircuitOpenError") { call.sent = false; counts.shortCircuits++; } else counts.failed++; },
    ));
    await sleep(everyMs);
  }
  await Promise.all(pending);
  const state = client.breakerState(url);
  client.free();
  return { opened, closed, moves, calls, ...counts, state };
}

/**
 * Date.now() counts whole ms and a breaker's clock is performance.now(): two readings of one
 * moment differ by up to this much. It is the only slack the causes below are given.
 */
export const CLOCK_MS = 5;

/**
 * What the clients of one share name (`members`: each { name, moves, calls } as runTab keeps
 * them, and `log`, the fault server's log of its own id, every request it sent) did through an
 * outage [from, from + ms): each sent call matched to its request in its log (the earliest
 * unmatched one that arrived after the call began); the fleet's probes, in the order the origin
 * received them: the calls a member's breaker let through half-open (each of its moves to
 * half-open after its opening and before its close is one: the first request of it that reached
 * the origin after that move); and strays: what a member sent besides, after its breaker first
 * opened and before it closed (for sure: the call began after the one, its request reached the
 * origin before the other).
 */
export function fleetVerdict({ members, from, ms, cooldownMs = 0 }) {
  const unmatched = [], probes = [], strays = [];
  const per = members.map((m) => {
    const entries = [...m.log].sort((a, b) => a.t - b.t), used = new Set();
    const opened = m.moves.find((x) => x.to === "open")?.at ?? Infinity;
    const closedAt = m.moves.find((x) => x.to === "closed" && x.at > opened)?.at ?? Infinity;
    const sent = [];
    for (const call of m.calls.filter((c) => c.sent).sort((a, b) => a.at - b.at)) {
      const i = entries.findIndex((e, j) => !used.has(j) && e.t >= call.at - CLOCK_MS);
      if (i < 0) { unmatched.push({ member: m.name, at: call.at }); continue; }
      used.add(i);
      sent.push({ at: call.at, entry: entries[i] });
    }
    const taken = new Set();
    // The half-open moves from the first opening to the close after it, by their order: a probe
    // answered within the clock's millisecond moves half-open and closed at the same time.
    const first = m.moves.findIndex((x) => x.to === "open");
    const last = m.moves.findIndex((x, i) => i > first && x.to === "closed");
    const probing = m.moves.filter((x, i) => x.to === "half-open" && first >= 0 && i > first && (last < 0 || i < last));
    for (const h of probing) {
      const k = sent.findIndex((c, j) => !taken.has(j) && c.entry.t >= h.at - CLOCK_MS);
      if (k >= 0) { taken.add(k); probes.push({ member: m.name, at: sent[k].at, ...sent[k].entry }); }
    }
    for (const [k, c] of sent.entries()) {
      if (!taken.has(k) && c.at > opened && c.entry.t < closedAt - CLOCK_MS) strays.push({ member: m.name, at: c.at, t: c.entry.t });
    }
    const during = m.log.filter((e) => e.t >= from && e.t < from + ms).length;
    return { name: m.name, opened, closedAt, during, refused: m.calls.filter((c) => !c.sent).map((c) => c.at), moves: m.moves };
  });
  probes.sort((a, b) => a.t - b.t);
  const firstOpen = Math.min(...per.map((m) => m.opened));
  // What the origin received from a cooldown after the first opening to the outage's end: the
  // probing, past the trip (which lasts until each member has heard, as fast as the machine lets
  // notes cross).
  const probing = members.reduce((n, m) => n + m.log.filter((e) => e.t >= firstOpen + cooldownMs - CLOCK_MS && e.t < from + ms).length, 0);
  return { per, probes, strays, unmatched, firstOpen, probing, count: per.reduce((n, m) => n + m.during, 0) };
}

/**
 * How long past its cooldown a leader may be before its followers, a cooldown behind it, may
 * reach their own until first and probe on their own: the refresh interval of docs/edge.md (a
 * client refreshes its view at most every 250 ms while an origin is troubled). Across tabs a
 * note takes milliseconds, so there it is generous.
 */
export const LATE_MS = 250;

/**
 * The promises of shared health (docs/sharing.md, docs/edge.md), each read from the members'
 * own event times and the origin's log, none from a second run or a machine's speed:
 * - no member sends after it heard the open breaker but the fleet's probes (its breaker's
 *   half-open calls), and the first probe comes a cooldown after the first opening;
 * - one probe per cooldown: each at least `cooldownMs` after the answer to the one before;
 *   except when the leader was late (its probe more than a cooldown + LATE_MS after the answer
 *   before it): then the followers, a cooldown behind it, may each probe once ("the others
 *   probe one cooldown after it would have, each once"), two cooldowns after the answer
 *   before the late probe at the soonest;
 * - the leader sends its probe with its first call once its cooldown has run (none of its calls
 *   refused after that and before the fleet's next probe), and the fleet kept probing;
 * - the first probe that succeeds closes every member (each closes after its answer), and no
 *   member probes a cooldown after it (one that had not heard would).
 * `assert` is node:assert/strict (handed in: this module also runs in pages); `diagnostic`
 * gets the figures. Returns the verdict.
 */
export function checkFleet({ assert, diagnostic, verdict, cooldownMs, detail: more = "" }) {
  const { per, probes, unmatched, firstOpen } = verdict;
  // What a failure shows first, in ms from the fleet's first opening: each probe [member, its
  // call began, reached the origin, answered, status], and each member's moves.
  const rel = (t) => (Number.isFinite(t) ? t - firstOpen : null);
  const detail = JSON.stringify({
    probes: probes.map((p) => [p.member, rel(p.at), rel(p.t), rel(p.answered), p.status]),
    moves: Object.fromEntries(per.map((m) => [m.name, m.moves.map((x) => `${x.to} ${rel(x.at)}`).join(", ")])),
  }) + ` ${String(more).slice(0, 1500)}`;
  const r = probes.findIndex((p) => p.status === 200), recovery = probes[r];
  const gaps = probes.slice(1).map((p, i) => p.t - probes[i].answered);
  diagnostic?.(`${verdict.count} requests during the outage; ${probes.length} probes (${probes.map((p) => p.member).join(" ")}), ` +
    `each ${gaps.join(" ")} ms after the answer before it; closed ${per.map((m) => m.closedAt - recovery?.answered).join(" ")} ms after the successful one`);
  assert.deepEqual(unmatched, [], `every call a member sent is in the origin's log: ${detail}`);
  assert.ok(per.every((m) => Number.isFinite(m.opened)), `every member's breaker opened: ${detail}`);
  assert.deepEqual(verdict.strays.map((x) => [x.member, rel(x.at), rel(x.t)]), [],
    `no member sent after it heard the open breaker but its probes: ${detail}`);
  assert.ok(probes.length >= 3, `the fleet kept probing through the outage (a stuck breaker sends none): ${detail}`);
  assert.ok(probes[0].t >= firstOpen + cooldownMs - CLOCK_MS,
    `no member sent after it heard the open breaker, before the first cooldown ran (${probes[0].t - firstOpen} ms after the first opening): ${detail}`);
  // Each probe on time, or one of the followers' round after a late leader.
  const fallback = new Set(); // indexes of the followers' probes
  // { from: the answer before the late probe (the first opening, for the first probe), members: who probed in it }
  let round = probes[0].t - firstOpen > cooldownMs + LATE_MS ? { from: firstOpen, members: new Set([probes[0].member]) } : null;
  for (let k = 1; k < probes.length; k++) {
    const gap = probes[k].t - probes[k - 1].answered;
    if (gap >= cooldownMs - CLOCK_MS) {
      round = gap > cooldownMs + LATE_MS ? { from: probes[k - 1].answered, members: new Set([probes[k].member]) } : null;
      continue;
    }
    assert.ok(round && probes[k].t >= round.from + 2 * cooldownMs - CLOCK_MS && !round.members.has(probes[k].member),
      `one probe per cooldown: probe ${k} went ${gap} ms after the answer to the one before` +
      (round ? ` (a follower's, after a late leader, but not two cooldowns after the answer before it, or its second)` : ` (and no leader was late)`) +
      `: ${detail}`);
    round.members.add(probes[k].member);
    fallback.add(k);
  }
  // The leader probes with its first call once its cooldown has run: it reopened on its
  // probe's answer (at `reopened`, its own event), and refused nothing after a cooldown from
  // there. (Around a followers' round the leader is settled anew: not checked there.)
  assert.ok(recovery, `a probe succeeded: ${detail}`);
  for (let i = 1; i <= r; i++) {
    if (fallback.has(i) || fallback.has(i + 1) || fallback.has(i - 1)) continue;
    const prev = probes[i - 1], leader = per.find((m) => m.name === prev.member);
    const reopened = leader.moves.find((x) => x.to === "open" && x.at >= prev.answered - CLOCK_MS)?.at;
    assert.ok(reopened !== undefined, `${leader.name} reopened on its probe's answer: ${detail}`);
    const idle = leader.refused.filter((at) => at > reopened + cooldownMs + CLOCK_MS && at < probes[i].at);
    assert.deepEqual(idle, [], `${leader.name} refused calls after its cooldown had run instead of probing: ${detail}`);
  }
  assert.ok(probes.slice(r + 1).every((_, j) => fallback.has(r + 1 + j)),
    `after the successful probe only a followers' round (a late leader's): no member probed a cooldown after it: ${detail}`);
  for (const m of per) {
    assert.ok(m.closedAt >= recovery.answered - CLOCK_MS && Number.isFinite(m.closedAt),
      `${m.name} closed on the successful probe's answer (${m.closedAt - recovery.answered} ms after it): ${detail}`);
  }
  return verdict;
}
