// The same smoke checks (smoke.mjs) in Node, Deno and Cloudflare's workerd,
// each importing the installed package by name through its exports map.
import test from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import * as api from "resilient-fetch";
import { ORIGIN_A, ORIGIN_B, SCRATCH, OUT } from "./helpers.mjs";
import { smoke } from "./smoke.mjs";

const TOOLS_BIN = path.join(process.env.RF_TOOLS_DIR, "node_modules", ".bin");
const results = {};

function assertSmoke(runtime, report) {
  results[runtime] = Object.fromEntries(Object.entries(report).map(([k, v]) => [k, v.ok]));
  for (const [name, { ok, detail }] of Object.entries(report)) {
    assert.ok(ok, `${runtime} ${name}: ${JSON.stringify(detail)}`);
  }
  assert.deepEqual(Object.keys(report), ["imports", "retries", "key", "timeout", "breaker", "share", "outbox"]);
}

/** Runs a command, resolving with its stdout; rejects with its output on failure or after `ms`. */
function run(cmd, args, { cwd, env, ms = 60000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env } });
    let out = "", err = "";
    child.stdout.on("data", (d) => { out += d; });
    child.stderr.on("data", (d) => { err += d; });
    const timer = setTimeout(() => { child.kill("SIGKILL"); reject(new Error(`timed out\n${out}\n${err}`)); }, ms);
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out); else reject(new Error(`${cmd} exited ${code}\n${out}\n${err}`));
    });
  });
}

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

test("Node (ESM, by name): imports, retries, key, timeout, breaker, share", async () => {
  assertSmoke("node", await smoke(api, ORIGIN_A, ORIGIN_B, "resilient-fetch"));
});

// Node 18: Debian's build, unpacked by scripts/toolchain.sh (RF_NODE18); skipped only where
// apt has none.
const node18 = process.env.RF_NODE18;
for (const [kind, args] of [
  ["ESM import", ["--input-type=module", "-e", `import * as api from "resilient-fetch";
    import { smoke } from "./smoke.mjs";
    console.log(JSON.stringify(await smoke(api, process.argv[1], process.argv[2], "resilient-fetch")));`]],
  ["CommonJS require", ["-e", `const api = require("resilient-fetch");
    import("./smoke.mjs").then(({ smoke }) => smoke(api, process.argv[1], process.argv[2], "resilient-fetch"))
      .then((r) => console.log(JSON.stringify(r)));`]],
]) {
  test(`Node 18 (${kind}): imports, retries, key, timeout, breaker, share`, { skip: !node18 && "no Node 18 here" }, async () => {
    const version = await run(node18, ["--version"]);
    assert.match(version, /^v18\./);
    const out = await run(node18, [...args, ORIGIN_A, ORIGIN_B], { cwd: SCRATCH });
    assertSmoke(`node18-${kind.split(" ")[0].toLowerCase()}`, JSON.parse(out.trim().split("\n").at(-1)));
  });
}

test("Deno (local node_modules, by name, no read permission): imports, retries, key, timeout, breaker, share", async () => {
  fs.writeFileSync(path.join(SCRATCH, "deno-main.mjs"), `
import * as api from "resilient-fetch";
import { smoke } from "./smoke.mjs";
console.log(JSON.stringify(await smoke(api, Deno.args[0], Deno.args[1], "resilient-fetch")));
`);
  const out = await run(path.join(TOOLS_BIN, "deno"),
    ["run", "--allow-net=127.0.0.1", "--allow-env", "deno-main.mjs", ORIGIN_A, ORIGIN_B],
    { cwd: SCRATCH, env: { DENO_NO_UPDATE_CHECK: "1", DENO_DIR: path.join(SCRATCH, ".deno") } });
  assertSmoke("deno", JSON.parse(out.trim().split("\n").at(-1)));
});

test("Cloudflare workerd (bundled with the workerd condition, wasm as a module)", async () => {
  const dir = path.join(SCRATCH, "worker");
  fs.mkdirSync(path.join(dir, "web"), { recursive: true });
  fs.writeFileSync(path.join(SCRATCH, "worker-main.mjs"), `
import * as api from "resilient-fetch";
import { smoke } from "./smoke.mjs";
// The README's Worker: a client made at module load, used by every request.
const upstream = new api.ResilientClient({ timeoutMs: 2000, totalTimeoutMs: 5000, retry: { baseDelayMs: 1, maxDelayMs: 5 } });
export default {
  async fetch(request) {
    const url = new URL(request.url), q = url.searchParams;
    if (url.pathname === "/upstream") return upstream.fetch(q.get("a") + "/flaky?fail=1&code=503&id=" + q.get("id"));
    if (url.pathname === "/upstream-stats") return Response.json(upstream.stats());
    return Response.json(await smoke(api, q.get("a"), q.get("b"), "resilient-fetch"));
  },
};
`);
  // Bundled as wrangler does: conditions workerd, worker, browser; .wasm kept as a module
  // import, and the runtime's own modules (cloudflare:workers) left to it.
  execFileSync(path.join(TOOLS_BIN, "esbuild"), ["worker-main.mjs", "--bundle", "--format=esm",
    "--platform=neutral", "--conditions=workerd,worker,browser", "--external:*.wasm", "--external:cloudflare:*",
    `--outfile=${path.join(dir, "worker.js")}`, "--log-level=warning"], { cwd: SCRATCH, stdio: "inherit" });
  // Other runtimes of the "worker" condition have no cloudflare:workers: their entry does not import it.
  execFileSync(path.join(TOOLS_BIN, "esbuild"), ["worker-main.mjs", "--bundle", "--format=esm",
    "--platform=neutral", "--conditions=worker,browser", "--external:*.wasm", `--outfile=${path.join(dir, "other.js")}`,
    "--log-level=warning"], { cwd: SCRATCH, stdio: "inherit" });
  assert.ok(!fs.readFileSync(path.join(dir, "other.js"), "utf8").includes("cloudflare:"), "the worker entry imports cloudflare:*");
  const bundle = fs.readFileSync(path.join(dir, "worker.js"), "utf8");
  const wasmImport = /from\s*"(\.\/web\/resilient_fetch_bg\.wasm)"/.exec(bundle);
  assert.ok(wasmImport, "the bundle does not import the wasm as a module");
  fs.copyFileSync(path.join(SCRATCH, "node_modules", "resilient-fetch", "web", "resilient_fetch_bg.wasm"),
    path.join(dir, "web", "resilient_fetch_bg.wasm"));
  const port = await freePort();
  fs.writeFileSync(path.join(dir, "config.capnp"), `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    # Let the worker reach the fault server on 127.0.0.1.
    (name = "internet", network = (allow = ["public", "private", "local"])),
  ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "worker.js"),
    (name = "web/resilient_fetch_bg.wasm", wasm = embed "web/resilient_fetch_bg.wasm"),
  ],
  compatibilityDate = "2026-11-01",
);
`);
  const child = spawn(path.join(TOOLS_BIN, "workerd"), ["serve", "config.capnp", "--verbose"], { cwd: dir });
  let logs = "";
  child.stdout.on("data", (d) => { logs += d; });
  child.stderr.on("data", (d) => { logs += d; });
  try {
    let res;
    for (let i = 0; i < 100 && !res; i++) {
      res = await fetch(`http://127.0.0.1:${port}/?a=${ORIGIN_A}&b=${ORIGIN_B}`).catch(() => null);
      if (!res) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(res, `workerd did not answer\n${logs}`);
    const text = await res.text();
    assert.equal(res.status, 200, `${text}\n${logs}`);
    assertSmoke("workerd", JSON.parse(text));
    // The module-load client across requests: each retried once, its counts kept between them.
    for (let i = 0; i < 3; i++) {
      const up = await fetch(`http://127.0.0.1:${port}/upstream?a=${ORIGIN_A}&id=worker-upstream-${process.pid}-${i}`);
      const body = await up.text();
      assert.equal(up.status, 200, `${body}\n${logs}`);
      assert.match(body, /^ok after 1/);
    }
    const stats = await (await fetch(`http://127.0.0.1:${port}/upstream-stats`)).json();
    assert.deepEqual([stats[ORIGIN_A]?.attempts, stats[ORIGIN_A]?.retries, stats[ORIGIN_A]?.successes], [6, 3, 3]);
  } finally {
    child.kill();
  }
});

test.after(() => {
  fs.writeFileSync(path.join(OUT, "runtimes.json"), JSON.stringify(results, null, 2));
});
