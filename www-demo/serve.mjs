// Serves the demo page and the built package on 127.0.0.1, with the chaos
// backend (two origins) whose faults the page controls, and a workerd of ten
// isolates for the Cloudflare Workers lane (www-demo/edge-fleet.mjs).
//   node www-demo/serve.mjs [--port 8080] [--backend-ports 8081,8082]
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startFaultServer } from "../tests/server/fault-server.mjs";
import { startFleet } from "./edge-fleet.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : dflt;
};
const port = Number(arg("--port", "8080"));
const backendPorts = arg("--backend-ports", "8081,8082").split(",").map(Number);

// URL prefix -> folder
const MOUNTS = [["/pkg/", path.resolve(here, "..", "pkg")], ["/", here]];
const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".mjs": "text/javascript",
  ".css": "text/css", ".wasm": "application/wasm", ".json": "application/json", ".svg": "image/svg+xml" };

/** Ends with one line saying which port is taken and how to pick others (no stack). */
function portError(e, what) {
  if (e?.code !== "EADDRINUSE") throw e;
  console.error(`demo: ${what} is already in use; pick free ports with --port N and --backend-ports N,M`);
  process.exit(1);
}

const root = path.resolve(here, "..");
const bin = path.join(process.env.RF_TOOLS_DIR || path.join(root, "tools"), "node_modules", ".bin");
// workerd starts beside the backend; when it cannot, the Workers lane says why and the rest runs.
const [backend, fleet] = await Promise.all([
  startFaultServer(backendPorts).catch((e) => portError(e, `one of the backend ports ${backendPorts.join(" and ")}`)),
  startFleet({ root, bin }).catch((e) => ({ error: e.message })),
]);
if (fleet.error) console.error(`demo: the Cloudflare Workers lane is off: ${fleet.error}`);
// workerd goes with this server: on Ctrl-C or a kill (and at any exit, at the latest).
process.on("exit", () => { if (fleet.pid) try { process.kill(fleet.pid, "SIGKILL"); } catch { /* gone */ } });
const edge = fleet.error ? { error: fleet.error } : { isolates: fleet.ports.shared.length };

const json = (res, status, body) => {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
};

/** The Workers lane: POST /edge/run starts an outage run against origin A; GET /edge/report follows it. */
async function edgeRoute(req, res, pathname) {
  if (fleet.error) return json(res, 503, { error: fleet.error });
  if (pathname === "/edge/run" && req.method === "POST") {
    const run = fleet.run(backend.a);
    return run ? json(res, 200, run) : json(res, 409, { error: "a run is under way" });
  }
  if (pathname === "/edge/report") return json(res, 200, await fleet.report());
  return json(res, 404, { error: "not found" });
}

/** The request's path, decoded; undefined for a path that is no URL's (`//`, a bad `%`). */
function pathOf(url) {
  try {
    return decodeURIComponent(new URL(url, "http://x").pathname);
  } catch {
    return undefined;
  }
}

const server = http.createServer((req, res) => {
  const pathname = pathOf(req.url);
  if (pathname === undefined) return json(res, 400, { error: "bad path" });
  if (pathname === "/backend.json") return json(res, 200, { a: backend.a, b: backend.b, edge });
  if (pathname.startsWith("/edge/")) {
    edgeRoute(req, res, pathname).catch((e) => json(res, 500, { error: e.message }));
    return;
  }
  const [prefix, dir] = MOUNTS.find(([p]) => pathname.startsWith(p));
  let file = path.resolve(dir, pathname.slice(prefix.length) || "index.html");
  if (!file.startsWith(dir)) { res.writeHead(403); res.end(); return; }
  if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, "index.html");
  fs.readFile(file, (err, data) => {
    if (err) { res.writeHead(404); res.end("not found"); return; }
    res.writeHead(200, { "content-type": TYPES[path.extname(file)] || "application/octet-stream",
      "cache-control": "no-store" });
    res.end(data);
  });
});
server.on("error", (e) => portError(e, `port ${port}`));
server.listen(port, "127.0.0.1", () => {
  const url = `http://127.0.0.1:${server.address().port}/`;
  console.log(JSON.stringify({ demo: url, a: backend.a, b: backend.b, edge: fleet.ports ?? fleet }));
  console.error(`demo: ${url}  (backend origins ${backend.a} and ${backend.b}; Ctrl-C stops)`);
});
for (const sig of ["SIGINT", "SIGTERM"]) {
  process.on(sig, async () => {
    await fleet.stop?.().catch(() => {});
    process.exit(0);
  });
}
