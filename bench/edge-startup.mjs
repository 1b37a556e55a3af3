// The first request of a fresh workerd isolate, with the package and without it (issue #45's
// goal: through the package, at most 5 ms more). Each sample is a new workerd process serving
// one worker: "without" answers from a stub `fetch` made at module load; "with" sends the same
// stub through a ResilientClient of the lean build made at module load, as README's Worker does
// (`resilient-fetch`, the workerd condition: the wasm imported as a compiled module and
// instantiated at the module's evaluation). Timed in Node: from the process's start until its
// socket accepts (no request is sent before the timed one), then the first request, its
// answer read. Variants take turns; the medians and the median of the per-pair differences.
//
//   node bench/edge-startup.mjs     # needs pkg/ (scripts/build.sh) and tools/ (workerd, esbuild)
//
// A third worker, "loaded", makes the client at module load but answers without it: what the
// package's loading (its evaluation, the wasm's instantiation, the client) adds, apart from the
// first call. Knob: BENCH_EDGE_STARTUP_RUNS (runs of the three, default 11). Only 127.0.0.1.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, "..");
const tools = path.join(process.env.RF_TOOLS_DIR ?? path.join(root, "tools"), "node_modules", ".bin");
const RUNS = Number(process.env.BENCH_EDGE_STARTUP_RUNS ?? 11);

const STUB = `const stub = () => Promise.resolve(new Response("ok"));`;
const WORKERS = {
  without: `${STUB}
export default { async fetch() { return new Response(await (await stub("https://api.example.com/x")).text()); } };
`,
  // The client made at module load, the request answered without it: what loading costs.
  loaded: `import { ResilientClient } from "resilient-fetch";
${STUB}
const api = new ResilientClient({ fetch: stub, timeoutMs: 2000, totalTimeoutMs: 5000 });
export default { async fetch() { return new Response(await (await stub("https://api.example.com/x")).text()); } };
`,
  with: `import { ResilientClient } from "resilient-fetch";
${STUB}
const api = new ResilientClient({ fetch: stub, timeoutMs: 2000, totalTimeoutMs: 5000 });
export default { async fetch() { return new Response(await (await api.fetch("https://api.example.com/x")).text()); } };
`,
};

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rf-bench-edge-startup-"));
fs.mkdirSync(path.join(dir, "node_modules"));
fs.symlinkSync(path.join(root, "pkg"), path.join(dir, "node_modules", "resilient-fetch"));

/** A free port on 127.0.0.1. */
const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/** Builds variant `name` into its own folder; returns it. */
function build(name) {
  const src = path.join(dir, `${name}.mjs`);
  const out = path.join(dir, name);
  fs.writeFileSync(src, WORKERS[name]);
  execFileSync(path.join(tools, "esbuild"), [src, "--bundle", "--format=esm", "--platform=neutral",
    "--conditions=workerd,worker,browser", "--external:*.wasm", "--external:cloudflare:*", `--outfile=${out}/worker.js`,
    "--log-level=warning"], { cwd: dir, stdio: "inherit" });
  const wasm = fs.existsSync(path.join(out, "worker.js")) && fs.readFileSync(path.join(out, "worker.js"), "utf8").includes("resilient_fetch_bg.wasm");
  if (wasm) {
    fs.mkdirSync(path.join(out, "web"), { recursive: true });
    fs.copyFileSync(path.join(root, "pkg", "web", "resilient_fetch_bg.wasm"), path.join(out, "web", "resilient_fetch_bg.wasm"));
  }
  fs.writeFileSync(path.join(out, "modules.capnp"), `modules = [(name = "worker.js", esModule = embed "worker.js")${
    wasm ? `, (name = "web/resilient_fetch_bg.wasm", wasm = embed "web/resilient_fetch_bg.wasm")` : ""}]`);
  return out;
}

/** Whether something accepts connections on `port` now. */
const accepts = (port) =>
  new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1", () => { s.destroy(); resolve(true); });
    s.on("error", () => resolve(false));
  });

/** One fresh workerd serving `folder`: { listenMs, firstMs }. */
async function sample(folder) {
  const port = await freePort();
  const modules = fs.readFileSync(path.join(folder, "modules.capnp"), "utf8");
  fs.writeFileSync(path.join(folder, "config.capnp"), `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = (${modules}, compatibilityDate = "2026-11-01"))],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
`);
  const started = performance.now();
  const workerd = spawn(path.join(tools, "workerd"), ["serve", "config.capnp"], { cwd: folder, stdio: ["ignore", "ignore", "inherit"] });
  try {
    let listening = false;
    for (let i = 0; i < 2000 && !listening; i++) {
      listening = await accepts(port);
      if (!listening) await new Promise((r) => setTimeout(r, 2));
    }
    if (!listening) throw new Error("workerd did not listen");
    const listenMs = performance.now() - started;
    const t0 = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}/`);
    const text = await res.text();
    const firstMs = performance.now() - t0;
    if (res.status !== 200 || text !== "ok") throw new Error(`first request: ${res.status} ${text}`);
    return { listenMs, firstMs };
  } finally {
    workerd.kill();
    await new Promise((r) => workerd.once("exit", r));
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const names = Object.keys(WORKERS);
const folders = Object.fromEntries(names.map((name) => [name, build(name)]));
for (const name of names) await sample(folders[name]); // warms the OS file cache
const got = Object.fromEntries(names.map((name) => [name, []]));
for (let run = 0; run < RUNS; run++) {
  for (const name of run % 2 ? [...names].reverse() : names) got[name].push(await sample(folders[name]));
}
const ms = (x) => x.toFixed(2);
const over = (name, key) => median(got[name].map((s, i) => s[key] - got.without[i][key]));
console.log(`workerd, a fresh isolate per sample (median of ${RUNS}; "+ ms": the median of the per-run differences with "without")`);
console.log("| | without the package | loaded, not called | + ms | called (lean) | + ms |\n| --- | ---: | ---: | ---: | ---: | ---: |");
for (const [label, key] of [["start → socket accepts", "listenMs"], ["first request → its answer read", "firstMs"]]) {
  const m = (name) => ms(median(got[name].map((s) => s[key])));
  console.log(`| ${label} | ${m("without")} | ${m("loaded")} | ${ms(over("loaded", key))} | ${m("with")} | ${ms(over("with", key))} |`);
}
fs.rmSync(dir, { recursive: true, force: true });
