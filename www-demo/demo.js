// The demo page: chaos controls for two local origins, an editable policy,
// a live timeline of attempts fed by onEvent, breaker lights fed by stats(),
// and a retry-storm comparison drawn from the backend's own request log.
import { ResilientClient, CircuitOpenError, QueuedError } from "resilient-fetch";

const $ = (sel, root = document) => root.querySelector(sel);
const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  node.append(...children);
  return node;
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** An SVG element with these attributes (and text). */
const node = (tag, attrs, text) => {
  const n = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, v);
  if (text !== undefined) n.textContent = text;
  return n;
};

// backend.json names the two origins. From scripts/demo.sh (serve.mjs) they are the local Node
// fault server's; in the static build (scripts/demo-static.sh) they are mock origins answered by
// the service worker it names, which must control this page before anything else is fetched.
const backend = await (await fetch("backend.json")).json();
if (backend.serviceWorker) await useServiceWorker(backend.serviceWorker);
const ORIGINS = { a: backend.a, b: backend.b };
const NAMES = { a: "Origin A", b: "Origin B" };
// One id per page load groups this page's requests in the backend's log.
const GROUP = `demo-${Date.now().toString(36)}`;

// One client for the page: it owns the breakers; each call passes the policy from the form.
const client = new ResilientClient();
const calls = [];
const demo = { fired: 0, settled: 0, posts: 0 };
window.__demo = demo;

// ---------------------------------------------------------------- the static build's backend
/** Shows why the page cannot go on, and stops it. */
function halt(message) {
  $("#status").textContent = message;
  $("#status").className = "error";
  throw new Error(message);
}

/**
 * Registers the mock backend's service worker (scope: this page's folder) and resolves once it
 * controls the page, so that the page's fetches to the mock origins reach it. It takes over at
 * its first activation (clients.claim); a page it does not control yet (a hard reload) asks it
 * to, then reloads once.
 */
async function useServiceWorker(script) {
  const fix = "Serve it over https:// or from localhost (127.0.0.1), in a normal window, or run ./scripts/demo.sh"
    + " for the demo with its local Node backend.";
  if (!("serviceWorker" in navigator)) {
    halt("This static demo answers its requests with a mock backend in a service worker, and this browser offers"
      + ` none here (service workers need a secure context and are off in some private windows). ${fix}`);
  }
  const sw = navigator.serviceWorker;
  try {
    await sw.register(script, { scope: "./" });
  } catch (e) {
    halt(`The mock backend's service worker (${script}) could not be registered: ${e.message}. ${fix}`);
  }
  const registration = await sw.ready;
  if (!sw.controller) {
    const controlled = new Promise((resolve) => sw.addEventListener("controllerchange", resolve, { once: true }));
    registration.active?.postMessage("claim");
    if (!await Promise.race([controlled.then(() => true), sleep(5000).then(() => false)])) {
      if (!sessionStorage.getItem("rf-demo-reloaded")) {
        sessionStorage.setItem("rf-demo-reloaded", "1");
        location.reload();
        await new Promise(() => {}); // the reload replaces this page
      }
      halt(`The mock backend's service worker is installed but does not control this page. Reload it. ${fix}`);
    }
  }
  sessionStorage.removeItem("rf-demo-reloaded");
  // The browser stops an idle worker, and its state (chaos settings, logs) with it: keep it awake.
  setInterval(() => sw.controller?.postMessage("ping"), 10000);
}

// ---------------------------------------------------------------- backend controls
async function putChaos(origin, patch) {
  const res = await fetch(`${ORIGINS[origin]}/chaos`, { method: "PUT", body: JSON.stringify(patch) });
  return res.json();
}

async function buildOriginControls(box) {
  const origin = box.dataset.origin;
  const chaos = await (await fetch(`${ORIGINS[origin]}/chaos`)).json();
  const rate = el("input", { type: "range", min: "0", max: "100", value: String(chaos.errorRate * 100), name: "errorRate" });
  const rateOut = el("output", {}, `${Math.round(chaos.errorRate * 100)} %`);
  const latency = el("input", { type: "number", min: "0", max: "10000", step: "50", value: String(chaos.latencyMs), name: "latencyMs" });
  const status = el("select", { name: "failStatus" },
    el("option", { value: "503" }, "503"), el("option", { value: "500" }, "500"),
    el("option", { value: "429" }, "429 + Retry-After: 1"));
  status.value = String(chaos.failStatus);
  const limit = el("input", { type: "number", min: "0", max: "1000", step: "1", value: String(chaos.rateLimit), name: "rateLimit" });
  const hang = el("input", { type: "checkbox", name: "hang" });
  const outage = el("input", { type: "checkbox", name: "outage" });
  hang.checked = chaos.hang;
  outage.checked = chaos.outage;
  const apply = () => {
    rateOut.textContent = `${rate.value} %`;
    box.classList.toggle("down", outage.checked);
    return putChaos(origin, {
      errorRate: Number(rate.value) / 100, latencyMs: Number(latency.value) || 0,
      failStatus: Number(status.value), hang: hang.checked, outage: outage.checked,
      rateLimit: Number(limit.value) || 0,
    });
  };
  for (const input of [rate, latency, status, limit, hang, outage]) input.addEventListener("input", apply);
  box.append(
    el("h3", {}, NAMES[origin], " ", el("code", {}, ORIGINS[origin])),
    el("label", {}, "error rate ", rate, rateOut),
    el("label", {}, "fail with ", status),
    el("label", {}, "added latency (ms) ", latency),
    el("label", {}, "rate limit (requests/s, 0 = none) ", limit),
    el("label", { class: "check" }, hang, " hang (never answer)"),
    el("label", { class: "check" }, outage, " full outage"),
  );
}

// ---------------------------------------------------------------- policy
function readPolicy() {
  const f = new FormData($("#policy-form"));
  const n = (k) => Number(f.get(k));
  return {
    timeoutMs: n("timeoutMs"),
    totalTimeoutMs: n("totalTimeoutMs"),
    retry: { maxAttempts: n("maxAttempts"), baseDelayMs: n("baseDelayMs"), maxDelayMs: n("maxDelayMs"), jitter: f.get("jitter") },
    breaker: { failureThreshold: n("failureThreshold"), cooldownMs: n("cooldownMs") },
    retryBudget: f.get("budget") === "on",
    idempotencyKey: f.get("idempotency") === "on",
  };
}

/** The library's error for `policy`, or null when it takes it. */
function policyError(policy) {
  try {
    new ResilientClient(policy).free();
    return null;
  } catch (e) {
    return `${e.name}: ${e.message}`;
  }
}

/**
 * Shows the policy and checks it with the library itself (invalid values name the field). The
 * library stops at the first bad field, so each field is also checked alone: every bad one is
 * listed (a rule between two fields, such as maxDelayMs ≥ baseDelayMs, shows with the whole).
 */
function showPolicy() {
  const policy = readPolicy();
  $("#policy-json").textContent = JSON.stringify(policy, null, 1);
  const box = $("#policy-error");
  if (policyError(policy) === null) {
    box.hidden = true;
    return policy;
  }
  const alone = Object.entries(policy).flatMap(([k, v]) => (v !== null && typeof v === "object"
    ? Object.entries(v).map(([k2, v2]) => ({ [k]: { [k2]: v2 } }))
    : [{ [k]: v }]));
  const errors = [...new Set(alone.map(policyError).filter((e) => e !== null))];
  if (errors.length === 0) errors.push(policyError(policy));
  box.hidden = false;
  box.replaceChildren(...errors.map((e) => el("span", { class: "policy-error" }, e, el("br"))));
  box.dataset.count = String(errors.length);
  return null;
}

// ---------------------------------------------------------------- rate limits
/** Waits for the start of the next whole second (the backend's rate-limit window). */
const nextWindow = () => sleep(1000 - (Date.now() % 1000) + 20);

/**
 * The same burst of GETs to an origin with a rate limit, without pacing and with it: the
 * backend's 429s are counted from the answers. With pacing, the first answer tells the
 * quota and the rest of the burst waits for the next window instead of being refused.
 */
async function paceBurst() {
  const button = $("#pace-button");
  const out = $("#pace-summary");
  button.disabled = true;
  const origin = $("#pace-origin").value;
  const n = 30;
  const url = `${ORIGINS[origin]}/api?id=${GROUP}-pace`;
  const before = await (await fetch(`${ORIGINS[origin]}/chaos`)).json();
  const limit = before.rateLimit || 10;
  await putChaos(origin, { rateLimit: limit });
  const count = (results) => ({
    ok: results.filter((r) => r === 200).length, refused: results.filter((r) => r === 429).length,
  });
  const burst = (c, k) => Promise.all(Array.from({ length: k }, () => c.fetch(url).then(async (r) => {
    await r.arrayBuffer();
    return r.status;
  }, (e) => e.name)));
  try {
    out.textContent = "without pacing…";
    await nextWindow();
    const plain = count(await burst(new ResilientClient({ rateLimit: false, retry: false, breaker: false }), n));
    out.textContent = "with pacing…";
    await nextWindow();
    let waits = 0;
    const paced = new ResilientClient({ retry: false, breaker: false, onEvent: (e) => { if (e.type === "rateLimitWait") waits++; } });
    const t = performance.now();
    const first = await burst(paced, 1);
    const rest = count([...first, ...(await burst(paced, n - 1))]);
    const took = ((performance.now() - t) / 1000).toFixed(1);
    out.textContent = `${n} GETs at once, the backend taking ${limit}/s. Without pacing: ${plain.ok} × 200, `
      + `${plain.refused} × 429. With pacing: ${rest.ok} × 200, ${rest.refused} × 429; ${waits} waits for the `
      + `next window (all answered within ${took} s).`;
    Object.assign(out.dataset, { unpaced429: String(plain.refused), paced429: String(rest.refused), paced200: String(rest.ok) });
  } finally {
    await putChaos(origin, { rateLimit: before.rateLimit });
    button.disabled = false;
  }
}

// ---------------------------------------------------------------- jitter and throttling
// Both lanes run the library against a stub fetch (the policy's `fetch` option): nothing leaves
// the page, so they work without any backend.
const JITTERS = ["none", "equal", "full", "decorrelated"];
const STUB = "https://stub.invalid/x";

/** 40 calls failing together, each retried once under each jitter mode: the waits drawn. */
async function compareJitter() {
  const button = $("#jitter-button");
  button.disabled = true;
  const waits = {};
  try {
    for (const jitter of JITTERS) {
      waits[jitter] = [];
      const stub = new ResilientClient({
        fetch: () => Promise.resolve(new Response("", { status: 503 })),
        retry: { maxAttempts: 2, baseDelayMs: 200, maxDelayMs: 2000, jitter },
        breaker: false, retryBudget: false, rateLimit: false,
        onEvent: (e) => { if (e.type === "retry") waits[jitter].push(e.delayMs); },
      });
      await Promise.all(Array.from({ length: 40 }, () => stub.fetch(STUB).then((r) => r.arrayBuffer())));
      stub.free();
    }
    drawJitter(waits);
    const spread = (w) => Math.max(...w) - Math.min(...w);
    $("#jitter-summary").textContent = JITTERS.map((j) => `${j}: waits ${Math.round(Math.min(...waits[j]))}–${
      Math.round(Math.max(...waits[j]))} ms (spread ${Math.round(spread(waits[j]))} ms)`).join(" · ");
    $("#jitter-summary").dataset.spreads = JSON.stringify(Object.fromEntries(JITTERS.map((j) => [j, spread(waits[j])])));
  } finally {
    button.disabled = false;
  }
}

function drawJitter(waits) {
  const svg = $("#jitter-chart");
  const max = Math.max(400, ...Object.values(waits).flat());
  const x = (ms) => 110 + (ms / max) * 590;
  const parts = [];
  JITTERS.forEach((j, row) => {
    const y = 22 + row * 36;
    parts.push(node("text", { x: 4, y: y + 4, "font-size": 12 }, j));
    parts.push(node("line", { x1: 110, x2: 700, y1: y, y2: y, stroke: "#ddd" }));
    for (const ms of waits[j]) parts.push(node("circle", { cx: x(ms), cy: y, r: 3.5, fill: "#1f6feb", "fill-opacity": 0.45 }));
  });
  for (const f of [0, 0.5, 1]) {
    parts.push(node("text", { x: x(max * f), y: 164, "font-size": 11, "text-anchor": "middle", fill: "#666" },
      `${Math.round(max * f)} ms`));
  }
  svg.replaceChildren(...parts);
}

/** 300 calls to an origin that accepts 1 in 5, without and with adaptive throttling. */
async function compareThrottle() {
  const button = $("#throttle-button");
  button.disabled = true;
  try {
    const run = async (throttle) => {
      let sent = 0, accepted = 0, refused = 0;
      const stub = new ResilientClient({
        fetch: () => {
          sent++;
          const ok = sent % 5 === 0;
          accepted += ok ? 1 : 0;
          return Promise.resolve(new Response("", { status: ok ? 200 : 503 }));
        },
        retry: false, breaker: false, rateLimit: false, throttle,
      });
      for (let i = 0; i < 300; i++) {
        await stub.fetch(STUB).then((r) => r.arrayBuffer(), (e) => { if (e.name === "ThrottledError") refused++; });
      }
      stub.free();
      return { sent, accepted, refused };
    };
    const off = await run(false);
    const on = await run(true);
    const per = (r) => (r.sent / Math.max(1, r.accepted)).toFixed(1);
    $("#throttle-summary").textContent = `Throttle off: ${off.sent} requests reached the origin, ${off.accepted} accepted `
      + `(${per(off)} per accepted one). Throttle on: ${on.sent} reached it, ${on.accepted} accepted (${per(on)} per `
      + `accepted one), ${on.refused} refused locally with ThrottledError.`;
    Object.assign($("#throttle-summary").dataset, { offSent: String(off.sent), onSent: String(on.sent), onRefused: String(on.refused) });
  } finally {
    button.disabled = false;
  }
}

// ---------------------------------------------------------------- hedged reads (the slow tail)
/**
 * 400 GETs, one every 5 ms, to a stub origin (nothing leaves the page) that answers in 2–5 ms
 * except every 50th request, which takes 1.5 s: without hedging, then with hedge: true (delay
 * "auto", the origin's p95 once 20 answers are known). The stub honours the attempt's signal,
 * as a real fetch does, so a hedge's loser is really cut off.
 */
async function compareHedge() {
  const button = $("#hedge-button");
  button.disabled = true;
  try {
    const run = async (hedge) => {
      let requests = 0, aborted = 0;
      const stub = new ResilientClient({
        hedge,
        fetch: (_input, init) => new Promise((resolve, reject) => {
          requests++;
          const ms = requests % 50 === 7 ? 1500 : 2 + Math.random() * 3;
          const timer = setTimeout(() => resolve(new Response("ok")), ms);
          init.signal.addEventListener("abort", () => { clearTimeout(timer); aborted++; reject(init.signal.reason); });
        }),
      });
      const latencies = [];
      const calls = [];
      for (let i = 0; i < 400; i++) {
        const start = performance.now();
        calls.push(stub.fetch(STUB).then((r) => r.text()).then(() => latencies.push(performance.now() - start)));
        await sleep(5);
      }
      await Promise.all(calls);
      stub.free();
      latencies.sort((a, b) => a - b);
      const at = (q) => latencies[Math.ceil(q * latencies.length) - 1];
      return { p50: at(0.5), p99: at(0.99), max: latencies.at(-1), requests, aborted, latencies };
    };
    const off = await run(false);
    const on = await run(true);
    drawHedge(off.latencies, on.latencies);
    const ms = (x) => `${Math.round(x)} ms`;
    $("#hedge-summary").textContent = `Without hedging: p50 ${ms(off.p50)}, p99 ${ms(off.p99)}, slowest ${ms(off.max)} `
      + `(${off.requests} requests). With hedge: true: p50 ${ms(on.p50)}, p99 ${ms(on.p99)}, slowest ${ms(on.max)}; `
      + `${on.requests} requests (${on.requests - 400} hedges, ${on.aborted} slow attempts aborted).`;
    Object.assign($("#hedge-summary").dataset, {
      offP99: String(off.p99), onP99: String(on.p99), onRequests: String(on.requests), onAborted: String(on.aborted),
    });
  } finally {
    button.disabled = false;
  }
}

/** Each call's latency, slowest last, without and with hedging (log scale, 1 ms .. 2 s). */
function drawHedge(off, on) {
  const svg = $("#hedge-chart");
  const x = (i, n) => 60 + (i / (n - 1)) * 640;
  const y = (ms) => 150 - (Math.log10(Math.max(1, ms)) / Math.log10(2000)) * 130;
  const line = (values, color) => node("polyline", {
    points: values.map((v, i) => `${x(i, values.length).toFixed(1)},${y(v).toFixed(1)}`).join(" "),
    fill: "none", stroke: color, "stroke-width": 2,
  });
  svg.replaceChildren(
    ...[1, 10, 100, 1000].map((ms) => node("text", { x: 5, y: y(ms) + 4, "font-size": 10 }, `${ms} ms`)),
    node("text", { x: 60, y: 168, "font-size": 10 }, "calls, fastest to slowest"),
    line(off, "var(--fail)"), line(on, "var(--ok)"),
    node("text", { x: 600, y: 20, "font-size": 11, fill: "var(--fail)" }, "no hedging"),
    node("text", { x: 600, y: 36, "font-size": 11, fill: "var(--ok)" }, "hedge: true"),
  );
}

// ---------------------------------------------------------------- shared breakers (two tabs)
/** Sets an origin's outage as its checkbox above would (the checkbox follows). */
async function setOutage(origin, down) {
  const box = $(`.origin[data-origin="${origin}"]`);
  const input = $("input[name=outage]", box);
  input.checked = down;
  input.dispatchEvent(new Event("input"));
  await putChaos(origin, { outage: down });
}
const setOutageA = (down) => setOutage("a", down);

async function shareBreak() {
  await setOutageA(true);
  $("#tab-left").contentWindow.postMessage("send", location.origin);
}

async function shareHeal() {
  await setOutageA(false);
  $("#tab-left").contentWindow.postMessage("probe", location.origin);
}

// ---------------------------------------------------------------- the outbox
// One outbox client for the page; its entries live in IndexedDB under this name, so a reload
// shows (and, once B answers, delivers) what an earlier load kept.
const OUTBOX_ID = "demo-outbox";
const outboxed = { kept: 0, delivered: 0, order: 0 };
const writer = new ResilientClient({
  outbox: { name: "demo-orders" },
  idempotencyKey: true, // the page and the origins are different origins
  retry: { maxAttempts: 2, baseDelayMs: 10 },
  breaker: false,
  onEvent: (e) => {
    if (e.type === "delivered") outboxed.delivered++;
    if (["queued", "delivered", "deadLettered"].includes(e.type)) renderOutbox(`${e.type} ${e.id.slice(0, 8)}…`);
  },
});

/** Lists what the outbox holds, and the last thing that happened to it. */
async function renderOutbox(last = "") {
  const waiting = await writer.outbox.list();
  $("#outbox-list").replaceChildren(...waiting.map((e) => el("li", {},
    `${e.method} ${new URL(e.url).pathname} · key ${e.idempotencyKey.slice(0, 8)}… · ${e.reason} · `
    + `${e.attempts} attempt${e.attempts === 1 ? "" : "s"} · body ${new TextDecoder().decode(e.body)}`)));
  const o = ORIGINS.b;
  const effects = (await (await fetch(`${o}/effects?id=${OUTBOX_ID}`)).json()).effects;
  Object.assign($("#outbox-summary").dataset, {
    kept: String(outboxed.kept), delivered: String(outboxed.delivered), waiting: String(waiting.length), effects: String(effects),
  });
  $("#outbox-summary").textContent = `${outboxed.kept} kept, ${outboxed.delivered} delivered, ${waiting.length} waiting `
    + `in IndexedDB; origin B applied ${effects} order${effects === 1 ? "" : "s"}${last ? ` · last: ${last}` : ""}`;
}

async function outboxDown() {
  await setOutage("b", true);
  for (let i = 0; i < 5; i++) {
    const body = JSON.stringify({ order: ++outboxed.order });
    try {
      await writer.fetch(`${ORIGINS.b}/api?id=${OUTBOX_ID}`, { method: "POST", body });
    } catch (e) {
      if (!(e instanceof QueuedError)) throw e;
      outboxed.kept++;
    }
  }
  await renderOutbox();
}

async function outboxUp() {
  await setOutage("b", false);
  // What an `online` event does: replay now (the outbox's own timer would, within seconds).
  const tally = await writer.outbox.flush();
  await renderOutbox(`flush: ${tally.delivered} delivered, ${tally.waiting} waiting`);
}

// ---------------------------------------------------------------- breaker lights
const lastTransition = { a: "", b: "" };
function renderLights() {
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

async function fire() {
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

function renderTimeline() {
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

// ---------------------------------------------------------------- retry storm
const LANES = [
  { name: "plain fetch", color: "#8a8f98" },
  { name: "naive retry ×3", color: "#d9534f" },
  { name: "resilientFetch", color: "#2e7d32" },
];

async function naiveRetry(url) {
  for (let i = 0; i < 4; i++) {
    try {
      const res = await fetch(url);
      if (res.ok) return res;
      await res.body?.cancel();
    } catch { /* retry at once */ }
  }
  return null;
}

async function storm() {
  const button = $("#storm-button");
  button.disabled = true;
  const origin = $("#storm-origin").value;
  const base = ORIGINS[origin];
  const run = `storm-${Date.now().toString(36)}`;
  const policy = showPolicy() ?? {};
  const stormClient = new ResilientClient(policy); // fresh breakers: the comparison starts even
  const prev = await (await fetch(`${base}/chaos`)).json();
  await putChaos(origin, { outage: true });
  const start = Date.now();
  const url = (lane) => `${base}/api?id=${run}-${lane}`;
  const lanes = [
    (i) => fetch(url(0)).then((r) => r.body?.cancel(), () => {}),
    (i) => naiveRetry(url(1)),
    (i) => stormClient.fetch(url(2)).then((r) => r.body?.cancel(), () => {}),
  ];
  const pending = [];
  for (let i = 0; i < 60; i++) {
    for (const lane of lanes) pending.push(lane(i));
    await sleep(100);
  }
  await Promise.all(pending);
  await putChaos(origin, { outage: prev.outage });
  const logs = await Promise.all(LANES.map(async (_, k) => (await fetch(`${base}/log?id=${run}-${k}`)).json()));
  drawStorm(logs.map((log) => log.map((r) => r.t - start)));
  $("#storm-summary").textContent = LANES.map((l, k) => `${l.name}: ${(logs[k].length / 60).toFixed(2)} requests per logical call`).join(" · ");
  stormClient.free();
  button.disabled = false;
}

function drawStorm(series) {
  const svg = $("#storm-chart");
  const seconds = 7;
  const buckets = series.map((times) => {
    const b = new Array(seconds).fill(0);
    for (const t of times) b[Math.min(seconds - 1, Math.max(0, Math.floor(t / 1000)))]++;
    return b;
  });
  const max = Math.max(1, ...buckets.flat());
  const W = 720, H = 220, left = 40, bottom = 30, top = 10;
  const groupW = (W - left - 190) / seconds; // the legend sits on the right
  const barW = groupW / (series.length + 1);
  const y = (v) => H - bottom - ((H - bottom - top) * v) / max;
  svg.replaceChildren();
  svg.append(node("line", { x1: left, y1: H - bottom, x2: W - 180, y2: H - bottom, stroke: "#999" }));
  svg.append(node("text", { x: 4, y: top + 10, "font-size": 11 }, `${max}/s`));
  buckets.forEach((b, k) => b.forEach((v, s) => {
    svg.append(node("rect", { x: left + s * groupW + k * barW, y: y(v), width: barW - 2, height: H - bottom - y(v),
      fill: LANES[k].color }, undefined));
  }));
  for (let s = 0; s < seconds; s++) {
    svg.append(node("text", { x: left + s * groupW + groupW / 3, y: H - 10, "font-size": 11 }, `${s}–${s + 1} s`));
  }
  LANES.forEach((l, k) => {
    svg.append(node("rect", { x: W - 160, y: top + k * 16, width: 10, height: 10, fill: l.color }));
    svg.append(node("text", { x: W - 145, y: top + 9 + k * 16, "font-size": 11 }, l.name));
  });
}

// ---------------------------------------------------------------- Cloudflare Workers (workerd)
// The demo server (serve.mjs, edge-fleet.mjs) runs ten isolates in workerd and drives them; the
// page draws what origin A's log received from each and each isolate's own breaker moves.
const FLEETS = [
  { group: "shared", svg: "#edge-with", total: "#edge-with-total" },
  { group: "plain", svg: "#edge-without", total: "#edge-without-total" },
];

/** Says whether the lane can run here, and why not when it cannot. */
function edgeSetup() {
  const note = $("#edge-note");
  let off = null;
  if (backend.serviceWorker) {
    off = ["static", "This lane needs ./scripts/demo.sh: its isolates are workerd processes run by the demo's own "
      + "server on 127.0.0.1, and this static copy has none (its backend is a service worker in this browser). "
      + "Nothing is drawn here rather than numbers that were not measured."];
  } else if (!backend.edge || backend.edge.error) {
    off = ["workerd", `workerd is not running, so this lane is off (the others work): ${backend.edge?.error
      ?? "this server did not start it"}.`];
  }
  if (off) {
    note.dataset.off = off[0];
    note.textContent = off[1];
    note.className = "error";
    $("#edge .fleets").hidden = true;
    return;
  }
  note.textContent = `${backend.edge.isolates} isolates with the object and ${backend.edge.isolates} without, ready in workerd.`;
  $("#edge-button").disabled = false;
}

/** Requests of `log` within [from, to). */
const within = (log, from, to) => log.filter((e) => e.t >= from && e.t < to).length;

/** The open spans of one isolate's breaker: [opened, closed] (closed: `end` while still open). */
function openSpans(moves, end) {
  const spans = [];
  let openedAt = null;
  for (const m of moves) {
    if (m.to === "open" && openedAt === null) openedAt = m.at;
    if (m.to === "closed" && openedAt !== null) { spans.push([openedAt, m.at]); openedAt = null; }
  }
  if (openedAt !== null) spans.push([openedAt, end]);
  return spans;
}

/** One fleet's chart: a row per isolate, a tick per request origin A received, its breaker's open spans. */
function drawFleet(svg, run, logs, reports, t0, t1) {
  const W = 560, left = 64, right = 506, rowH = 22, top = 18;
  const x = (t) => left + ((Math.min(Math.max(t, t0), t1) - t0) / (t1 - t0)) * (right - left);
  const parts = [
    node("rect", { x: x(run.from), y: top - 14, width: x(run.from + run.ms) - x(run.from), height: 5 * rowH + 14, fill: "#f3f4f6" }),
    node("text", { x: (x(run.from) + x(run.from + run.ms)) / 2, y: top - 4, "font-size": 10, "text-anchor": "middle", fill: "#666" },
      `origin A down (${run.ms / 1000} s)`),
    node("text", { x: W - 2, y: top - 4, "font-size": 10, "text-anchor": "end", fill: "#666" }, "requests"),
  ];
  logs.forEach((log, i) => {
    const y = top + i * rowH;
    parts.push(node("text", { x: 2, y: y + 14, "font-size": 11 }, `isolate ${i + 1}`));
    parts.push(node("line", { x1: left, x2: right, y1: y + 10, y2: y + 10, stroke: "#e1e4e8" }));
    for (const [a, b] of openSpans(reports?.[i]?.moves ?? [], Math.min(Date.now(), t1))) {
      parts.push(node("rect", { x: x(a), y: y + 2, width: Math.max(1, x(b) - x(a)), height: 16, fill: "#d9534f", "fill-opacity": 0.16 }));
    }
    for (const e of log) {
      parts.push(node("line", { x1: x(e.t), x2: x(e.t), y1: y + 4, y2: y + 16, "stroke-width": 1.5,
        stroke: e.status === 200 ? "#2e7d32" : "#d9534f" }));
    }
    parts.push(node("text", { x: W - 2, y: y + 14, "font-size": 12, "text-anchor": "end", "font-weight": "bold" },
      String(within(log, run.from, run.from + run.ms))));
  });
  const axisY = top + 5 * rowH + 12;
  // Seconds since origin A went down.
  for (let s = Math.ceil((t0 - run.from) / 1000); run.from + s * 1000 <= t1; s++) {
    parts.push(node("text", { x: x(run.from + s * 1000), y: axisY, "font-size": 10, "text-anchor": "middle", fill: "#666" },
      `${s > 0 ? "+" : ""}${s} s`));
  }
  svg.replaceChildren(...parts);
}

/** Breaks origin A for the fleets (the server drives them) and follows the run until it is over. */
async function edgeRun() {
  const button = $("#edge-button"), note = $("#edge-note"), out = $("#edge-summary");
  button.disabled = true;
  delete out.dataset.done;
  try {
    const res = await fetch("edge/run", { method: "POST" });
    const run = await res.json();
    if (!res.ok) { note.textContent = run.error; return; }
    const t0 = run.from - 1000, t1 = run.until;
    const ids = (group) => run.urls[group].map((u) => new URL(u).searchParams.get("id"));
    const poll = async () => {
      const [report, ...logs] = await Promise.all([
        fetch("edge/report").then((r) => r.json()),
        ...FLEETS.map(({ group }) => Promise.all(ids(group).map(async (id) => (await fetch(`${ORIGINS.a}/log?id=${id}`)).json()))),
      ]);
      FLEETS.forEach(({ group, svg, total }, k) => {
        drawFleet($(svg), run, logs[k], report?.[group], t0, t1);
        $(total).textContent = `${logs[k].reduce((n, log) => n + within(log, run.from, run.from + run.ms), 0)} requests in the outage`;
      });
      return { report, logs };
    };
    note.textContent = "running: origin A goes down in 1 s…";
    while (Date.now() < t1) {
      await poll();
      if (Date.now() >= run.from) note.textContent = Date.now() < run.from + run.ms ? "origin A is down…" : "origin A is back…";
      await sleep(250);
    }
    await sleep(300); // the last calls' answers
    const { report, logs } = await poll();
    const counts = logs.map((fleet) => fleet.map((log) => within(log, run.from, run.from + run.ms)));
    const [withCount, withoutCount] = counts.map((c) => c.reduce((a, b) => a + b, 0));
    const spread = (group) => {
      const opened = report[group].map((r) => r.moves.find((m) => m.to === "open")?.at).filter((t) => t !== undefined);
      return opened.length ? `${opened.length} opened within ${Math.max(...opened) - Math.min(...opened)} ms of each other` : "none opened";
    };
    const closed = (group) => report[group].filter((r) => r.state === "closed").length;
    const share = withoutCount / run.n;
    out.textContent = `During the ${run.ms / 1000} s outage origin A received ${withCount} requests from the ${run.n} isolates `
      + `sharing the object and ${withoutCount} from the ${run.n} without it (${(withoutCount / Math.max(1, withCount)).toFixed(1)}×); `
      + `one isolate alone sent ${share.toFixed(1)} on average. Breakers with the object: ${spread("shared")}, `
      + `${closed("shared")} closed after; without: ${spread("plain")}, ${closed("plain")} closed after.`;
    Object.assign(out.dataset, { withCount: String(withCount), withoutCount: String(withoutCount),
      withClosed: String(closed("shared")), withoutClosed: String(closed("plain")),
      withOpened: String(report.shared.filter((r) => r.moves.some((m) => m.to === "open")).length),
      withoutOpened: String(report.plain.filter((r) => r.moves.some((m) => m.to === "open")).length), done: "1" });
    note.textContent = "done: run it again at will.";
  } finally {
    button.disabled = false;
  }
}

// ---------------------------------------------------------------- start
await Promise.all([...document.querySelectorAll(".origin")].map(buildOriginControls));
$("#policy-form").addEventListener("input", showPolicy);
$("#fire-button").addEventListener("click", fire);
$("#reset-button").addEventListener("click", () => {
  client.reset();
  lastTransition.a = lastTransition.b = "";
  renderLights();
});
$("#storm-button").addEventListener("click", storm);
$("#pace-button").addEventListener("click", paceBurst);
$("#jitter-button").addEventListener("click", compareJitter);
$("#throttle-button").addEventListener("click", compareThrottle);
$("#hedge-button").addEventListener("click", compareHedge);
$("#share-break").addEventListener("click", shareBreak);
$("#outbox-down").addEventListener("click", outboxDown);
$("#outbox-up").addEventListener("click", outboxUp);
await renderOutbox();
$("#share-heal").addEventListener("click", shareHeal);
$("#edge-button").addEventListener("click", edgeRun);
edgeSetup();
showPolicy();
renderLights();
renderTimeline();
setInterval(renderLights, 250); // half-open is decided lazily: stats() shows it when the cooldown ends
$("#status").textContent = backend.serviceWorker
  ? `backend: mock origins ${ORIGINS.a} and ${ORIGINS.b}, answered by a service worker in this browser`
  : `backend: ${ORIGINS.a} and ${ORIGINS.b}`;
window.__demoReady = true;
