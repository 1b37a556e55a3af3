// The browser entry has no top-level await (issue #31): in Chromium, with the wasm held back by
// the server, the module's import resolves before the wasm is sent, every export is callable at
// once, and what was called before the wasm was ready runs once it is. The package used as a
// page uses it (a plain module import from node_modules), against the fault server.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { ORIGIN_A, SCRATCH, full, launchChromium, serveStatic } from "./helpers.mjs";

const HOLD_MS = 1500;

const PAGE = `<!doctype html><meta charset="utf-8">
<script type="module">
const q = new URLSearchParams(location.search);
const A = q.get("a"), id = q.get("id");
const platform = globalThis.fetch;
const api = await import("/node_modules/resilient-fetch/browser.js");
const importedAt = Date.now();
const early = {
  types: [api.resilientFetch, api.ResilientClient, api.install, api.uninstall, api.memoryBytes, api.default].map((f) => typeof f),
  stats: JSON.stringify(new api.ResilientClient().stats()),
  state: new api.ResilientClient().breakerState(A),
  memory: api.memoryBytes(),
};
// Made before the wasm is ready: nothing throws now; an invalid policy rejects the client's calls.
const client = new api.ResilientClient({ retry: false });
const invalid = new api.ResilientClient({ retry: { maxAttempts: 0 } });
// Two installs before ready: the second owns the global, the first's client still works.
const first = api.install({ retry: false });
const installed = api.install({ retry: { baseDelayMs: 1, maxDelayMs: 5 } });
early.installedYet = globalThis.fetch !== platform;
let wrapped = 0;
const own = installed.fetch;
installed.fetch = function (...args) { wrapped++; return own.apply(this, args); };
// The global's call before the wasm is ready is resilient too: the flaky 503 is retried.
const earlyGlobal = fetch(A + "/flaky?fail=1&id=" + id).then((r) => r.status, (e) => String(e));
const viaFirst = first.fetch(A + "/ok").then((r) => r.status, (e) => String(e));
const calls = [api.resilientFetch(A + "/ok"), client.fetch(A + "/ok")].map((p) => p.then((r) => r.status, (e) => String(e)));
const refused = invalid.fetch(A + "/ok").then(() => "resolved", (e) => e.constructor.name + ": " + e.message);
// A client that asks for an outbox has one at once (the lean build refuses the option once ready).
const writer = new api.ResilientClient({ outbox: { name: "startup-" + id }, retry: false });
const outboxAtOnce = typeof writer.outbox?.list;
const listed = writer.outbox.list().then((l) => l.length, (e) => e.constructor.name + ": " + e.message);
await api.default();
const readyAt = Date.now();
let thrown = null;
try { new api.ResilientClient({ retry: { maxAttempts: 0 } }); } catch (e) { thrown = e.constructor.name; }
const viaGlobal = await fetch(A + "/ok").then((r) => r.status, (e) => String(e));
// Read once the global's early call has ended (its retry included).
const earlyStatus = await earlyGlobal;
const flakyLog = await (await platform(A + "/log?id=" + id)).json();
window.__result = {
  importedAt, readyAt, early, statuses: await Promise.all(calls), refused: await refused, thrown,
  installed: globalThis.fetch !== platform, viaGlobal, wrapped, attempts: client.stats()[A]?.attempts,
  outboxAtOnce, listed: await listed,
  earlyGlobal: earlyStatus, flakyRequests: flakyLog.length, viaFirst: await viaFirst,
  memory: api.memoryBytes(), uninstalled: api.uninstall(), restored: globalThis.fetch === platform,
};
</script>`;

/** Serves `page` (held-back wasm) in Chromium: { result, wasmAnsweredAt, wasmRequests }. */
async function runPage(name, page) {
  const dir = path.join(SCRATCH, name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "index.html"), page);
  let wasmAnsweredAt = null;
  let wasmRequests = 0;
  const server = await serveStatic(SCRATCH, (req, res) => {
    if (!req.url.endsWith("resilient_fetch_bg.wasm")) return false;
    wasmRequests++;
    const file = path.join(SCRATCH, decodeURIComponent(new URL(req.url, "http://x").pathname));
    setTimeout(() => {
      wasmAnsweredAt = Date.now();
      res.writeHead(200, { "content-type": "application/wasm" });
      res.end(fs.readFileSync(file));
    }, HOLD_MS);
    return true;
  });
  const browser = await launchChromium();
  try {
    const tab = await browser.newPage();
    const errors = [];
    tab.on("pageerror", (e) => errors.push(String(e)));
    const id = `startup-${Date.now()}-${Math.random().toString(36).slice(2)}`;
    await tab.goto(`${server.url}/${name}/index.html?a=${encodeURIComponent(ORIGIN_A)}&id=${id}`);
    await tab.waitForFunction(() => window.__result, null, { timeout: 20_000 });
    const result = await tab.evaluate(() => window.__result);
    assert.deepEqual(errors, []);
    return { result, wasmAnsweredAt, wasmRequests };
  } finally {
    await browser.close();
    await server.close();
  }
}

test("the browser entry's import waits for no wasm; calls made before it is ready run once it is", async () => {
  const { result: r, wasmAnsweredAt, wasmRequests } = await runPage("startup-page", PAGE);
  assert.equal(wasmRequests, 1, "one fetch of the wasm");
  // The import resolved while the server still held the wasm back: no top-level await.
  assert.ok(r.importedAt < wasmAnsweredAt, `import resolved at ${r.importedAt}, the wasm was sent at ${wasmAnsweredAt}`);
  assert.ok(r.readyAt >= wasmAnsweredAt, "ready() resolved before the wasm arrived");
  assert.deepEqual(r.early, {
    types: ["function", "function", "function", "function", "function", "function"],
    stats: "{}", state: "closed", memory: 0, installedYet: true,
  });
  assert.deepEqual(r.statuses, [200, 200], "the calls made before the wasm was ready answered");
  assert.match(r.refused, /^RangeError: retry\.maxAttempts must be an integer from 1 to 20/);
  assert.equal(r.thrown, "RangeError", "once ready, the constructor throws at once");
  assert.equal(r.outboxAtOnce, "function", "client.outbox before the wasm is ready");
  if (full()) assert.equal(r.listed, 0, "the outbox's list() once ready");
  else assert.match(r.listed, /^TypeError: outbox needs "resilient-fetch\/full"/);
  assert.equal(r.installed, true, "install() before ready wrapped the global at once, and still does");
  assert.equal(r.viaGlobal, 200);
  // The global's two calls (one made before the wasm was ready) went through the installed client.
  assert.equal(r.wrapped, 2, `what wraps the installed client's fetch wraps the global's too: ${JSON.stringify(r)}`);
  assert.equal(r.earlyGlobal, 200, "the global's call before ready was retried past the 503");
  assert.equal(r.flakyRequests, 2, "the 503 and its retry");
  assert.equal(r.viaFirst, 200, "the first install's client still works");
  assert.equal(r.attempts, 1);
  assert.ok(r.memory > 0);
  assert.equal(r.uninstalled, true);
  assert.equal(r.restored, true, "uninstall() put the platform's fetch back");
});

const UNINSTALL_PAGE = `<!doctype html><meta charset="utf-8">
<script type="module">
const A = new URLSearchParams(location.search).get("a");
const platform = globalThis.fetch;
const api = await import("/node_modules/resilient-fetch/browser.js");
const client = api.install({ retry: false });
const wrappedAtOnce = globalThis.fetch !== platform;
const uninstalled = api.uninstall();
const restoredAtOnce = globalThis.fetch === platform;
const again = api.uninstall();
await api.default();
window.__result = {
  wrappedAtOnce, uninstalled, restoredAtOnce, again, stillPlatform: globalThis.fetch === platform,
  viaClient: await client.fetch(A + "/ok").then((r) => r.status, (e) => String(e)),
};
</script>`;

test("uninstall() before the wasm is ready puts the platform's fetch back at once; the install's client still works", async () => {
  const { result } = await runPage("startup-uninstall", UNINSTALL_PAGE);
  assert.deepEqual(result, {
    wrappedAtOnce: true, uninstalled: true, restoredAtOnce: true, again: false, stillPlatform: true, viaClient: 200,
  });
});

// The warm-up (docs/behaviour.md): once the wasm is ready and the page idle, one call through a
// client of the entry's own to a stub fetch. It runs (the stub's Response is made), and nothing
// of it is seen: no request but the wasm's, no event, stat or call of the app's clients or of
// the installed global.
const WARM_PAGE = `<!doctype html><meta charset="utf-8">
<script type="module">
const api = await import("/node_modules/resilient-fetch/browser.js");
const events = [];
const client = new api.ResilientClient({ onEvent: (e) => events.push(e.type) });
const installed = api.install({ onEvent: (e) => events.push("global " + e.type) });
let viaGlobal = 0;
const own = installed.fetch;
installed.fetch = function (...args) { viaGlobal++; return own.apply(this, args); };
await api.default();
// Responses made from here on are counted (the wasm has loaded; the warm-up waits for the page
// to be idle, a task after this one).
const Platform = globalThis.Response;
let made = 0;
globalThis.Response = class extends Platform { constructor(...args) { super(...args); made++; } };
await new Promise((resolve) => requestIdleCallback(() => setTimeout(resolve, 100)));
window.__result = {
  made, events, viaGlobal, stats: JSON.stringify([client.stats(), installed.stats()]),
  requests: performance.getEntriesByType("resource").filter((e) => e.initiatorType === "fetch").map((e) => new URL(e.name).pathname),
  uninstalled: api.uninstall(),
};
</script>`;

test("the browser entry's warm-up, once the page is idle, runs and sends nothing the app sees", async () => {
  const { result } = await runPage("startup-warm", WARM_PAGE);
  assert.deepEqual(result, {
    made: 1, events: [], viaGlobal: 0, stats: "[{},{}]",
    requests: ["/node_modules/resilient-fetch/web/resilient_fetch_bg.wasm"], uninstalled: true,
  });
});
