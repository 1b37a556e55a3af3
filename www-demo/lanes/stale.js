// The stale answers lane (the origin down, the last good answer), against a stub origin in the page.
import { ResilientClient } from "resilient-fetch";
import { $, el, lane } from "./page.js";

const STUB = "https://stub.invalid/prices";

/**
 * A stub origin (nothing leaves the page) that answers its first GET with a price list
 * (`Cache-Control: max-age=0, stale-if-error=60`), then 503 to everything. A client with
 * `stale: true` keeps the first answer (in this page's Cache API), then serves it for each
 * failure: after its retries while the breaker is closed, without sending once it is open.
 */
export async function staleRun() {
  await lane($("#stale-button"), async () => {
    let sent = 0;
    const stub = new ResilientClient({
      stale: true,
      retry: { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0 },
      breaker: { mode: "consecutive", failureThreshold: 2, cooldownMs: 60000 },
      fetch: async () => {
        sent++;
        if (sent === 1) return new Response("prices of 09:00", { headers: { "cache-control": "max-age=0, stale-if-error=60" } });
        return new Response("down", { status: 503 });
      },
    });
    const rows = [];
    try {
      const cache = typeof caches === "object" ? await caches.open("resilient-fetch") : null;
      if (cache) await cache.delete(new Request(`https://resilient-fetch.invalid/stale?key=${encodeURIComponent(`GET ${STUB}`)}`));
      for (let i = 1; i <= 6; i++) {
        const before = sent;
        const r = await stub.fetch(STUB).then(async (res) => ({ status: res.status, body: await res.text(),
          age: res.headers.get("age"), why: res.headers.get("resilient-fetch-stale") }), (e) => ({ status: e.name }));
        rows.push({ call: i, sent: sent - before, ...r, breaker: stub.breakerState(STUB) });
        // The first answer is kept after its call resolved: the next call waits until it is.
        for (let n = 0; i === 1 && cache && n < 100 && (await cache.keys()).length === 0; n++) await new Promise((ok) => setTimeout(ok, 10));
      }
    } finally {
      stub.free();
    }
    $("#stale-list").replaceChildren(...rows.map((r) => el("li", {},
      `call ${r.call}: ${r.sent} sent, ${r.status} "${r.body ?? ""}"`
      + (r.why ? ` — kept answer (Age ${r.age} s, resilient-fetch-stale: ${r.why})` : "") + `, breaker ${r.breaker}`)));
    const served = rows.filter((r) => r.why).length;
    const whileOpen = rows.filter((r, i) => i > 0 && rows[i - 1].breaker === "open").reduce((n, r) => n + r.sent, 0);
    $("#stale-summary").textContent = `${served} of 5 failures served the last good answer; `
      + `${whileOpen} requests sent while the breaker was open.`;
    Object.assign($("#stale-summary").dataset, { served: String(served), whileOpen: String(whileOpen),
      reasons: rows.map((r) => r.why ?? "").join(",") });
  });
}
