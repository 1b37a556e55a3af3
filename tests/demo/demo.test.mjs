// The demo page as a person would use it, in headless Chromium: served by the
// same program as the README's demo command, against its chaos backend.
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import net from "node:net";
import path from "node:path";
import readline from "node:readline";
import { OUT, edgeLane, openDemo, outageLane, pacedBurstLane, hedgeLane, breakerLane, staleLane, failoverLane, resumeLane, eventsLane, layoutLane, outboxLane, postEffectsLane, root,
  shareLane, shootLane, stormLane } from "./lanes.mjs";

let server, urls, browser, page;
/** test-output/demo-lane-NN.png: lane `n` as it looks once its test ran. */
const shot = (n) => shootLane(page, "demo", n);

/** The demo server as scripts/demo.sh starts it, on free ports: { child, urls } once it serves. */
async function startDemo(env = process.env) {
  const child = spawn(process.execPath, [path.join(root, "www-demo", "serve.mjs"), "--port", "0", "--backend-ports", "0,0"],
    { stdio: ["ignore", "pipe", "pipe"], env });
  let stderr = "";
  child.stderr.on("data", (d) => { stderr += d; });
  const line = await new Promise((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`demo server exited ${code}\n${stderr}`)));
  });
  return { child, urls: JSON.parse(line), stderr: () => stderr };
}

const listens = (port) => new Promise((resolve) => {
  const socket = net.connect(port, "127.0.0.1", () => { socket.destroy(); resolve(true); });
  socket.once("error", () => resolve(false));
});

before(async () => {
  ({ child: server, urls } = await startDemo());
  ({ browser, page } = await openDemo(urls.demo, 15000));
});

after(async () => {
  if (page) await page.screenshot({ path: path.join(OUT, "demo.png"), fullPage: true }).catch(() => {});
  await browser?.close();
  server?.kill();
});


test("a path that is no URL's gets a 400, and the demo server goes on serving", async () => {
  const { hostname, port } = new URL(urls.demo);
  // Raw requests: fetch would normalise the paths.
  const raw = (target) => new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(`GET ${target} HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n\r\n`));
    let text = "";
    socket.on("data", (d) => { text += d; });
    socket.on("end", () => resolve(text.split(" ")[1]));
    socket.on("error", reject);
  });
  assert.equal(await raw("//"), "400");
  assert.equal(await raw("/%E0%A4%A"), "400");
  assert.equal((await fetch(`${urls.demo}backend.json`)).status, 200, "the server still serves");
});

test("an origin in outage: its breaker light turns open, the other origin's stays closed", async () => {
  await outageLane(page);
  await shot(1);
});

test("POSTs through a flaky origin: effects equal the logical calls (one key per call)", async () => {
  await postEffectsLane(page);
  await shot(3);
});

test("the retry-storm chart: resilientFetch sends far fewer requests than a naive retry loop", async () => {
  await stormLane(page, 0.1);
  await shot(10);
});

test("rate limits: the paced burst gets no 429 where the unpaced one does", async () => {
  await pacedBurstLane(page);
  await shot(4);
});

test("two tabs sharing breakers: one opens with the other without sending; one probe closes both", async () => {
  await shareLane(page);
  await shot(7);
});

test("hedged reads: the slow tail cut for a few extra requests", async () => {
  await hedgeLane(page);
  await shot(8);
});

test("breaker rules: slow answers open the breaker, failed probes grow its cooldown", async () => {
  await breakerLane(page);
  await shot(12);
});

test("stale answers: the last good answer served for each failure, nothing sent while open", async () => {
  await staleLane(page);
  await shot(13);
});

test("failover: a backup origin answers while the primary is down, then the primary again", async () => {
  await failoverLane(page);
  await shot(16);
});

test("resumed downloads: a file whose connection breaks three times is read whole", async () => {
  await resumeLane(page);
  await shot(14);
});

test("event streams: a stream that drops reconnects with Last-Event-ID, each event once, and ends at 204", async () => {
  await eventsLane(page);
  await shot(15);
});

test("the outbox: 5 POSTs kept while origin B is down, each applied once when it is back", async () => {
  await outboxLane(page);
  await shot(9);
});

test("jitter lane: 'none' sends every retry at once, 'full' spreads them over the window", async () => {
  await page.click("#jitter-button");
  await page.waitForFunction(() => document.querySelector("#jitter-summary").dataset.spreads !== undefined, null,
    { timeout: 30000 });
  const spreads = JSON.parse(await page.locator("#jitter-summary").getAttribute("data-spreads"));
  assert.equal(spreads.none, 0, JSON.stringify(spreads));
  assert.ok(spreads.full > 100, JSON.stringify(spreads));
  assert.equal(await page.locator("#jitter-chart circle").count(), 160);
  await shot(5);
});

test("throttle lane: throttling cuts what reaches the overloaded origin", async () => {
  await page.click("#throttle-button");
  await page.waitForFunction(() => document.querySelector("#throttle-summary").dataset.onSent !== undefined, null,
    { timeout: 30000 });
  const data = await page.locator("#throttle-summary").evaluate((p) => ({ ...p.dataset }));
  assert.equal(data.offSent, "300", JSON.stringify(data));
  assert.ok(Number(data.onSent) < 200 && Number(data.onRefused) > 100, JSON.stringify(data));
  await shot(6);
});

test("every invalid policy field is listed, not only the first", async () => {
  await page.fill('input[name=timeoutMs]', "0");
  await page.fill('input[name=maxAttempts]', "99");
  await page.waitForFunction(() => document.querySelector("#policy-error").dataset.count === "2", null, { timeout: 5000 });
  const text = await page.locator("#policy-error").textContent();
  assert.match(text, /timeoutMs must be an integer from 1 to 2147483647 \(got 0\)/);
  assert.match(text, /retry\.maxAttempts must be an integer from 1 to 20 \(got 99\)/);
  await shot(2);
  await page.fill('input[name=timeoutMs]', "2000");
  await page.fill('input[name=maxAttempts]', "3");
  await page.waitForFunction(() => document.querySelector("#policy-error").hidden, null, { timeout: 5000 });
});

test("Cloudflare Workers: five isolates over one OriginHealth object send one probe per cooldown from the last one's answer, one successful probe closes all; five without it probe on their own", async () => {
  await edgeLane(page);
  await shot(11);
});

test("the layout: lanes in numbered order, the timeline beside the fire panel (a phone: right after it)",
  () => layoutLane(page, "demo-phone.png"));

test("without workerd the Workers lane says why, and the rest of the demo serves", async () => {
  const bare = await startDemo({ ...process.env, RF_TOOLS_DIR: path.join(root, "no-such-tools") });
  const other = await browser.newPage();
  try {
    assert.match(bare.urls.edge.error, /^esbuild is not installed in .*no-such-tools/);
    assert.match(bare.stderr(), /the Cloudflare Workers lane is off/);
    await other.goto(bare.urls.demo);
    await other.waitForFunction(() => window.__demoReady === true, null, { timeout: 15000 });
    assert.equal(await other.locator("#edge-note").getAttribute("data-off"), "workerd");
    assert.match(await other.locator("#edge-note").textContent(), /workerd is not running, so this lane is off \(the others work\)/);
    assert.ok(await other.locator("#edge-button").isDisabled());
  } finally {
    await other.close();
    bare.child.kill();
  }
});

test("the demo server stopping stops workerd", async () => {
  const ports = [...urls.edge.shared, ...urls.edge.plain];
  assert.deepEqual(await Promise.all(ports.map(listens)), ports.map(() => true), "workerd serves the isolates");
  const exited = new Promise((resolve) => server.once("exit", resolve));
  server.kill("SIGTERM");
  await exited;
  assert.deepEqual(await Promise.all(ports.map(listens)), ports.map(() => false), "no isolate left listening");
});
