// The events lane: a server-sent event stream that drops, through `client.events()`, against a
// stub origin in the page (nothing leaves it): the stream reconnects with Last-Event-ID after
// each cut and a 503, and ends at the server's 204, each event seen once and in order.
import { ResilientClient } from "resilient-fetch";
import { $, el, lane } from "./page.js";

const FEED = "https://feed.invalid/prices";
const EVENTS = 20;

/**
 * A stub event stream: connection n (from 0) sends the events after the Last-Event-ID it was
 * sent, one every 30 ms; connections 0 and 1 drop after 5 events, connection 2 answers 503,
 * connection 3 sends the rest and ends, connection 4 answers 204 (no more). `log` records each
 * connection's time and Last-Event-ID.
 */
function feed() {
  const log = [];
  const fetch = (input, init) => {
    const n = log.length;
    const lastId = new Request(input, init).headers.get("last-event-id");
    log.push({ at: performance.now(), lastId });
    if (n === 2) return Promise.resolve(new Response("busy", { status: 503 }));
    if (n >= 4) return Promise.resolve(new Response(null, { status: 204 }));
    let next = Number(lastId ?? 0) + 1, sent = 0, timer;
    const body = new ReadableStream({
      start(controller) {
        const tick = () => {
          if (next > EVENTS) return controller.close();
          if (n < 2 && sent === 5) return controller.error(new TypeError("the connection dropped"));
          controller.enqueue(new TextEncoder().encode(`id: ${next}\ndata: {"price":${100 + next}}\n\n`));
          next++;
          sent++;
          timer = setTimeout(tick, 30);
        };
        init.signal?.addEventListener("abort", () => { clearTimeout(timer); controller.error(init.signal.reason); });
        tick();
      },
      cancel() { clearTimeout(timer); },
    });
    return Promise.resolve(new Response(body, { headers: { "content-type": "text/event-stream" } }));
  };
  return { fetch, log };
}

export async function runEvents() {
  await lane($("#events-button"), async () => {
    const stub = feed();
    const client = new ResilientClient({ fetch: stub.fetch, retry: { baseDelayMs: 100, maxDelayMs: 400 }, breaker: false });
    const strip = el("div", { class: "events-strip" });
    $("#events-strip").replaceChildren(strip);
    const ids = [];
    let ending = "";
    const stream = client.events(FEED);
    stream.addEventListener("error", () => {
      if (stream.readyState === stream.CONNECTING) strip.append(el("span", { class: "drop", title: "dropped: reconnecting" }));
    });
    try {
      for await (const { id, data } of stream) {
        ids.push(Number(id));
        strip.append(el("span", { class: "ok", title: `id ${id}: ${data}` }));
      }
    } catch (e) {
      ending = e.code ?? e.name;
    } finally {
      client.free();
    }
    const gaps = stub.log.slice(1).map((c, k) => Math.round(c.at - stub.log[k].at));
    const sent = stub.log.map((c) => c.lastId ?? "none");
    $("#events-summary").textContent = `${ids.length} events, each once and in order: ${ids.join(" ") === Array.from({ length: EVENTS }, (_, i) => i + 1).join(" ")}. `
      + `${stub.log.length} connections; Last-Event-ID sent: ${sent.join(", ")}. The stream ended: ${ending || "closed"}.`;
    Object.assign($("#events-summary").dataset, {
      ids: ids.join(" "), lastIds: sent.join(","), connections: String(stub.log.length), ending, gaps: gaps.join(","),
    });
  });
}
