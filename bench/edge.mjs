// Per-call time in Cloudflare's workerd with `share: { name, durableObject }` beside the same
// client without it, in one run: over a working OriginHealth object, over one whose exchanges
// fail, and over one whose exchanges never answer. Every client sends through a stub `fetch`
// that answers at once (as bench/overhead.mjs does), so what is measured is the client's own
// time: a call decides from what the isolate knows and never waits for the object.
//
//   node bench/edge.mjs            # needs pkg/ (scripts/build.sh) and tools/ (workerd, esbuild)
//
// Knobs: BENCH_EDGE_CALLS (calls per request, 2 000), BENCH_EDGE_ROUNDS (15). Each round sends
// one request per variant (in a shuffled order), each making that many calls one after the
// other; a request with no call measures what the request itself costs, which is taken off.
// Workers' clocks stand still between I/O, so the time is read in Node, around the request.
// Two answers are measured: 200 (a healthy origin: no note is sent) and 503 with the breaker
// off (every call a failure the client tells: notes are queued and sent in the background).
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, "..");
const tools = path.join(process.env.RF_TOOLS_DIR ?? path.join(root, "tools"), "node_modules", ".bin");
const CALLS = Number(process.env.BENCH_EDGE_CALLS ?? 2000);
const ROUNDS = Number(process.env.BENCH_EDGE_ROUNDS ?? 15);

const WORKER = `
import { env, DurableObject } from "cloudflare:workers";
// Shared health and its Durable Object are in the full build.
import { ResilientClient, OriginHealth } from "resilient-fetch/full";
export { OriginHealth };
export class FailingHealth extends DurableObject { exchange() { throw new Error("down"); } }
export class HangingHealth extends DurableObject { exchange() { return new Promise(() => {}); } }

const state = { status: 200 };
const stub = () => Promise.resolve(new Response(state.status === 200 ? "ok" : null, { status: state.status }));
const policy = { fetch: stub, retry: false, breaker: false };
const clients = {
  plain: new ResilientClient(policy),
  object: new ResilientClient({ ...policy, share: { name: "bench", durableObject: env.RF_HEALTH } }),
  failing: new ResilientClient({ ...policy, share: { name: "bench", durableObject: env.RF_FAIL } }),
  hanging: new ResilientClient({ ...policy, share: { name: "bench", durableObject: env.RF_HANG } }),
};
export default {
  async fetch(request) {
    const q = new URL(request.url).searchParams;
    const client = clients[q.get("variant")];
    state.status = Number(q.get("status"));
    for (let i = Number(q.get("n")); i > 0; i--) (await client.fetch("https://api.example.com/x")).body?.cancel();
    return new Response("done");
  },
};
`;

const port = await new Promise((resolve) => {
  const s = net.createServer().listen(0, "127.0.0.1", () => {
    const { port } = s.address();
    s.close(() => resolve(port));
  });
});
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rf-bench-edge-"));
fs.mkdirSync(path.join(dir, "node_modules"));
fs.symlinkSync(path.join(root, "pkg"), path.join(dir, "node_modules", "resilient-fetch"));
fs.writeFileSync(path.join(dir, "main.mjs"), WORKER);
execFileSync(path.join(tools, "esbuild"), ["main.mjs", "--bundle", "--format=esm", "--platform=neutral",
  "--conditions=workerd,worker,browser", "--external:*.wasm", "--external:cloudflare:*", "--outfile=out/worker.js",
  "--log-level=warning"], { cwd: dir, stdio: "inherit" });
fs.mkdirSync(path.join(dir, "out", "web"), { recursive: true });
fs.copyFileSync(path.join(root, "pkg", "full", "web", "resilient_fetch_bg.wasm"), path.join(dir, "out", "web", "resilient_fetch_bg.wasm"));
const modules = `modules = [(name = "worker.js", esModule = embed "worker.js"),
  (name = "web/resilient_fetch_bg.wasm", wasm = embed "web/resilient_fetch_bg.wasm")], compatibilityDate = "2026-11-01"`;
const ns = (name, className) => `(name = "${name}", durableObjectNamespace = (className = "${className}", serviceName = "objects"))`;
fs.writeFileSync(path.join(dir, "out", "config.capnp"), `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = (${modules}, bindings = [${ns("RF_HEALTH", "OriginHealth")}, ${ns("RF_FAIL", "FailingHealth")}, ${ns("RF_HANG", "HangingHealth")}])),
    (name = "objects", worker = (${modules},
      durableObjectNamespaces = [(className = "OriginHealth", uniqueKey = "h"), (className = "FailingHealth", uniqueKey = "f"), (className = "HangingHealth", uniqueKey = "g")],
      durableObjectStorage = (inMemory = void))),
  ],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
`);
const workerd = spawn(path.join(tools, "workerd"), ["serve", "config.capnp"], { cwd: path.join(dir, "out"), stdio: "inherit" });
const base = `http://127.0.0.1:${port}/`;
for (let i = 0; i < 100; i++) {
  if (await fetch(`${base}?variant=plain&n=0&status=200`).then(() => true, () => false)) break;
  await new Promise((r) => setTimeout(r, 100));
}

/** ms for one request of `n` calls of `variant` answered with `status`. */
async function timed(variant, n, status) {
  const started = performance.now();
  const res = await fetch(`${base}?variant=${variant}&n=${n}&status=${status}`);
  await res.text();
  if (res.status !== 200) throw new Error(`${variant}: ${res.status}`);
  return performance.now() - started;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const variants = ["plain", "object", "failing", "hanging"];
console.log(`per-call time in workerd, ${CALLS} calls per request, ${ROUNDS} rounds (stub fetch); ratios and differences within each round, their median`);
for (const status of [200, 503]) {
  for (const v of variants) await timed(v, CALLS, status); // warm-up
  const perCall = Object.fromEntries(variants.map((v) => [v, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const v of [...variants].sort(() => Math.random() - 0.5)) {
      const empty = await timed(v, 0, status);
      perCall[v].push(((await timed(v, CALLS, status)) - empty) * 1000 / CALLS);
    }
  }
  // Each round's variants ran side by side: compare them within the round, then take the median.
  const within = (v, f) => median(perCall[v].map((us, round) => f(us, perCall.plain[round])));
  const spread = (v) => {
    const sorted = [...perCall[v]].sort((a, b) => a - b);
    return `${sorted[Math.floor(sorted.length / 4)].toFixed(1)}–${sorted[Math.floor((3 * sorted.length) / 4)].toFixed(1)}`;
  };
  console.log(`\nanswers ${status}${status === 200 ? " (healthy: no note is sent)" : " (every call a failure told to the object)"}`);
  console.log("| client | µs per call (median, quartiles) | vs no share | added µs |\n| --- | --- | --- | --- |");
  for (const v of variants) {
    const what = { plain: "no share", object: "share over OriginHealth", failing: "share over an object that fails", hanging: "share over an object that never answers" }[v];
    console.log(`| ${what} | ${median(perCall[v]).toFixed(2)} (${spread(v)}) | ${within(v, (a, b) => a / b).toFixed(2)}× | ` +
      `${within(v, (a, b) => a - b).toFixed(2)} |`);
  }
}
workerd.kill();
fs.rmSync(dir, { recursive: true, force: true });
