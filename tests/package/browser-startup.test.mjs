// The browser entry has no top-level await (issue #31): in Chromium, with the wasm held back by
// the server, the module's import resolves before the wasm is sent, every export is callable at
// once, and what was called before the wasm was ready runs once it is. The package used as a
// page uses it (a plain module import from node_modules), against the fault server.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { ORIGIN_A, SCRATCH, launchChromium, serveStatic } from "./helpers.mjs";

const HOLD_MS = 1500;

const PAGE = `<!doctype html><meta charset="utf-8">
<script type="module">
const A = new URLSearchParams(location.search).get("a");
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
const installed = api.install({ retry: false });
early.installedYet = globalThis.fetch !== platform;
let wrapped = 0;
const own = installed.fetch;
installed.fetch = function (...args) { wrapped++; return own.apply(this, args); };
const calls = [api.resilientFetch(A + "/ok"), client.fetch(A + "/ok")].map((p) => p.then((r) => r.status, (e) => String(e)));
const refused = invalid.fetch(A + "/ok").then(() => "resolved", (e) => e.constructor.name + ": " + e.message);
await api.default();
const readyAt = Date.now();
let thrown = null;
try { new api.ResilientClient({ retry: { maxAttempts: 0 } }); } catch (e) { thrown = e.constructor.name; }
const viaGlobal = await fetch(A + "/ok").then((r) => r.status, (e) => String(e));
window.__result = {
  importedAt, readyAt, early, statuses: await Promise.all(calls), refused: await refused, thrown,
  installed: globalThis.fetch !== platform, viaGlobal, wrapped, attempts: client.stats()[A]?.attempts,
  memory: api.memoryBytes(), uninstalled: api.uninstall(),
};
</script>`;

test("the browser entry's import waits for no wasm; calls made before it is ready run once it is", async () => {
  const dir = path.join(SCRATCH, "startup-page");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "index.html"), PAGE);
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
    const page = await browser.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(`${server.url}/startup-page/index.html?a=${encodeURIComponent(ORIGIN_A)}`);
    await page.waitForFunction(() => window.__result, null, { timeout: 20_000 });
    const r = await page.evaluate(() => window.__result);
    assert.deepEqual(errors, []);
    assert.equal(wasmRequests, 1, "one fetch of the wasm");
    // The import resolved while the server still held the wasm back: no top-level await.
    assert.ok(r.importedAt < wasmAnsweredAt, `import resolved at ${r.importedAt}, the wasm was sent at ${wasmAnsweredAt}`);
    assert.ok(r.readyAt >= wasmAnsweredAt, "ready() resolved before the wasm arrived");
    assert.deepEqual(r.early, {
      types: ["function", "function", "function", "function", "function", "function"],
      stats: "{}", state: "closed", memory: 0, installedYet: false,
    });
    assert.deepEqual(r.statuses, [200, 200], "the calls made before the wasm was ready answered");
    assert.match(r.refused, /^RangeError: retry\.maxAttempts must be an integer from 1 to 20/);
    assert.equal(r.thrown, "RangeError", "once ready, the constructor throws at once");
    assert.equal(r.installed, true, "install() before ready took effect once it was");
    assert.equal(r.viaGlobal, 200);
    assert.equal(r.wrapped, 1, "what wraps the installed client's fetch wraps the global's too");
    assert.equal(r.attempts, 1);
    assert.ok(r.memory > 0);
    assert.equal(r.uninstalled, true);
  } finally {
    await browser.close();
    await server.close();
  }
});
