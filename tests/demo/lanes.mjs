// What both demo tests share: opening the page in headless Chromium, and the lanes that run
// the same against the local Node backend (demo.test.mjs) and the service worker's mock
// (static.test.mjs).
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { CLOCK_MS, checkFleet, fleetVerdict } from "../package/share-tab.mjs";

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
// The sizes the page is read at: a laptop's window and a phone's.
export const WIDE = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };
export const OUT = process.env.RF_OUT || path.join(root, "test-output");
const tools = createRequire(path.join(process.env.RF_TOOLS_DIR || path.join(root, "tools"), "package.json"));

/** Headless Chromium and a page of the demo at `url`, ready (window.__demoReady). */
export async function openDemo(url, timeout = 20000) {
  const { chromium } = tools("playwright-core");
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"],
  });
  const page = await browser.newPage({ viewport: WIDE });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(url);
  await page.waitForFunction(() => window.__demoReady === true, null, { timeout })
    .catch((e) => { throw new Error(`${e.message}\npage errors: ${errors.join("\n")}`); });
  return { browser, page };
}

/**
 * The page's panels in DOM order: the lane number its heading starts with ("3 · Fire" → 3; none for a
 * pane that belongs to the lane before it, such as the timeline), its id, and its box on the page.
 */
const panels = (page) => page.evaluate(() => [...document.querySelectorAll("main > section")].map((s) => {
  const r = s.getBoundingClientRect();
  const n = /^(\d+) ·/.exec(s.querySelector("h2")?.textContent.trim() ?? "");
  return { id: s.id, lane: n ? Number(n[1]) : null, x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height };
}));

/** One PNG per lane in OUT: its numbered panel and the panes that follow it (lane 3: the fire panel and the timeline). */
export async function shootLane(page, prefix, lane) {
  const all = await panels(page);
  const first = all.findIndex((p) => p.lane === lane);
  assert.ok(first >= 0, `no panel headed "${lane} ·"`);
  let end = first + 1;
  while (end < all.length && all[end].lane === null) end++;
  const parts = all.slice(first, end);
  const x = Math.min(...parts.map((p) => p.x)), y = Math.min(...parts.map((p) => p.y));
  const clip = { x, y, width: Math.max(...parts.map((p) => p.x + p.width)) - x, height: Math.max(...parts.map((p) => p.y + p.height)) - y };
  await page.screenshot({ path: path.join(OUT, `${prefix}-lane-${String(lane).padStart(2, "0")}.png`), fullPage: true, clip });
}

/**
 * The page as a newcomer reads it, at the viewport's size: every panel but the timeline is a
 * numbered lane, the numbers run 1, 2, 3 … in DOM order and on the screen (top to bottom, left to
 * right in a row), and the timeline is the pane right after the fire panel: beside it on a wide
 * screen (and on screen together with the "Fire requests" button), directly below it on a narrow one,
 * with nothing wider than the screen. Run it once calls were fired: an empty timeline is one line.
 */
async function checkLayout(page, { width }) {
  const all = await panels(page);
  const at = (id) => all.find((p) => p.id === id);
  assert.deepEqual(all.filter((p) => p.lane === null).map((p) => p.id), ["timeline-panel"], "panels without a lane number");
  const lanes = all.filter((p) => p.lane !== null);
  assert.deepEqual(lanes.map((p) => p.lane), lanes.map((_, i) => i + 1), `lanes in DOM order: ${lanes.map((p) => `${p.lane} ${p.id}`)}`);
  for (let i = 1; i < lanes.length; i++) {
    const [a, b] = [lanes[i - 1], lanes[i]];
    assert.ok(b.y > a.y + 1 || (Math.abs(b.y - a.y) <= 1 && b.x > a.x), `lane ${b.lane} is not after lane ${a.lane} on screen: ${JSON.stringify([a, b])}`);
  }
  assert.equal(all[all.findIndex((p) => p.id === "fire") + 1].id, "timeline-panel", "the timeline is the pane after the fire panel");
  const fire = at("fire"), tl = at("timeline-panel");
  if (width > 900) { // demo.css: side by side above 900px
    const gap = tl.x - (fire.x + fire.width);
    assert.ok(gap >= 0 && gap <= 32 && Math.abs(tl.y - fire.y) <= 1, `timeline beside the fire panel: ${JSON.stringify({ fire, tl })}`);
    assert.ok(tl.width >= fire.width, "the timeline gets the wider column");
    // "Fire requests" scrolled into view (as a click does): the timeline's rows are on screen with it.
    await page.locator("#fire-button").scrollIntoViewIfNeeded();
    const seen = await page.evaluate(() => {
      const t = document.querySelector("#timeline").getBoundingClientRect();
      return { top: t.top, bottom: Math.min(t.bottom, innerHeight), height: innerHeight };
    });
    assert.ok(seen.top >= 0 && seen.bottom - seen.top >= 150, `the timeline on screen with the button: ${JSON.stringify(seen)}`);
  } else {
    const gap = tl.y - (fire.y + fire.height);
    assert.ok(gap >= 0 && gap <= 24 && Math.abs(tl.x - fire.x) <= 1, `timeline directly below the fire panel: ${JSON.stringify({ fire, tl })}`);
  }
  const scroll = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, screen: innerWidth }));
  assert.ok(scroll.page <= scroll.screen, `nothing wider than the screen: ${JSON.stringify(scroll)}`);
}

/** The layout checked at WIDE, then at PHONE (a full-page PNG of it in OUT when `phonePng` names one); back to WIDE. */
export async function layoutLane(page, phonePng) {
  await checkLayout(page, WIDE);
  await page.setViewportSize(PHONE);
  try {
    await checkLayout(page, PHONE);
    if (phonePng) await page.screenshot({ path: path.join(OUT, phonePng), fullPage: true });
  } finally {
    await page.setViewportSize(WIDE);
  }
}

export const light = (page, o) => page.locator(`.light[data-origin="${o}"]`).getAttribute("data-state");
export const settled = (page, n) => page.waitForFunction((n) => window.__demo.settled >= n, n, { timeout: 30000 });

/** Origin A in outage: its breaker light opens, B's stays closed and answers. */
export async function outageLane(page) {
  await page.check('.origin[data-origin="a"] input[name=outage]');
  await page.fill("#fire-n", "8");
  await page.selectOption("#fire-origin", "a");
  await page.click("#fire-button");
  await page.waitForSelector('.light[data-origin="a"][data-state="open"]', { timeout: 30000 });
  await settled(page, 8);
  assert.equal(await light(page, "a"), "open");
  assert.match(await page.locator("#transitions").textContent(), /Origin A: closed → open/);
  // Calls after the breaker opened were short-circuited: they show "circuit open".
  assert.match(await page.locator("#timeline").textContent(), /circuit open/);

  await page.fill("#fire-n", "3");
  await page.selectOption("#fire-origin", "b");
  await page.click("#fire-button");
  await settled(page, 11);
  assert.equal(await light(page, "b"), "closed");
  const results = await page.locator(".trow .result").allTextContents();
  assert.deepEqual(results.slice(0, 3), ["200", "200", "200"], "the healthy origin answers");
}

/** 10 POSTs through B at 40 % errors: the effects equal the logical calls, one key each. */
export async function postEffectsLane(page) {
  await page.locator('.origin[data-origin="b"] input[name=errorRate]').fill("40");
  await page.fill('input[name=failureThreshold]', "100"); // keep B's breaker out of this one
  await page.fill('input[name=maxAttempts]', "8");
  await page.fill('input[name=baseDelayMs]', "10");
  await page.selectOption("#fire-method", "POST");
  await page.selectOption("#fire-origin", "b");
  await page.fill("#fire-n", "10");
  await page.click("#fire-button");
  await page.waitForFunction(() => document.querySelector("#effects").dataset.logical === "10", null, { timeout: 30000 });
  const data = await page.locator("#effects").evaluate((p) => ({ ...p.dataset }));
  assert.equal(data.effects, data.logical, JSON.stringify(data));
  assert.ok(Number(data.attempts) >= 10, JSON.stringify(data));
  assert.match(await page.locator("#effects").textContent(), /exactly once/);
  const keys = await page.locator(".trow .key").allTextContents();
  assert.equal(keys.slice(0, 10).filter((k) => /^[0-9a-f]{8}…$/.test(k)).length, 10);
}

/** The rate-limit lane: the paced burst gets no 429, the unpaced one some. */
export async function pacedBurstLane(page) {
  await page.selectOption("#pace-origin", "b");
  await page.locator('.origin[data-origin="b"] input[name=errorRate]').fill("0");
  await page.click("#pace-button");
  await page.waitForFunction(() => document.querySelector("#pace-summary").dataset.paced429 !== undefined, null,
    { timeout: 30000 });
  const data = await page.locator("#pace-summary").evaluate((p) => ({ ...p.dataset }));
  assert.equal(data.paced429, "0", JSON.stringify(data));
  assert.equal(data.paced200, "30", JSON.stringify(data));
  assert.ok(Number(data.unpaced429) > 0, JSON.stringify(data));
  assert.match(await page.locator("#pace-summary").textContent(), /With pacing: 30 × 200, 0 × 429/);
}

/**
 * The retry-storm chart against origin A in outage: requests per logical call for plain fetch
 * (1), a naive loop of 3 retries (4) and resilientFetch (far fewer), each within `slack` (a
 * browser may resend a request whose reused keep-alive socket was closed; a service worker sees
 * each request exactly once).
 */
export async function stormLane(page, slack) {
  // the storm uses the page's policy: back to a breaker that opens after 5 failures
  await page.fill('input[name=failureThreshold]', "5");
  await page.fill('input[name=maxAttempts]', "3");
  await page.selectOption("#storm-origin", "a");
  await page.click("#storm-button");
  await page.waitForFunction(() => document.querySelector("#storm-summary").textContent.length > 0, null, { timeout: 30000 });
  const summary = await page.locator("#storm-summary").textContent();
  const perCall = Object.fromEntries([...summary.matchAll(/([^:·]+): ([\d.]+) requests per logical call/g)]
    .map((m) => [m[1].trim(), Number(m[2])]));
  assert.ok(Math.abs(perCall["plain fetch"] - 1) <= slack, summary);
  assert.ok(Math.abs(perCall["naive retry ×3"] - 4) <= 2 * slack, summary);
  assert.ok(perCall.resilientFetch < 0.5, summary);
  assert.ok(await page.locator("#storm-chart rect").count() > 10, "no bars drawn");
}

/** Lane 7: two frames sharing breakers: the right one opens with the left without sending; one probe closes both. */
export async function shareLane(page) {
  const tabs = () => page.evaluate(() => Object.fromEntries(["left", "right"].map((n) =>
    [n, { ...document.querySelector(`#tab-${n}`).contentWindow.__tab }])));
  await page.waitForFunction(() => [...document.querySelectorAll(".tabs iframe")].every((f) => f.contentWindow.__tabReady),
    null, { timeout: 20000 });
  await page.click("#share-break");
  await page.waitForFunction(() => document.querySelector("#tab-right").contentWindow.__tab.state === "open", null, { timeout: 15000 });
  await page.waitForFunction(() => document.querySelector("#tab-left").contentWindow.__tab.refused === 2, null, { timeout: 15000 });
  let seen = await tabs();
  assert.deepEqual({ left: [seen.left.sent, seen.left.state], right: [seen.right.sent, seen.right.state] },
    { left: [3, "open"], right: [0, "open"] }, "the right tab's breaker opened with the left's, nothing sent");
  await page.click("#share-heal");
  await page.waitForFunction(() => ["left", "right"].every((n) => document.querySelector(`#tab-${n}`).contentWindow.__tab.state === "closed"),
    null, { timeout: 15000 });
  seen = await tabs();
  assert.deepEqual([seen.left.sent, seen.right.sent], [4, 0], "one probe from the left tab closed both");
}

/** Lane 8: hedging cuts the slow tail (a stub origin in the page) for a few extra requests. */
export async function hedgeLane(page) {
  await page.click("#hedge-button");
  await page.waitForFunction(() => document.querySelector("#hedge-summary").dataset.onP99 !== undefined, null,
    { timeout: 30000 });
  const d = await page.locator("#hedge-summary").evaluate((p) => ({ ...p.dataset }));
  assert.ok(Number(d.offP99) >= 1000, `without hedging the slow answers set p99: ${JSON.stringify(d)}`);
  assert.ok(Number(d.onP99) < 200, `with hedging p99 is far lower: ${JSON.stringify(d)}`);
  assert.ok(Number(d.onRequests) <= 440 && Number(d.onAborted) >= 5, JSON.stringify(d));
  assert.equal(await page.locator("#hedge-chart polyline").count(), 2);
}

/**
 * Lane 13: the origin down after one good answer; the kept answer is served for each failure, and
 * without sending once the breaker is open.
 */
export async function staleLane(page) {
  await page.click("#stale-button");
  await page.waitForFunction(() => document.querySelector("#stale-summary").dataset.served !== undefined, null,
    { timeout: 15000 });
  const d = await page.locator("#stale-summary").evaluate((p) => ({ ...p.dataset }));
  assert.equal(d.served, "5", JSON.stringify(d));
  assert.equal(d.whileOpen, "0", JSON.stringify(d));
  assert.equal(d.reasons, ",status,breakerOpen,breakerOpen,breakerOpen,breakerOpen", JSON.stringify(d));
}

/**
 * Lane 12: slow answers open a breaker with slowCallMs ("slowCallRate"; calls after it fail fast),
 * and each failed probe doubles the cooldown up to maxCooldownMs (each opening's cooldown as the
 * lane read it, from a call refused right then), so the dead origin gets far fewer probes.
 */
export async function breakerLane(page) {
  await page.click("#breaker-button");
  await page.waitForFunction(() => document.querySelector("#breaker-cooldown").dataset.growing !== undefined, null,
    { timeout: 30000 });
  const slow = await page.locator("#breaker-slow").evaluate((p) => ({ ...p.dataset }));
  assert.equal(slow.reason, "slowCallRate", JSON.stringify(slow));
  assert.ok(Number(slow.answered) >= 4 && Number(slow.answered) + Number(slow.refused) === 8, JSON.stringify(slow));
  assert.ok(Number(slow.refused) >= 1, "calls after it opened failed fast");
  const d = await page.locator("#breaker-cooldown").evaluate((p) => ({ ...p.dataset }));
  const growing = JSON.parse(d.growing);
  assert.equal(growing[0], 100, "the opening itself waits cooldownMs");
  // Each reopening's cooldown in the upper half of the doubled one, capped at 1600.
  growing.slice(1).forEach((ms, i) => {
    const doubled = Math.min(1600, 100 * 2 ** (i + 1));
    assert.ok(ms >= Math.max(100, doubled / 2) - 1 && ms <= doubled, `cooldown ${i + 1}: ${ms} (${growing})`);
  });
  // A fixed 100 ms cooldown probes about every 100 ms; the growing one a handful of times.
  assert.ok(Number(d.growingSent) * 3 < Number(d.fixedSent), JSON.stringify(d));
}

/** Lane 9: the outbox keeps 5 POSTs while origin B is down and delivers each once when it is back. */
export async function outboxLane(page) {
  const data = () => page.locator("#outbox-summary").evaluate((p) => ({ ...p.dataset }));
  await page.click("#outbox-down");
  await page.waitForFunction(() => document.querySelector("#outbox-summary").dataset.kept === "5", null, { timeout: 30000 });
  let d = await data();
  assert.deepEqual([d.waiting, d.effects], ["5", "0"], JSON.stringify(d));
  assert.equal(await page.locator("#outbox-list li").count(), 5);
  await page.click("#outbox-up");
  await page.waitForFunction(() => document.querySelector("#outbox-summary").dataset.waiting === "0", null, { timeout: 30000 });
  d = await data();
  assert.deepEqual([d.delivered, d.effects], ["5", "5"], JSON.stringify(d));
  assert.match(await page.locator("#outbox-summary").textContent(), /5 delivered, 0 waiting in IndexedDB; origin B applied 5 orders/);
}

/**
 * Lane 11: origin A down for 5 s under two fleets of five workerd isolates, one sharing an
 * OriginHealth object and one without: what origin A's log received from each (each isolate has
 * its own id in it), and every breaker opened and closed again. The promises, read from the
 * isolates' breaker events and origin A's log (when each request came and its answer went), with
 * the package tests' own check (tests/package/share-tab.mjs, checkFleet): from a cooldown after
 * the shared fleet's first opening, what it sends are probes, one per cooldown, each at least a
 * cooldown after the answer to the one before (or, after a late leader, the followers' one
 * round), and the first that succeeds closes every isolate, each after its answer. The fleet
 * without the object is the control: its isolates probe on their own, which the same check
 * refuses. The lane's driver runs in the demo server, so there are no per-call records: what an
 * isolate sent before the first cooldown ran (its calls until it heard, and requests still in
 * flight when it did: on a loaded machine the fleets' counts came out 139 and 159) is not
 * judged here; edge.test.mjs judges it per call. The counts' ratio is the package bench's
 * (bench/share.mjs).
 */
export async function edgeLane(page) {
  await page.locator("#edge").scrollIntoViewIfNeeded();
  const started = page.waitForResponse((r) => r.url().endsWith("/edge/run"));
  await page.click("#edge-button");
  const run = await (await started).json();
  await page.waitForFunction(() => document.querySelector("#edge-summary").dataset.done === "1", null, { timeout: 20000 });
  const d = await page.locator("#edge-summary").evaluate((p) => ({ ...p.dataset }));
  const [withCount, withoutCount] = [Number(d.withCount), Number(d.withoutCount)];
  const { a } = await (await fetch(new URL("backend.json", page.url()))).json();
  const report = await (await fetch(new URL("edge/report", page.url()))).json();
  const fleet = async (group) => {
    const logs = await Promise.all(run.urls[group].map(async (u) => (await fetch(`${a}/log?id=${new URL(u).searchParams.get("id")}`)).json()));
    const firstOpen = Math.min(...report[group].map((r) => r.moves.find((m) => m.to === "open")?.at ?? Infinity));
    // The requests from a cooldown after the first opening on stand for the isolates' calls
    // (no probe is due before it); each reached the origin after its isolate decided it.
    const members = logs.map((log, i) => ({ name: `${group}${i}`, moves: report[group][i].moves, log,
      calls: log.filter((e) => e.t >= firstOpen + run.cooldownMs - CLOCK_MS).map((e) => ({ at: e.t, sent: true })) }));
    return fleetVerdict({ members, from: run.from, ms: run.ms });
  };
  const shared = await fleet("shared"), plain = await fleet("plain");
  const detail = JSON.stringify({ d });
  assert.deepEqual([d.withOpened, d.withoutOpened, d.withClosed, d.withoutClosed], ["5", "5", "5", "5"],
    `every breaker opened and closed again: ${detail}`);
  checkFleet({ assert, verdict: shared, cooldownMs: run.cooldownMs, detail });
  assert.throws(() => checkFleet({ assert, verdict: plain, cooldownMs: run.cooldownMs }), /one probe per cooldown/,
    `without the object each isolate probes on its own: ${JSON.stringify(plain.probes.map((p) => [p.member, p.t - plain.firstOpen]))}`);
  assert.ok(withoutCount >= 5 * 5, `each isolate without the object sent its failures and probes: ${detail}`);
  assert.match(await page.locator("#edge-summary").textContent(),
    new RegExp(`origin A received ${withCount} requests from the 5 isolates sharing the object and ${withoutCount} from the 5 without it`));
  // Drawn from the same numbers: a tick per request received, the count per isolate beside it.
  const ticks = await page.locator("#edge-with line[stroke-width]").count() + await page.locator("#edge-without line[stroke-width]").count();
  assert.ok(ticks >= withCount + withoutCount, `${ticks} ticks`);
}

export async function eventsLane(page) {
  await page.click("#events-button");
  await page.waitForFunction(() => document.querySelector("#events-summary").dataset.ids !== undefined, null,
    { timeout: 30000 });
  const d = await page.locator("#events-summary").evaluate((p) => ({ ...p.dataset }));
  assert.equal(d.ids, Array.from({ length: 20 }, (_, i) => i + 1).join(" "), JSON.stringify(d));
  assert.equal(d.lastIds, "none,5,10,10,20", JSON.stringify(d));
  assert.equal(d.connections, "5", JSON.stringify(d));
  assert.equal(d.ending, "no-content", JSON.stringify(d));
  assert.equal(await page.locator("#events-strip span.drop").count(), 4);
}

/**
 * The failover lane: with failover no error reaches the caller while the primary is down (without
 * it some do), the backup answers meanwhile, and calls come back to the primary.
 */
export async function failoverLane(page) {
  await page.click("#failover-button");
  await page.waitForFunction(() => document.querySelector("#failover-summary").dataset.back !== undefined, null,
    { timeout: 30000 });
  const f = await page.locator("#failover-summary").evaluate((p) => ({ ...p.dataset }));
  assert.equal(f.errors, "0", JSON.stringify(f));
  assert.ok(Number(f.plainErrors) > 0, JSON.stringify(f));
  assert.ok(Number(f.backup) > 0 && f.back === "true", JSON.stringify(f));
}

/**
 * The resume lane: without resume the stream errors at the first break; with it the caller reads
 * the whole file (its SHA-256), each range asked for from where the bytes read ended.
 */
export async function resumeLane(page) {
  await page.click("#resume-button");
  await page.waitForFunction(() => document.querySelector("#resume-summary").dataset.same !== undefined, null,
    { timeout: 30000 });
  const r = await page.locator("#resume-summary").evaluate((p) => ({ ...p.dataset }));
  assert.deepEqual([r.bytes, r.same, r.error], [String(2 * 1024 * 1024), "true", ""], JSON.stringify(r));
  assert.equal(r.ranges, "all bytes=400000- bytes=1000000- bytes=1600000-", JSON.stringify(r));
  assert.deepEqual([r.plainBytes, r.plainError], ["400000", "TypeError"], JSON.stringify(r));
}
