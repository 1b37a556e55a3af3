// The jitter and throttling lanes: the library against a stub fetch (the policy's `fetch`
// option), so nothing leaves the page and they work without any backend.
import { ResilientClient } from "resilient-fetch";
import { $, lane, node } from "./page.js";

const JITTERS = ["none", "equal", "full", "decorrelated"];
const STUB = "https://stub.invalid/x";

/** 40 calls failing together, each retried once under each jitter mode: the waits drawn. */
export async function compareJitter() {
  const waits = {};
  let stub; // freed however the lane ends
  await lane($("#jitter-button"), async () => {
    for (const jitter of JITTERS) {
      waits[jitter] = [];
      stub = new ResilientClient({
        fetch: () => Promise.resolve(new Response("", { status: 503 })),
        retry: { maxAttempts: 2, baseDelayMs: 200, maxDelayMs: 2000, jitter },
        breaker: false, retryBudget: false, rateLimit: false,
        onEvent: (e) => { if (e.type === "retry") waits[jitter].push(e.delayMs); },
      });
      await Promise.all(Array.from({ length: 40 }, () => stub.fetch(STUB).then((r) => r.arrayBuffer())));
      stub.free();
      stub = undefined;
    }
    drawJitter(waits);
    const spread = (w) => Math.max(...w) - Math.min(...w);
    $("#jitter-summary").textContent = JITTERS.map((j) => `${j}: waits ${Math.round(Math.min(...waits[j]))}–${
      Math.round(Math.max(...waits[j]))} ms (spread ${Math.round(spread(waits[j]))} ms)`).join(" · ");
    $("#jitter-summary").dataset.spreads = JSON.stringify(Object.fromEntries(JITTERS.map((j) => [j, spread(waits[j])])));
  }, () => stub?.free());
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
export async function compareThrottle() {
  await lane($("#throttle-button"), async () => {
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
      try {
        for (let i = 0; i < 300; i++) {
          await stub.fetch(STUB).then((r) => r.arrayBuffer(), (e) => { if (e.name === "ThrottledError") refused++; });
        }
      } finally {
        stub.free();
      }
      return { sent, accepted, refused };
    };
    const off = await run(false);
    const on = await run(true);
    const per = (r) => (r.sent / Math.max(1, r.accepted)).toFixed(1);
    $("#throttle-summary").textContent = `Throttle off: ${off.sent} requests reached the origin, ${off.accepted} accepted `
      + `(${per(off)} per accepted one). Throttle on: ${on.sent} reached it, ${on.accepted} accepted (${per(on)} per `
      + `accepted one), ${on.refused} refused locally with ThrottledError.`;
    Object.assign($("#throttle-summary").dataset, { offSent: String(off.sent), onSent: String(on.sent), onRefused: String(on.refused) });
  });
}
