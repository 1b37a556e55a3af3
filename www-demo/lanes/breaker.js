// The breaker rules lane: slow calls that open a breaker, and cooldowns that grow while an origin
// stays down, against stub origins in the page (nothing leaves it).
import { ResilientClient } from "resilient-fetch";
import { $, lane, sleep } from "./page.js";

const STUB = "https://stub.invalid/x";

/** A stub origin answering every request after `ms` with `status`. */
const stubFetch = (ms, status) => (_input, init) => new Promise((resolve, reject) => {
  const timer = setTimeout(() => resolve(new Response("stub", { status })), ms);
  init.signal.addEventListener("abort", () => { clearTimeout(timer); reject(init.signal.reason); });
});

/**
 * Slow calls: 8 GETs to an origin that answers 200, every one in 300 ms, under a breaker whose
 * slowCallMs is 150 (half the window of 4 slow opens it). Then growing cooldowns: an origin that
 * answers 503 to everything, called every 25 ms for 4 s, with a 100 ms cooldown fixed, then
 * growing to 1.6 s (maxCooldownMs): each opening's cooldown, read from a call refused right then.
 */
export async function breakerRules() {
  await lane($("#breaker-button"), async () => {
    // 1. Slow calls.
    let opened = null;
    const slow = new ResilientClient({
      retry: false,
      fetch: stubFetch(300, 200),
      breaker: { slowCallMs: 150, slowCallRateThreshold: 0.5, minimumCalls: 4, windowType: "count", windowSize: 4 },
      onEvent: (e) => { if (e.type === "breakerTransition" && e.to === "open") opened ??= e.reason; },
    });
    let answered = 0, refused = 0;
    try {
      for (let i = 0; i < 8; i++) {
        await slow.fetch(STUB).then(() => answered++, () => refused++);
      }
    } finally {
      slow.free();
    }
    $("#breaker-slow").textContent = `Slow calls: every answer a 200 after 300 ms. ${answered} answered, then the `
      + `breaker opened (reason "${opened}") and ${refused} calls failed fast without waiting.`;
    Object.assign($("#breaker-slow").dataset, { answered: String(answered), refused: String(refused), reason: String(opened) });

    // 2. Growing cooldowns.
    const run = async (maxCooldownMs) => {
      let client = null;
      const cooldowns = [];
      let sent = 0;
      client = new ResilientClient({
        retry: false,
        bulkhead: false,
        fetch: (input, init) => { sent++; return stubFetch(2, 503)(input, init); },
        breaker: { failureThreshold: 1, cooldownMs: 100, maxCooldownMs },
        onEvent: (e) => {
          if (e.type === "breakerTransition" && e.to === "open") {
            client.fetch(STUB).catch((error) => cooldowns.push(error.retryAfterMs));
          }
        },
      });
      try {
        const end = performance.now() + 4000;
        while (performance.now() < end) {
          await client.fetch(STUB).catch(() => {});
          await sleep(25);
        }
      } finally {
        client.free();
      }
      return { cooldowns, sent };
    };
    const fixed = await run(100);
    const growing = await run(1600);
    const list = (c) => c.map((ms) => `${ms}`).join(", ");
    $("#breaker-cooldown").textContent = `Origin down for 4 s. Fixed 100 ms cooldown: ${fixed.sent} requests, `
      + `cooldowns ${list(fixed.cooldowns.slice(0, 8))}, … ms. Growing to 1.6 s: ${growing.sent} requests, `
      + `cooldowns ${list(growing.cooldowns)} ms.`;
    Object.assign($("#breaker-cooldown").dataset, {
      fixedSent: String(fixed.sent), growingSent: String(growing.sent), growing: JSON.stringify(growing.cooldowns),
    });
  });
}
