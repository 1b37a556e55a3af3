// One "tab" of the demo's shared-breaker lane (index.html, lane 7): its own client, sharing
// origin health with the other frame through share: "demo-tabs". The page above tells it
// what to do by postMessage: "send" (5 GETs to origin A), "probe" (a GET every 250 ms until
// its breaker closes).
import { ResilientClient } from "resilient-fetch";

const $ = (sel) => document.querySelector(sel);
const backend = await (await fetch("backend.json")).json();
const A = backend.a;
const name = new URLSearchParams(location.search).get("name") || "tab";
const tab = { sent: 0, refused: 0, state: "closed" };
window.__tab = tab;

const client = new ResilientClient({
  share: "demo-tabs",
  retry: false,
  breaker: { mode: "consecutive", failureThreshold: 3, cooldownMs: 1500 },
  onEvent: (e) => { if (e.type === "breakerTransition") render(); },
});

function render() {
  tab.state = client.breakerState(A);
  Object.assign($("#tab-light"), { className: `light ${tab.state}` });
  $("#tab-light").dataset.state = tab.state;
  $("#tab-light .state").textContent = tab.state;
  $("#tab-sent").textContent = String(tab.sent);
  $("#tab-refused").textContent = String(tab.refused);
}

async function get() {
  try {
    const res = await client.fetch(`${A}/api?id=demo-tabs-${name}`);
    tab.sent++;
    await res.text();
  } catch (e) {
    if (e.name === "CircuitOpenError") tab.refused++;
    else tab.sent++;
  }
  render();
}

window.addEventListener("message", async (e) => {
  if (e.origin !== location.origin) return;
  if (e.data === "send") for (let i = 0; i < 5; i++) await get();
  if (e.data === "probe") {
    while (client.breakerState(A) !== "closed") {
      if (client.breakerState(A) === "half-open") await get();
      await new Promise((r) => setTimeout(r, 250));
    }
  }
});
$("#tab-name").textContent = `${name} tab`;
render();
setInterval(render, 250); // half-open is decided lazily: show it when the cooldown ends
window.__tabReady = true;
