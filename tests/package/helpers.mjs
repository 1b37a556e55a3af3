// Shared by the package tests: origins of the fault server, a static file
// server on 127.0.0.1, and headless Chromium through playwright-core.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";

export const ORIGIN_A = must("RF_TEST_ORIGIN_A");
export const ORIGIN_B = must("RF_TEST_ORIGIN_B");
export const SCRATCH = must("RF_SCRATCH");
export const OUT = process.env.RF_OUT || SCRATCH;

function must(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run the tests through scripts/test.sh`);
  return v;
}

/** Tools installed by scripts/toolchain.sh in tools/ (playwright-core, vite). */
export const toolsRequire = createRequire(path.join(must("RF_TOOLS_DIR"), "package.json"));

/**
 * Makes packages of tools/ importable by name from the scratch project, as if its user had
 * installed them beside the package (the OpenTelemetry API and SDK): a link per package in
 * its node_modules. Node and esbuild follow a link to the package's own folder, so a package
 * and what it imports are one copy, whoever imports them.
 */
export function linkTools(names) {
  for (const name of names) {
    const link = path.join(SCRATCH, "node_modules", name);
    if (fs.existsSync(link)) continue;
    fs.mkdirSync(path.dirname(link), { recursive: true });
    fs.symlinkSync(path.join(must("RF_TOOLS_DIR"), "node_modules", name), link, "dir");
  }
}

// The platform's fetch as this module loaded: tests replace globalThis.fetch, and
// the server's logs are always read through the real one.
const platformFetch = globalThis.fetch;

/** The fault server's request log for one id. */
export async function serverLog(origin, id) {
  return (await platformFetch(`${origin}/log?id=${encodeURIComponent(id)}`)).json();
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls the server log (bounded) until pred holds; returns the last log read. */
export async function waitLog(origin, id, pred, ms = 3000) {
  const end = Date.now() + ms;
  let log;
  do {
    log = await serverLog(origin, id);
    if (pred(log)) return log;
    await sleep(20);
  } while (Date.now() < end);
  return log;
}

/** `p`, or a rejection naming `what` once `ms` have passed (the timer is cleared either way). */
export function within(p, ms, what) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not settled within ${ms} ms`)), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

/** Resolves to the error `p` rejects with, or null when it resolves. */
export const errorOf = (p) => Promise.resolve(p).then(() => null, (e) => e);

export const describeError = (e) => (e ? `${e.constructor?.name} ${e.name}: ${e.message}` : String(e));

/** Counts the listeners added to `signal` and not removed since: `.live`. */
export function countListeners(signal) {
  const counter = { live: 0 };
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = (...a) => { counter.live++; return add(...a); };
  signal.removeEventListener = (...a) => { counter.live--; return remove(...a); };
  return counter;
}

/**
 * Runs full garbage collections until `done()` holds (finalizers run between them), at
 * most `rounds` times; returns done(). Node exposes gc() to code once the flag is set.
 */
export async function collectUntil(done, rounds = 20) {
  const { setFlagsFromString } = await import("node:v8");
  const { runInNewContext } = await import("node:vm");
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc");
  for (let i = 0; i < rounds && !done(); i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return done();
}

/** A unique id per test, so server-side counts never mix. */
export const uid = (name) => `${name}-${process.pid}-${Math.random().toString(36).slice(2)}`;

const TYPES = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript",
  ".wasm": "application/wasm", ".css": "text/css", ".json": "application/json" };

/**
 * Serves `dir` on 127.0.0.1 (a random port); resolves to { url, close }. `handle(req, res)`,
 * if given, answers the requests it returns true for.
 */
export function serveStatic(dir, handle) {
  const root = path.resolve(dir);
  const server = http.createServer((req, res) => {
    if (handle?.(req, res)) return;
    const rel = decodeURIComponent(new URL(req.url, "http://x").pathname).replace(/^\/+/, "") || "index.html";
    const file = path.resolve(root, rel);
    if (!file.startsWith(root)) { res.writeHead(403); res.end(); return; }
    fs.readFile(file, (err, data) => {
      if (err) { res.writeHead(404); res.end(); return; }
      res.writeHead(200, { "content-type": TYPES[path.extname(file)] || "application/octet-stream" });
      res.end(data);
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(r); }),
  })));
}

/** Debian's Chromium, headless, driven by playwright-core (with `extraArgs` on its command line). */
export async function launchChromium(extraArgs = []) {
  const { chromium } = toolsRequire("playwright-core");
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
      "--disable-dev-shm-usage", ...extraArgs],
  });
}

/**
 * Chromium flags for tests that run several tabs at once: a browser throttles the timers of
 * hidden tabs, which would change how often each sends, not what the tests look at.
 */
export const EVERY_TAB_AWAKE = ["--disable-background-timer-throttling", "--disable-renderer-backgrounding",
  "--disable-backgrounding-occluded-windows"];

/** Opens `url`, waits until the page sets window.__result (or throws its window.__error). */
export async function pageResult(browser, url, { screenshot, timeout = 20000 } = {}) {
  const page = await browser.newPage();
  const logs = [];
  page.on("console", (m) => logs.push(`${m.type()}: ${m.text()}`));
  page.on("pageerror", (e) => logs.push(`pageerror: ${e.message}`));
  try {
    await page.goto(url);
    await page.waitForFunction(() => window.__result !== undefined || window.__error !== undefined,
      null, { timeout });
    const { result, error } = await page.evaluate(() => ({ result: window.__result, error: window.__error }));
    if (screenshot) await page.screenshot({ path: path.join(OUT, screenshot) });
    if (error !== undefined) throw new Error(`page error: ${error}\n${logs.join("\n")}`);
    return { result, logs };
  } catch (e) {
    e.message += `\nconsole:\n${logs.join("\n")}`;
    throw e;
  } finally {
    await page.close();
  }
}

/** Whether this copy of a test file runs against resilient-fetch/full (tests/package/run.mjs). */
export const full = () => globalThis.RF_BUILD === "full";
/** A test's options that run it against the full build only (a capability the lean lacks). */
export const fullOnly = () => (full() ? {} : { skip: "a capability of resilient-fetch/full" });

// tsc and @types/node from tools/ (scripts/toolchain.sh), for the TypeScript tests.
const TSC = path.join(must("RF_TOOLS_DIR"), "node_modules", "typescript", "bin", "tsc");
const TYPE_ROOTS = path.join(must("RF_TOOLS_DIR"), "node_modules", "@types");
const TS_OPTIONS = {
  strict: true, noEmit: true, target: "es2022", module: "nodenext", moduleResolution: "nodenext",
  lib: ["es2022", "dom"], skipLibCheck: false, types: [],
};

/**
 * Type-checks `source` as main.ts of an ES module package in the scratch project (folder
 * ts-`name`), or as main.cts (CommonJS), with the DOM lib, or with `options` laid over the
 * compiler options (another lib and types): tsc's { status, stdout, stderr }.
 */
export function compileTs(name, source, file = "main.ts", options = {}, extraFiles = []) {
  const dir = path.join(SCRATCH, "ts-" + name);
  fs.mkdirSync(dir, { recursive: true });
  const compilerOptions = { ...TS_OPTIONS, typeRoots: [TYPE_ROOTS], ...options };
  fs.writeFileSync(path.join(dir, "tsconfig.json"),
    JSON.stringify({ compilerOptions, files: [file, ...extraFiles] }));
  fs.writeFileSync(path.join(dir, file), source);
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ type: "module" }));
  return spawnSync(process.execPath, [TSC, "-p", dir], { encoding: "utf8" });
}
