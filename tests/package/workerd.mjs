// A Cloudflare Worker in the real runtime, on 127.0.0.1 only: the package bundled as wrangler
// bundles it, a workerd config with one service per isolate (each its own globals) and the
// Durable Object namespaces in one service, and the workerd binary of tools/. Used by the edge
// tests (edge.test.mjs, beside it, so that tests/package/run.mjs copies it with them) and the
// demo's Workers lane (www-demo/edge-fleet.mjs).
import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A port free on 127.0.0.1 when asked (another program may take it before it is bound). */
export function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * Bundles `source` (a Worker module importing "resilient-fetch" or "resilient-fetch/full", whose
 * wasm it takes) into `out` as wrangler would:
 * conditions workerd, worker, browser; the wasm a module of its own, copied beside it. `project`
 * is the folder whose node_modules hold resilient-fetch; `bin` the folder of the esbuild binary.
 */
export function bundle({ source, project, out, bin }) {
  fs.mkdirSync(path.join(out, "web"), { recursive: true });
  fs.writeFileSync(path.join(project, "edge-worker.mjs"), source);
  execFileSync(path.join(bin, "esbuild"), ["edge-worker.mjs", "--bundle", "--format=esm",
    "--platform=neutral", "--conditions=workerd,worker,browser", "--external:*.wasm", "--external:cloudflare:*",
    `--outfile=${path.join(out, "worker.js")}`, "--log-level=warning"], { cwd: project, stdio: ["ignore", "inherit", "inherit"] });
  const build = /["']resilient-fetch\/full["']/.test(source) ? ["full"] : [];
  fs.copyFileSync(path.join(project, "node_modules", "resilient-fetch", ...build, "web", "resilient_fetch_bg.wasm"),
    path.join(out, "web", "resilient_fetch_bg.wasm"));
}

/**
 * A workerd config: `isolates` is { serviceName: { vars, health: namespace, outbox: namespace } },
 * each served on its own port of 127.0.0.1; the "objects" service hosts a namespace per name of
 * `classes` (classes the bundle exports), with its storage in memory or on `disk` (a directory).
 * Returns { text, ports }.
 */
export async function config(isolates, { classes, disk } = {}) {
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

/**
 * Starts the workerd binary in `bin` on `configText` in `dir`: { stop(), logs() }; resolves once
 * every port answers (with `probe` false: once workerd says it listens, and without a request to
 * any isolate).
 */
export async function startWorkerd(dir, configText, ports, { bin, probe = true } = {}) {
  fs.writeFileSync(path.join(dir, "config.capnp"), configText);
  const child = spawn(path.join(bin, "workerd"), ["serve", "config.capnp", "--verbose"], { cwd: dir });
  let logs = "";
  child.stdout.on("data", (d) => { logs += d; });
  child.stderr.on("data", (d) => { logs += d; });
  let gone = false;
  const exited = new Promise((resolve) => {
    child.once("exit", () => { gone = true; resolve(); });
    child.once("error", (e) => { logs += `${e.message}\n`; gone = true; resolve(); });
  });
  const stop = async () => {
    if (!gone) child.kill("SIGKILL");
    await exited;
  };
  const failed = () => gone || /Address already in use/.test(logs);
  const answers = probe
    ? (port) => fetch(`http://127.0.0.1:${port}/nothing`).then(() => true, () => false)
    // A TCP connection that sends nothing: workerd listens, and no isolate got a request.
    : (port) => new Promise((resolve) => {
      const socket = net.connect(port, "127.0.0.1", () => { socket.destroy(); resolve(true); });
      socket.once("error", () => resolve(false));
    });
  for (const port of Object.values(ports)) {
    let up = false;
    for (let i = 0; i < 100 && !up && !failed(); i++) {
      up = await answers(port);
      if (!up) await sleep(100);
    }
    if (!up || failed()) {
      await stop();
      throw new Error(`workerd did not answer on ${port}\n${logs}`);
    }
  }
  return { stop, logs: () => logs, pid: child.pid };
}

/**
 * `isolates` (see config) served by workerd in `dir`: { ports, stop(), logs() }. The ports are
 * free when picked, but another program may take one before workerd binds it: then again,
 * with other ports.
 */
export async function serve(dir, isolates, { bin, classes, disk, probe } = {}) {
  for (let attempt = 1; ; attempt++) {
    const { text, ports } = await config(isolates, { classes, disk });
    try {
      return { ports, ...(await startWorkerd(dir, text, ports, { bin, probe })) };
    } catch (e) {
      if (attempt === 3 || !/Address already in use/.test(e.message)) throw e;
    }
  }
}
