// The hedged-reads lane (the slow tail), against a stub origin in the page.
import { ResilientClient } from "resilient-fetch";
import { $, lane, node, sleep } from "./page.js";

const STUB = "https://stub.invalid/x";

/**
 * 400 GETs, one every 5 ms, to a stub origin (nothing leaves the page) that answers in 2–5 ms
 * except every 50th request, which takes 1.5 s: without hedging, then with hedge: true (delay
 * "auto", the origin's p95 once 20 answers are known). The stub honours the attempt's signal,
 * as a real fetch does, so a hedge's loser is really cut off.
 */
export async function compareHedge() {
  await lane($("#hedge-button"), async () => {
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
      try {
        for (let i = 0; i < 400; i++) {
          const start = performance.now();
          calls.push(stub.fetch(STUB).then((r) => r.text()).then(() => latencies.push(performance.now() - start)));
          await sleep(5);
        }
        await Promise.all(calls);
      } finally {
        stub.free();
      }
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
  });
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
