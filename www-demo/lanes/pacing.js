// The rate-limits lane: a burst of GETs to an origin with a rate limit, without pacing and with it.
import { ResilientClient } from "resilient-fetch";
import { $, GROUP, ORIGINS, lane, putChaos, sleep } from "./page.js";

/** Waits for the start of the next whole second (the backend's rate-limit window). */
const nextWindow = () => sleep(1000 - (Date.now() % 1000) + 20);

/**
 * The same burst of GETs to an origin with a rate limit, without pacing and with it: the
 * backend's 429s are counted from the answers. With pacing, the first answer tells the
 * quota and the rest of the burst waits for the next window instead of being refused.
 */
export async function paceBurst() {
  const out = $("#pace-summary");
  const origin = $("#pace-origin").value;
  const n = 30;
  const url = `${ORIGINS[origin]}/api?id=${GROUP}-pace`;
  const count = (results) => ({
    ok: results.filter((r) => r === 200).length, refused: results.filter((r) => r === 429).length,
  });
  const burst = (c, k) => Promise.all(Array.from({ length: k }, () => c.fetch(url).then(async (r) => {
    await r.arrayBuffer();
    return r.status;
  }, (e) => e.name)));
  let before;
  // The origin's rate limit goes back to what it was, however the lane ends.
  const restore = async () => { if (before) await putChaos(origin, { rateLimit: before.rateLimit }); };
  await lane($("#pace-button"), async () => {
    before = await (await fetch(`${ORIGINS[origin]}/chaos`)).json();
    const limit = before.rateLimit || 10;
    await putChaos(origin, { rateLimit: limit });
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
  }, restore);
}
