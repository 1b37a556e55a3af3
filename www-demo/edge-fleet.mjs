// The demo's Cloudflare Workers lane, on the demo server's side (www-demo/serve.mjs): a workerd
// on 127.0.0.1 with two fleets of N isolates (N services of one Worker, each its own globals):
// one whose clients share one OriginHealth Durable Object, one without it. An outage run drives
// every isolate with a GET every EVERY_MS (each a request of its own, as Workers serve calls)
// to an origin of the demo backend that answers 503 for OUTAGE_MS; the page reads what the
// origin received from the backend's log and each isolate's breaker moves from the isolate.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { bundle, serve } from "../tests/package/workerd.mjs";

export const N = 5;
/** The outage: it starts LEAD_MS after the run does, and the isolates go on calling TAIL_MS after it ends. */
export const OUTAGE_MS = 5000, LEAD_MS = 1000, TAIL_MS = 1500, EVERY_MS = 50, COOLDOWN_MS = 1000;

// One module for every isolate: its client is made at module load (the README's Worker), from
// `env`; with RF_HEALTH bound, its breakers are shared over the OriginHealth object.
const WORKER = `
import { env } from "cloudflare:workers";
import { ResilientClient, OriginHealth } from "resilient-fetch/full";
export { OriginHealth };

const moves = [];
const share = env.RF_HEALTH ? { share: { name: "demo-fleet", durableObject: env.RF_HEALTH } } : {};
const client = new ResilientClient({
  ...share,
  retry: false,
  timeoutMs: 2000,
  breaker: { mode: "consecutive", failureThreshold: 5, cooldownMs: ${COOLDOWN_MS} },
  onEvent: (e) => {
    if (e.type !== "breakerTransition") return;
    moves.push({ to: e.to, at: Date.now() });
    if (moves.length > 200) moves.shift();
  },
});

export default {
  async fetch(request) {
    const url = new URL(request.url), target = url.searchParams.get("url");
    if (url.pathname === "/call") {
      const outcome = await client.fetch(target).then(async (r) => { await r.text(); return r.status; }, (e) => e.name);
      return Response.json({ outcome });
    }
    if (url.pathname === "/report") return Response.json({ moves, state: client.breakerState(target) });
    return new Response("not found", { status: 404 });
  },
};
`;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Bundles the Worker against the built package (`root`/pkg) and starts workerd from `bin`
 * (tools/node_modules/.bin). Resolves with { ports: { shared: [...], plain: [...] }, run, report,
 * stop }; rejects with a one-line reason when workerd cannot start.
 */
export async function startFleet({ root, bin }) {
  for (const tool of ["esbuild", "workerd"]) {
    if (!fs.existsSync(path.join(bin, tool))) throw new Error(`${tool} is not installed in ${bin} (scripts/toolchain.sh installs it)`);
  }
  const pkg = path.join(root, "pkg");
  if (!fs.existsSync(path.join(pkg, "workerd.js"))) throw new Error("pkg/ is not built (run scripts/build.sh)");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rf-demo-edge-"));
  let workerd;
  try {
    fs.mkdirSync(path.join(dir, "node_modules"));
    fs.symlinkSync(pkg, path.join(dir, "node_modules", "resilient-fetch"), "dir");
    bundle({ source: WORKER, project: dir, out: dir, bin });
    const isolates = {};
    for (let i = 0; i < N; i++) {
      isolates[`shared${i}`] = { health: "OriginHealth" };
      isolates[`plain${i}`] = {};
    }
    workerd = await serve(dir, isolates, { bin, classes: ["OriginHealth"] });
  } catch (e) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw new Error(`workerd did not start: ${e.message.split("\n")[0]}`);
  }
  const ports = {
    shared: Array.from({ length: N }, (_, i) => workerd.ports[`shared${i}`]),
    plain: Array.from({ length: N }, (_, i) => workerd.ports[`plain${i}`]),
  };
  const all = [...ports.shared.map((p, i) => ["shared", i, p]), ...ports.plain.map((p, i) => ["plain", i, p])];
  let current = null;

  /**
   * Starts an outage run against `origin` (a backend origin's URL): each isolate's GETs go to
   * its own /outage URL (its own id in the backend's log), 503 within [from, from + OUTAGE_MS).
   * Resolves at once with what the page needs to follow it; null while a run is under way.
   */
  function run(origin) {
    if (current && Date.now() < current.until) return null;
    const id = `fleet-${Date.now().toString(36)}`;
    const from = Date.now() + LEAD_MS, until = from + OUTAGE_MS + TAIL_MS;
    const urls = Object.fromEntries(["shared", "plain"].map((g) => [g,
      ports[g].map((_, i) => `${origin}/outage?id=${id}-${g}-${i}&from=${from}&ms=${OUTAGE_MS}`)]));
    current = { id, from, ms: OUTAGE_MS, until, everyMs: EVERY_MS, cooldownMs: COOLDOWN_MS, n: N, urls };
    const drive = async ([group, i, port]) => {
      const pending = [];
      while (Date.now() < until) {
        pending.push(fetch(`http://127.0.0.1:${port}/call?url=${encodeURIComponent(urls[group][i])}`)
          .then((r) => r.arrayBuffer(), () => {}));
        await sleep(EVERY_MS);
      }
      await Promise.all(pending);
    };
    current.done = Promise.all(all.map(drive));
    return current;
  }

  /** Each isolate's breaker moves (since the run began) and state for the current run's origin. */
  async function report() {
    if (!current) return null;
    const since = current.from - LEAD_MS;
    const one = async ([group, i, port]) => {
      const r = await (await fetch(`http://127.0.0.1:${port}/report?url=${encodeURIComponent(current.urls[group][i])}`)).json();
      return { moves: r.moves.filter((m) => m.at >= since), state: r.state };
    };
    const reports = await Promise.all(all.map(one));
    return { id: current.id, running: Date.now() < current.until, shared: reports.slice(0, N), plain: reports.slice(N) };
  }

  async function stop() {
    await workerd.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return { ports, run, report, stop, pid: workerd.pid };
}
