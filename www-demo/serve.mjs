// Serves the demo page and the built package on 127.0.0.1, with the chaos
// backend (two origins) whose faults the page controls.
//   node www-demo/serve.mjs [--port 8080] [--backend-ports 8081,8082]
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startFaultServer } from "../tests/server/fault-server.mjs";

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

const backend = await startFaultServer(backendPorts)
  .catch((e) => portError(e, `one of the backend ports ${backendPorts.join(" and ")}`));

const server = http.createServer((req, res) => {
  const pathname = decodeURIComponent(new URL(req.url, "http://x").pathname);
  if (pathname === "/backend.json") {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ a: backend.a, b: backend.b }));
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
  console.log(JSON.stringify({ demo: url, a: backend.a, b: backend.b }));
  console.error(`demo: ${url}  (backend origins ${backend.a} and ${backend.b}; Ctrl-C stops)`);
});
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => process.exit(0));
