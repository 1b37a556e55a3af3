// The edge fleet: shared origin health and the outbox across the isolates of a Cloudflare
// Worker, over Durable Objects, in the real runtime: workerd, with one service per isolate
// (each its own globals), one Durable Object namespace per class, the package bundled as
// wrangler bundles it, and the fault server on 127.0.0.1. Every call is a request of its own
// to an isolate (Workers forbid I/O objects across requests).
import test from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { ORIGIN_A, SCRATCH, serverLog, sleep, uid } from "./helpers.mjs";
import { judge } from "./share-tab.mjs";

const TOOLS_BIN = path.join(process.env.RF_TOOLS_DIR, "node_modules", ".bin");

// One module for every service: an isolate's client is made at module load (the README's
// Worker), from `env` (cloudflare:workers); MODE says which client the service has.
export const WORKER = `
import { env } from "cloudflare:workers";
import { DurableObject } from "cloudflare:workers";
import { ResilientClient, OriginHealth, DurableOutbox, durableOutbox } from "resilient-fetch";
export { OriginHealth, DurableOutbox };

/** An object that fails every exchange, and one that never answers: the object unreachable. */
export class FailingHealth extends DurableObject { exchange() { throw new Error("down"); } }
export class HangingHealth extends DurableObject { exchange() { return new Promise(() => {}); } }

const moves = [];
const share = env.RF_HEALTH ? { share: { name: env.SHARE_NAME, durableObject: env.RF_HEALTH } } : {};
const client = new ResilientClient({
  ...share,
  retry: false,
  timeoutMs: 2000,
  breaker: { mode: "consecutive", failureThreshold: 5, cooldownMs: Number(env.COOLDOWN_MS ?? 1000) },
  onEvent: (e) => { if (e.type === "breakerTransition") moves.push({ to: e.to, at: Date.now() }); },
});
const outbox = env.RF_OUTBOX && new ResilientClient({
  retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 },
  breaker: false,
  outbox: { name: env.OUTBOX_NAME, store: durableOutbox(env.RF_OUTBOX) },
});

export default {
  async fetch(request) {
    const url = new URL(request.url), q = url.searchParams;
    if (url.pathname === "/call") {
      const started = performance.now();
      const outcome = await client.fetch(q.get("url")).then(async (r) => { await r.text(); return r.status; }, (e) => e.name);
      return Response.json({ outcome, ms: performance.now() - started });
    }
    if (url.pathname === "/report") return Response.json({ moves, state: client.breakerState(q.get("url")) });
    if (url.pathname === "/keep") {
      const outcome = await outbox.fetch(q.get("url"), {
        method: "POST", body: q.get("body"), headers: { authorization: "Bearer s3cr3t", "content-type": "text/plain" },
      }).then((r) => ({ status: r.status }), (e) => ({ error: e.name, id: e.id, reason: e.reason }));
      return Response.json(outcome);
    }
    if (url.pathname === "/outbox") return Response.json(await outbox.outbox.list());
    if (url.pathname === "/exchange") {
      // Straight to the object, as anything that can reach it could.
      const stub = env.RF_HEALTH.get(env.RF_HEALTH.idFromName(q.get("name")));
      return Response.json(await stub.exchange(JSON.parse(q.get("batch"))));
    }
    return new Response("not found", { status: 404 });
  },
};
`;

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Bundles WORKER into `dir` as wrangler would (conditions workerd, worker, browser; the wasm a module). */
export function bundle(dir) {
  fs.mkdirSync(path.join(dir, "web"), { recursive: true });
  fs.writeFileSync(path.join(SCRATCH, "edge-worker.mjs"), WORKER);
  execFileSync(path.join(TOOLS_BIN, "esbuild"), ["edge-worker.mjs", "--bundle", "--format=esm",
    "--platform=neutral", "--conditions=workerd,worker,browser", "--external:*.wasm", "--external:cloudflare:*",
    `--outfile=${path.join(dir, "worker.js")}`, "--log-level=warning"], { cwd: SCRATCH, stdio: "inherit" });
  fs.copyFileSync(path.join(SCRATCH, "node_modules", "resilient-fetch", "web", "resilient_fetch_bg.wasm"),
    path.join(dir, "web", "resilient_fetch_bg.wasm"));
}

/**
 * A workerd config: `isolates` is { serviceName: { vars, health: namespace, outbox: namespace } },
 * each served on its own port; the "objects" service hosts every namespace, with its storage
 * in memory or on `disk` (a directory). Returns { text, ports }.
 */
export async function config(isolates, { disk } = {}) {
  const ports = {};
  for (const name of Object.keys(isolates)) ports[name] = await freePort();
  const modules = `modules = [
    (name = "worker.js", esModule = embed "worker.js"),
    (name = "web/resilient_fetch_bg.wasm", wasm = embed "web/resilient_fetch_bg.wasm"),
  ], compatibilityDate = "2026-11-01"`;
  const ns = (className) => `(className = "${className}", serviceName = "objects")`;
  const services = Object.entries(isolates).map(([name, { vars = {}, health, outbox }]) => {
    const bindings = [
      ...Object.entries(vars).map(([k, v]) => `(name = "${k}", text = "${v}")`),
      ...(health ? [`(name = "RF_HEALTH", durableObjectNamespace = ${ns(health)})`] : []),
      ...(outbox ? [`(name = "RF_OUTBOX", durableObjectNamespace = ${ns(outbox)})`] : []),
    ];
    return `(name = "${name}", worker = (${modules}, bindings = [${bindings.join(", ")}]))`;
  });
  const classes = ["OriginHealth", "DurableOutbox", "FailingHealth", "HangingHealth"];
  const text = `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    ${services.join(",\n    ")},
    (name = "objects", worker = (${modules},
      durableObjectNamespaces = [${classes.map((c) => `(className = "${c}", uniqueKey = "rf-${c}")`).join(", ")}],
      durableObjectStorage = ${disk ? "(localDisk = \"disk\")" : "(inMemory = void)"})),
    ${disk ? `(name = "disk", disk = (path = "${disk}", writable = true)),` : ""}
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [
    ${Object.entries(ports).map(([name, port]) => `(name = "${name}", address = "127.0.0.1:${port}", http = (), service = "${name}")`).join(",\n    ")}
  ],
);
`;
  return { text, ports };
}

/** Starts workerd on `configText` in `dir`: { stop(), logs() }; resolves once every port answers. */
export async function startWorkerd(dir, configText, ports) {
  fs.writeFileSync(path.join(dir, "config.capnp"), configText);
  const child = spawn(path.join(TOOLS_BIN, "workerd"), ["serve", "config.capnp", "--verbose"], { cwd: dir });
  let logs = "";
  child.stdout.on("data", (d) => { logs += d; });
  child.stderr.on("data", (d) => { logs += d; });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const stop = async () => {
    child.kill("SIGKILL");
    await exited;
  };
  for (const port of Object.values(ports)) {
    let up = false;
    for (let i = 0; i < 100 && !up; i++) {
      up = await fetch(`http://127.0.0.1:${port}/nothing`).then(() => true, () => false);
      if (!up) await sleep(100);
    }
    if (!up) {
      await stop();
      throw new Error(`workerd did not answer on ${port}\n${logs}`);
    }
  }
  return { stop, logs: () => logs };
}

/** One call through isolate `port`: { outcome (a status or an error's name), ms (in the isolate) }. */
async function call(port, url) {
  const res = await fetch(`http://127.0.0.1:${port}/call?url=${encodeURIComponent(url)}`);
  return res.json();
}

test("five isolates through a 10 s outage over one OriginHealth object: at most 1.5x one isolate's requests, one probe per cooldown, all closed within a second of the probe; without it about 5x", { timeout: 90_000 }, async (t) => {
  const dir = path.join(SCRATCH, "edge-fleet");
  bundle(dir);
  const N = 5, cooldownMs = 1000, ms = 10_000, everyMs = 50;
  const name = uid("fleet");
  const isolates = { alone: {} };
  for (let i = 0; i < N; i++) {
    isolates[`shared${i}`] = { health: "OriginHealth", vars: { SHARE_NAME: name } };
    isolates[`plain${i}`] = {};
  }
  const { text, ports } = await config(isolates);
  const workerd = await startWorkerd(dir, text, ports);
  try {
    const from = Date.now() + 1500, stopAt = from + ms + 1500;
    const ids = { alone: uid("alone"), shared: uid("shared"), plain: uid("plain") };
    const urlOf = (service) => `${ORIGIN_A}/outage?id=${ids[service.replace(/\d+$/, "")]}&from=${from}&ms=${ms}`;
    // Each isolate: one call every 50 ms, each a request of its own, none waiting for another.
    const drive = async (service) => {
      const pending = [];
      await sleep(from - 500 - Date.now());
      while (Date.now() < stopAt) {
        pending.push(call(ports[service], urlOf(service)).catch((e) => ({ outcome: `driver: ${e.message}` })));
        await sleep(everyMs);
      }
      return Promise.all(pending);
    };
    const outcomes = await Promise.all(Object.keys(isolates).map(drive));
    assert.ok(outcomes.flat().every((o) => typeof o.outcome === "number" || o.outcome === "CircuitOpenError"),
      `every call answered or was refused: ${JSON.stringify(outcomes.flat().filter((o) => typeof o.outcome !== "number").slice(0, 5))}`);
    const reports = {};
    for (const service of Object.keys(isolates)) {
      reports[service] = await (await fetch(`http://127.0.0.1:${ports[service]}/report?url=${encodeURIComponent(urlOf(service))}`)).json();
    }
    const shared = Object.keys(isolates).filter((s) => s.startsWith("shared"));
    // The fleet is open once every isolate's breaker is: what it sends after that are probes.
    const opened = shared.map((s) => reports[s].moves.find((m) => m.to === "open")?.at ?? Infinity);
    const verdict = judge({
      shared: await serverLog(ORIGIN_A, ids.shared), alone: await serverLog(ORIGIN_A, ids.alone), from, ms,
      firstOpen: Math.max(...opened),
    });
    const plainCount = (await serverLog(ORIGIN_A, ids.plain)).filter((e) => e.t >= from && e.t < from + ms).length;
    const closedAfter = shared.map((s) => (reports[s].moves.filter((m) => m.to === "closed").at(-1)?.at ?? NaN) - verdict.recovery?.t);
    const detail = JSON.stringify({ ...verdict, plainCount, closedAfter });
    t.diagnostic(`during the outage: ${N} isolates over the object ${verdict.sharedCount} requests, one alone ` +
      `${verdict.aloneCount}, ${N} without the object ${plainCount} (${(plainCount / verdict.aloneCount).toFixed(1)}x); ` +
      `all open ${Math.max(...opened) - Math.min(...opened)} ms after the first; ${verdict.probes.length} probes, gaps ${verdict.gaps.join(" ")} ms; closed ${closedAfter.join(" ")} ms after the probe`);
    if (process.env.RF_EDGE_DEBUG) {
      const log = await serverLog(ORIGIN_A, ids.shared);
      t.diagnostic(JSON.stringify(log.filter((e) => e.t >= from - 100 && e.t < from + 400).map((e) => [e.t - from, e.status])));
      t.diagnostic(JSON.stringify(shared.map((s) => reports[s].moves.slice(0, 3).map((m) => [m.to, m.at - from]))));
    }
    assert.ok(verdict.aloneCount >= 10, `the lone isolate saw the outage: ${detail}`);
    assert.ok(verdict.sharedCount <= 1.5 * verdict.aloneCount, `over the object ${verdict.sharedCount} vs alone ${verdict.aloneCount}: ${detail}`);
    assert.ok(plainCount >= 0.8 * N * verdict.aloneCount, `without the object, about ${N}x: ${plainCount} vs ${verdict.aloneCount}: ${detail}`);
    assert.ok(verdict.probes.length >= 7, `probes went on through the outage: ${detail}`);
    assert.ok(verdict.gaps.every((g) => g >= 0.9 * cooldownMs && g <= 1.6 * cooldownMs), `one probe per cooldown: ${detail}`);
    assert.equal(verdict.recovery?.status, 200, detail);
    for (const [i, s] of shared.entries()) {
      assert.equal(reports[s].state, "closed", `${s}: ${detail}`);
      assert.ok(closedAfter[i] >= 0 && closedAfter[i] <= 1000, `${s} closed ${closedAfter[i]} ms after the probe: ${detail}`);
    }
    // What the object holds and answers: origins, states, times and ranks, never a path or query.
    const seen = await (await fetch(`http://127.0.0.1:${ports.shared0}/exchange?name=${name}&batch=${encodeURIComponent(JSON.stringify({ cursor: 1, notes: [] }))}`)).text();
    assert.ok(!seen.includes("outage") && !seen.includes(ids.shared), seen);
  } finally {
    await workerd.stop();
  }
});
