// What every lane of the demo page shares: DOM and SVG helpers, the backend (backend.json: the
// local fault server's two origins, or the static build's mock origins answered by a service
// worker), the page's client, the origins' chaos controls, and running a lane's handler.
import { ResilientClient } from "resilient-fetch";

export const $ = (sel, root = document) => root.querySelector(sel);
export const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  node.append(...children);
  return node;
};
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** An SVG element with these attributes (and text). */
export const node = (tag, attrs, text) => {
  const n = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, v);
  if (text !== undefined) n.textContent = text;
  return n;
};

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

// backend.json names the two origins. From scripts/demo.sh (serve.mjs) they are the local Node
// fault server's; in the static build (scripts/demo-static.sh) they are mock origins answered by
// the service worker it names, which must control this page before anything else is fetched.
export const backend = await (await fetch("backend.json")).json();
if (backend.serviceWorker) await useServiceWorker(backend.serviceWorker);
export const ORIGINS = { a: backend.a, b: backend.b };
export const NAMES = { a: "Origin A", b: "Origin B" };
// One id per page load groups this page's requests in the backend's log.
export const GROUP = `demo-${Date.now().toString(36)}`;

// One client for the page: it owns the breakers; each call passes the policy from the form.
export const client = new ResilientClient();

// ---------------------------------------------------------------- backend controls
export async function putChaos(origin, patch) {
  const res = await fetch(`${ORIGINS[origin]}/chaos`, { method: "PUT", body: JSON.stringify(patch) });
  return res.json();
}

export async function buildOriginControls(box) {
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

/** Sets an origin's outage as its checkbox above would (the checkbox follows). */
export async function setOutage(origin, down) {
  const box = $(`.origin[data-origin="${origin}"]`);
  const input = $("input[name=outage]", box);
  input.checked = down;
  input.dispatchEvent(new Event("input"));
  await putChaos(origin, { outage: down });
}

/**
 * Runs a lane's `work` with its `button` disabled. Whatever `work` throws, `restore` (what the
 * lane changed: an origin's chaos, a client) runs, then the button is enabled again; the error
 * goes on to the page's console.
 */
export async function lane(button, work, restore = async () => {}) {
  button.disabled = true;
  try {
    return await work();
  } finally {
    try {
      await restore();
    } finally {
      button.disabled = false;
    }
  }
}
