// The fire panel, the live timeline of attempts fed by onEvent, and the breaker lights fed by
// stats(), all of the page's one client.
import { CircuitOpenError } from "resilient-fetch";
import { $, GROUP, NAMES, ORIGINS, client, el, sleep } from "./page.js";
import { showPolicy } from "./policy.js";

const calls = [];
const demo = { fired: 0, settled: 0, posts: 0 };
window.__demo = demo;

// ---------------------------------------------------------------- breaker lights
export const lastTransition = { a: "", b: "" };
export function renderLights() {
  const box = $("#lights");
  box.replaceChildren(...Object.keys(ORIGINS).map((o) => {
    const state = client.breakerState(ORIGINS[o]);
    const stats = client.stats()[ORIGINS[o]];
    return el("div", { class: `light ${state}`, "data-origin": o, "data-state": state },
      el("span", { class: "bulb" }),
      el("strong", {}, NAMES[o]), " ", el("span", { class: "state" }, state),
      el("small", {}, stats
        ? ` · ${stats.attempts} attempts, ${stats.retries} retries, ${stats.shortCircuits} short-circuits, budget ${stats.budgetTokens}`
        : " · no calls yet", lastTransition[o] ? ` · last: ${lastTransition[o]}` : ""));
  }));
}

// ---------------------------------------------------------------- fire and the timeline
const t0 = performance.now();
const now = () => performance.now() - t0;

async function fireOne(index, origin, method, policy) {
  const call = { index, origin, method, start: now(), end: null, attempts: [], waits: [], result: "…", key: null };
  calls.push(call);
  if (calls.length > 60) calls.shift();
  const onEvent = (e) => {
    const t = now();
    if (e.type === "attemptStart") {
      call.attempts.push({ n: e.attempt, start: t, end: null, outcome: "pending" });
      if (e.idempotencyKey) call.key = e.idempotencyKey;
    } else if (e.type === "attemptEnd") {
      const a = call.attempts.find((x) => x.n === e.attempt);
      if (a) Object.assign(a, { end: t, outcome: e.outcome, status: e.status });
    } else if (e.type === "retry") {
      call.waits.push({ start: t, end: t + e.delayMs, reason: e.reason, retryAfter: e.retryAfter });
    } else if (e.type === "shortCircuit") {
      call.shortAt = t;
    } else if (e.type === "breakerTransition") {
      const o = Object.keys(ORIGINS).find((k) => ORIGINS[k] === e.origin);
      lastTransition[o] = `${e.from} → ${e.to}`;
      $("#transitions").prepend(el("li", {}, `${(t / 1000).toFixed(2)} s  ${NAMES[o]}: ${e.from} → ${e.to}`));
    }
    scheduleRender();
  };
  const body = method === "POST" ? JSON.stringify({ order: index }) : undefined;
  try {
    const res = await client.fetch(`${ORIGINS[origin]}/api?id=${GROUP}`, { method, body }, { ...policy, onEvent });
    call.result = String(res.status);
    call.ok = res.ok;
    await res.body?.cancel();
  } catch (e) {
    call.result = e instanceof CircuitOpenError ? "circuit open" : e.name;
    call.ok = false;
  }
  call.end = now();
  demo.settled++;
  scheduleRender();
}

export async function fire() {
  const policy = showPolicy();
  if (!policy) return;
  const n = Math.min(200, Math.max(1, Number($("#fire-n").value) || 1));
  const method = $("#fire-method").value;
  const origin = $("#fire-origin").value;
  const pending = [];
  for (let i = 0; i < n; i++) {
    demo.fired++;
    if (method === "POST") demo.posts++;
    pending.push(fireOne(demo.fired, origin, method, policy));
    await sleep(40);
  }
  await Promise.all(pending);
  await showEffects();
}

async function showEffects() {
  if (demo.posts === 0) return;
  const counts = await Promise.all(Object.values(ORIGINS).map(async (o) => {
    const [log, effects] = await Promise.all([
      (await fetch(`${o}/log?id=${GROUP}`)).json(),
      (await fetch(`${o}/effects?id=${GROUP}`)).json(),
    ]);
    return { attempts: log.filter((r) => r.method === "POST").length, effects: effects.effects };
  }));
  const attempts = counts.reduce((s, c) => s + c.attempts, 0);
  const effects = counts.reduce((s, c) => s + c.effects, 0);
  const p = $("#effects");
  p.dataset.logical = String(demo.posts);
  p.dataset.attempts = String(attempts);
  p.dataset.effects = String(effects);
  const keys = new FormData($("#policy-form")).get("idempotency") === "on";
  const open = Object.keys(ORIGINS).filter((o) => client.breakerState(ORIGINS[o]) !== "closed");
  let why;
  if (attempts === 0 && open.length > 0) {
    why = ` — nothing reached the backend: the breaker of ${open.map((o) => NAMES[o]).join(" and ")} is open, so calls`
      + " fail at once until its cooldown ends. Press \"Reset breakers\" or wait, then fire again.";
  } else if (!keys) {
    why = " — idempotency keys are off: a POST whose answer was lost is not repeated (it could charge twice),"
      + " so some calls fail instead of being retried.";
  } else if (effects === demo.posts) {
    why = " — exactly once each, thanks to the Idempotency-Key: retries carry the same key, the backend applies it once.";
  } else {
    why = " — calls that never reached the backend (an open breaker, a spent budget) were not applied.";
  }
  p.textContent = `POST: ${demo.posts} logical calls, ${attempts} attempts reached the backend, ${effects} charges applied${why}`;
}

let renderQueued = false;
function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => { renderQueued = false; renderTimeline(); renderLights(); });
}

export function renderTimeline() {
  const box = $("#timeline");
  if (calls.length === 0) { box.replaceChildren(el("p", { class: "muted" }, "Fire some requests.")); return; }
  const from = Math.min(...calls.map((c) => c.start));
  const to = Math.max(now(), ...calls.map((c) => c.end ?? now()));
  const span = Math.max(to - from, 1);
  const pct = (t) => `${(((t - from) / span) * 100).toFixed(2)}%`;
  const width = (a, b) => `${Math.max(((b - a) / span) * 100, 0.3).toFixed(2)}%`;
  const rows = calls.map((c) => {
    const track = el("div", { class: "track" });
    for (const w of c.waits) {
      track.append(el("div", { class: "bar wait", style: `left:${pct(w.start)};width:${width(w.start, Math.min(w.end, c.end ?? w.end))}`,
        title: `backoff ${Math.round(w.end - w.start)} ms after ${w.reason}${w.retryAfter ? " (Retry-After)" : ""}` }));
    }
    for (const a of c.attempts) {
      const end = a.end ?? now();
      const kind = a.outcome === "pending" ? "pending" : a.outcome === "response" ? (a.status < 400 ? "ok" : "fail")
        : a.outcome === "timeout" ? "timeout" : a.outcome === "networkError" ? "neterr" : "fail";
      track.append(el("div", { class: `bar ${kind}`, style: `left:${pct(a.start)};width:${width(a.start, end)}`,
        title: `attempt ${a.n}: ${a.outcome}${a.status ? " " + a.status : ""}, ${Math.round(end - a.start)} ms` }));
    }
    if (c.shortAt !== undefined) {
      track.append(el("div", { class: "bar short", style: `left:${pct(c.shortAt)};width:0.6%`,
        title: "short-circuited: the breaker is open, nothing was sent" }));
    }
    return el("div", { class: "trow" },
      el("span", { class: "label" }, `#${c.index} ${c.method} ${c.origin.toUpperCase()}`),
      track,
      el("span", { class: `result ${c.ok ? "ok" : c.end ? "bad" : ""}` }, c.result),
      el("code", { class: "key", title: "Idempotency-Key" }, c.key ? c.key.slice(0, 8) + "…" : ""));
  });
  // The time axis: a row of its own (not a call's .trow), seconds since the oldest call shown.
  const axis = el("div", { class: "taxis" }, el("span", { class: "label" }, "time"),
    el("div", { class: "track" },
      ...[0, 0.25, 0.5, 0.75, 1].map((f) => el("span", { class: "tick", style: `left:${(f * 100).toFixed(0)}%` },
        `${((span * f) / 1000).toFixed(2)} s`))));
  box.replaceChildren(axis, ...rows.reverse());
}
