// builds: full (a capability of resilient-fetch/full: tests/package/run.mjs)
// Resumed downloads (policy `resume`, docs/streams.md) in headless Chromium: a plain page using
// the installed package's browser.js reads bodies the fault server cuts (cross-origin: the
// headers a resume reads are exposed, If-Range is preflighted); the bytes are checked by hash
// against the uncut resource, the ranges asked for by the server's log.
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { ORIGIN_A, SCRATCH, launchChromium, pageResult, serverLog, serveStatic, uid } from "./helpers.mjs";

const PAGE = `<!doctype html><meta charset="utf-8">
<script type="module">
import { ResilientClient } from "/node_modules/resilient-fetch/browser.js";
const q = new URLSearchParams(location.search);
const A = q.get("a"), id = q.get("id");
const hex = async (bytes) => [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
try {
  const events = [];
  const client = new ResilientClient({ resume: true, retry: { maxAttempts: 10, baseDelayMs: 1, maxDelayMs: 5 },
    onEvent: (e) => events.push(e.type === "retry" ? "retry:" + e.reason : e.type) });
  const uncut = await (await fetch(A + "/resource?id=" + id + "-whole&bytes=1000000", { cache: "no-store" })).arrayBuffer();
  const res = await client.fetch(A + "/resource?id=" + id + "-cuts&bytes=1000000&cuts=100000,250000,250001,700000", { cache: "no-store" });
  const got = await res.arrayBuffer();
  const text = await (await client.fetch(A + "/resource?id=" + id + "-text&bytes=1000&text=1&cuts=2,7", { cache: "no-store" })).text();
  const wholeText = await (await fetch(A + "/resource?id=" + id + "-text-whole&bytes=1000&text=1", { cache: "no-store" })).text();
  const ignored = await client.fetch(A + "/resource?id=" + id + "-ignore&bytes=300000&cuts=100000&ignoreRange=1", { cache: "no-store" });
  const error = await ignored.arrayBuffer().then(() => null, (e) => e);
  window.__result = {
    bytes: got.byteLength, same: (await hex(got)) === (await hex(uncut)),
    text: text === wholeText, textLength: text.length,
    error: error && { name: error.name, reason: error.reason, cause: error.cause !== undefined },
    retries: events.filter((e) => e.startsWith("retry")).length,
  };
} catch (e) {
  window.__error = String(e && e.stack || e);
}
</script>`;

let browser, site;
before(async () => {
  fs.writeFileSync(path.join(SCRATCH, "resume-page.html"), PAGE);
  site = await serveStatic(SCRATCH);
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await site?.close();
});

test("Chromium: a body cut four times is read whole (sha256), each range from where the bytes the caller got ended; a cut inside a UTF-8 character; a 200 to the range is refused naming why", async () => {
  const id = uid("browser-resume");
  const { result } = await pageResult(browser, `${site.url}/resume-page.html?a=${ORIGIN_A}&id=${id}`);
  assert.deepEqual(result, {
    bytes: 1000000, same: true, text: true, textLength: 500,
    error: { name: "TypeError", reason: "whole", cause: true },
    retries: 4 + 2 + 1,
  });
  // Chromium empties a body's queue when its connection errors (the Streams standard's error()):
  // bytes that arrived but were not read yet are asked for again. Each range starts where the
  // bytes the caller got end: never past what the server sent, never before the last start.
  const log = (await serverLog(ORIGIN_A, `${id}-cuts`)).filter((e) => e.method === "GET");
  assert.equal(log.length, 5, JSON.stringify(log));
  for (let i = 1; i < log.length; i++) {
    const { start, sent } = log[i - 1];
    assert.ok(log[i].start >= start && log[i].start <= start + sent, JSON.stringify(log));
    assert.equal(log[i].range, `bytes=${log[i].start}-`);
    assert.ok(log[i].ifRange === '"v1"' && log[i].status === 206);
  }
  assert.equal(log.at(-1).start + log.at(-1).sent, 1000000);
});
