// The outbox lane: writes to origin B kept while it is down, delivered once it is back.
import { QueuedError, ResilientClient } from "resilient-fetch";
import { $, ORIGINS, el, setOutage } from "./page.js";

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
export async function renderOutbox(last = "") {
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

export async function outboxDown() {
  await setOutage("b", true);
  try {
    for (let i = 0; i < 5; i++) {
      const body = JSON.stringify({ order: ++outboxed.order });
      try {
        await writer.fetch(`${ORIGINS.b}/api?id=${OUTBOX_ID}`, { method: "POST", body });
      } catch (e) {
        if (!(e instanceof QueuedError)) throw e;
        outboxed.kept++;
      }
    }
  } catch (e) {
    await setOutage("b", false); // a write that failed otherwise: B is not left down
    throw e;
  }
  await renderOutbox();
}

export async function outboxUp() {
  await setOutage("b", false);
  // What an `online` event does: replay now (the outbox's own timer would, within seconds).
  const tally = await writer.outbox.flush();
  await renderOutbox(`flush: ${tally.delivered} delivered, ${tally.waiting} waiting`);
}
