// The retry-storm lane: plain fetch, a naive retry loop and resilientFetch side by side against
// an origin in outage, drawn from the backend's own request log.
import { ResilientClient } from "resilient-fetch";
import { $, ORIGINS, lane, node, putChaos, sleep } from "./page.js";
import { showPolicy } from "./policy.js";

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

export async function storm() {
  const origin = $("#storm-origin").value;
  const base = ORIGINS[origin];
  const run = `storm-${Date.now().toString(36)}`;
  let stormClient, prev;
  // However the lane ends: the outage as it was, the lane's client freed, the button back.
  const restore = async () => {
    stormClient?.free();
    if (prev) await putChaos(origin, { outage: prev.outage });
  };
  await lane($("#storm-button"), async () => {
    const policy = showPolicy() ?? {};
    stormClient = new ResilientClient(policy); // fresh breakers: the comparison starts even
    prev = await (await fetch(`${base}/chaos`)).json();
    await putChaos(origin, { outage: true });
    const start = Date.now();
    const url = (k) => `${base}/api?id=${run}-${k}`;
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
    prev = undefined;
    const logs = await Promise.all(LANES.map(async (_, k) => (await fetch(`${base}/log?id=${run}-${k}`)).json()));
    drawStorm(logs.map((log) => log.map((r) => r.t - start)));
    $("#storm-summary").textContent = LANES.map((l, k) => `${l.name}: ${(logs[k].length / 60).toFixed(2)} requests per logical call`).join(" · ");
  }, restore);
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
