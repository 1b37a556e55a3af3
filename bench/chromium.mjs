// Headless Chromium for the browser benchmarks (browser.mjs, startup.mjs): a small static
// server on 127.0.0.1 whose pages are cross-origin isolated (COOP + COEP, so that
// performance.now() is fine-grained), Chromium launched directly (no DevTools connection) on
// one of its pages, and the page's results POSTed back to the server.

import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const CHROMIUM = process.env.BENCH_CHROMIUM ?? "/usr/bin/chromium";
export const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage",
];

/** esbuild, the project's copy (tools/node_modules), as size.mjs uses it. */
export const esbuild = createRequire(import.meta.url)(join(here, "../tools/node_modules/esbuild"));

/** Bundles `contents` (an ES module, resolved from bench/) for the browser: minified ESM bytes. */
export async function bundle(contents, { minify = true } = {}) {
  const result = await esbuild.build({
    stdin: { contents, resolveDir: here, loader: "js" },
    bundle: true,
    minify,
    format: "esm",
    platform: "browser",
    write: false,
    logLevel: "silent",
  });
  return result.outputFiles[0].contents;
}

/**
 * Bundles `contents` as bundle() does, to be served at `path`, and finds the wasm files its
 * modules load by URL (`new URL("x.wasm", import.meta.url)`, as wasm-bindgen's web glue does):
 * a Map from URL path to bytes holding the bundle and each wasm where the bundle's
 * `import.meta.url` puts it. Throws if two modules would put different wasm files at one path
 * (bundle those apart, at different paths).
 */
export async function bundleWithWasm(contents, path) {
  const result = await esbuild.build({
    stdin: { contents, resolveDir: here, loader: "js" },
    absWorkingDir: here,
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    write: false,
    metafile: true,
    logLevel: "silent",
  });
  const code = result.outputFiles[0].contents;
  const text = Buffer.from(code).toString("utf8");
  const files = new Map([[path, code]]);
  for (const input of Object.keys(result.metafile.inputs)) {
    const file = resolve(here, input);
    if (!existsSync(file)) continue; // <stdin>
    const source = readFileSync(file, "utf8");
    for (const [, , name] of source.matchAll(/new URL\(\s*(['"])([^'"]+\.wasm)\1\s*,\s*import\.meta\.url\s*\)/g)) {
      if (!text.includes(name)) continue; // dropped from the bundle
      const at = new URL(name, `http://127.0.0.1${path}`).pathname;
      const bytes = readFileSync(resolve(dirname(file), name));
      if (files.has(at) && !Buffer.from(files.get(at)).equals(bytes)) throw new Error(`${path}: two different wasm files would be served at ${at}`);
      files.set(at, bytes);
    }
  }
  return files;
}

export function chromiumVersion() {
  try {
    return execFileSync(CHROMIUM, ["--version"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return "Chromium (version unknown)";
  }
}

export const haveChromium = () => existsSync(CHROMIUM);

const TYPES = { ".html": "text/html", ".js": "text/javascript", ".wasm": "application/wasm" };

/**
 * Serves `files` (a Map from URL path to bytes or string) on 127.0.0.1, every response cross-
 * origin isolated and never cached; POST /report?id=ID hands its JSON body to report(id).
 */
export async function startServer(files) {
  const waiting = new Map(); // id -> resolve
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://127.0.0.1");
    const headers = {
      "cross-origin-opener-policy": "same-origin",
      "cross-origin-embedder-policy": "require-corp",
      "cross-origin-resource-policy": "same-origin",
      "cache-control": "no-store",
    };
    if (req.method === "POST" && url.pathname === "/report") {
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (d) => (body += d));
      req.on("end", () => {
        res.writeHead(204, headers).end();
        const id = url.searchParams.get("id");
        let value;
        try {
          value = JSON.parse(body);
        } catch {
          value = { error: `unreadable report: ${body.slice(0, 200)}` };
        }
        waiting.get(id)?.(value);
        waiting.delete(id);
      });
      return;
    }
    const file = files.get(url.pathname);
    if (req.method !== "GET" || file === undefined) {
      res.writeHead(404, headers).end();
      return;
    }
    const ext = url.pathname.slice(url.pathname.lastIndexOf("."));
    res.writeHead(200, { ...headers, "content-type": TYPES[ext] ?? "application/octet-stream" });
    res.end(file);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;
  return {
    origin,
    files,
    /** The next report for `id`. */
    report: (id) => new Promise((resolve) => waiting.set(id, resolve)),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** The page shell: an inline module that reports `body`'s result (or its error) to the server. */
export function page(id, body) {
  return `<!doctype html><meta charset="utf-8"><title>bench</title>
<script type="module">
const realFetch = globalThis.fetch.bind(globalThis);
const report = (value) => realFetch("/report?id=${id}", { method: "POST", body: JSON.stringify(value) });
addEventListener("error", (e) => report({ error: String(e.message) }));
addEventListener("unhandledrejection", (e) => report({ error: String(e.reason?.stack ?? e.reason) }));
try {
  const result = await (async () => {
${body}
  })();
  await report({ result, crossOriginIsolated, userAgent: navigator.userAgent });
} catch (e) {
  await report({ error: String(e?.stack ?? e) });
}
</script>`;
}

let nextId = 0;

/**
 * Opens `body` (see page()) in a fresh headless Chromium (its own empty profile, so nothing is
 * cached) and resolves with what the page reports; Chromium is then closed. Rejects on a page
 * error, on Chromium exiting first, or after `timeoutMs`.
 */
export async function runInChromium(server, body, { timeoutMs = 600_000 } = {}) {
  const id = `p${++nextId}`;
  const path = `/${id}.html`;
  server.files.set(path, page(id, body));
  const profile = mkdtempSync(join(tmpdir(), "rf-bench-chromium-"));
  const reported = server.report(id);
  const child = spawn(CHROMIUM, [...FLAGS, `--user-data-dir=${profile}`, `${server.origin}${path}`], {
    detached: true, // its own process group, so that Chromium's helpers go with it
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (d) => (stderr = (stderr + d).slice(-4000)));
  const exited = new Promise((resolve) => child.on("exit", resolve));
  let timer;
  try {
    const outcome = await Promise.race([
      reported,
      exited.then((code) => ({ error: `Chromium exited (${code}) before the page reported:\n${stderr}` })),
      new Promise((resolve) => {
        timer = setTimeout(() => resolve({ error: `no report within ${timeoutMs} ms` }), timeoutMs);
      }),
    ]);
    if (outcome.error) throw new Error(`Chromium page: ${outcome.error}`);
    if (!outcome.crossOriginIsolated) throw new Error("the page was not cross-origin isolated");
    return outcome;
  } finally {
    clearTimeout(timer);
    server.files.delete(path);
    if (child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {}
      const killer = setTimeout(() => {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {}
      }, 5000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(profile, { recursive: true, force: true });
  }
}
