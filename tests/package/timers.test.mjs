// The attempts' limits share one timer (armed for the earliest limit in flight): each attempt
// still times out at its own limit, whatever order attempts start in, and in Node the timer
// holds the process exactly while an attempt is in flight, as a timer per attempt did.
import test from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ORIGIN_A, SCRATCH, uid } from "./helpers.mjs";
import { ResilientClient, TimeoutError, resilientFetch } from "resilient-fetch";

test("attempts with different limits each time out at their own, a shorter one started after a longer one first", async () => {
  const client = new ResilientClient({ retry: false, breaker: false });
  const order = [];
  const start = performance.now();
  const hang = (ms) => client.fetch(`${ORIGIN_A}/hang?id=${uid("timer")}`, undefined, { timeoutMs: ms }).then(
    () => assert.fail("a hang answered"),
    (e) => {
      assert.ok(e instanceof TimeoutError, String(e));
      order.push([ms, performance.now() - start]);
    });
  await Promise.all([hang(1500), hang(100), hang(400), hang(100)]);
  assert.deepEqual(order.map(([ms]) => ms), [100, 100, 400, 1500], "each at its own limit, in order");
  for (const [ms, took] of order) assert.ok(took >= ms - 1, `a ${ms} ms limit fired after ${took.toFixed(1)} ms`);
  client.free();
});

/** Runs `source` as an ES module in a fresh Node process (from the consumer project): its stdout and wall time. */
function node(source) {
  const file = path.join(SCRATCH, `${uid("timer-child")}.mjs`);
  fs.writeFileSync(file, source);
  const start = Date.now();
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [file], { cwd: SCRATCH, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${error.message}\n${stderr}`));
      else resolve({ stdout: stdout.trim(), ms: Date.now() - start });
    });
  });
}

test("a Node process whose calls have ended is not held by the attempts' 30 s limit", async () => {
  const { stdout, ms } = await node(`
import { resilientFetch } from "resilient-fetch";
const res = await resilientFetch(${JSON.stringify(`${ORIGIN_A}/ok?id=${uid("timer")}`)}, undefined, { timeoutMs: 30000 });
console.log(res.status, await res.text());
`);
  assert.equal(stdout, "200 ok");
  assert.ok(ms < 20_000, `the process took ${ms} ms to exit (held by the 30 s limit)`);
});

test("a Node process with nothing else alive still sees a hanging fetch time out", async () => {
  const { stdout } = await node(`
import { resilientFetch } from "resilient-fetch";
const never = () => new Promise(() => {});
try {
  await resilientFetch("http://127.0.0.1:9/never", undefined, { fetch: never, timeoutMs: 200, retry: false });
  console.log("answered");
} catch (e) {
  console.log(e.name);
}
`);
  assert.equal(stdout, "TimeoutError");
});

test("with a test's fake setTimeout, an attempt's limit fires when the fake clock reaches it", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const never = () => new Promise(() => {});
  const call = resilientFetch("http://127.0.0.1:9/never", undefined, { fetch: never, timeoutMs: 1000, retry: false })
    .then(() => "answered", (e) => e.name);
  await new Promise((resolve) => setImmediate(resolve));
  t.mock.timers.tick(999);
  await new Promise((resolve) => setImmediate(resolve));
  t.mock.timers.tick(1);
  assert.equal(await call, "TimeoutError");
});

test("a Node process whose setTimeout returns numbers (a page's shim) is not held after its calls", async () => {
  const { stdout, ms } = await node(`
const set = globalThis.setTimeout, clear = globalThis.clearTimeout, timers = new Map();
let next = 1;
globalThis.setTimeout = (f, ms, ...a) => { const id = next++; timers.set(id, set(() => { timers.delete(id); f(...a); }, ms)); return id; };
globalThis.clearTimeout = (id) => { clear(timers.get(id)); timers.delete(id); };
const { resilientFetch } = await import("resilient-fetch");
const res = await resilientFetch("http://127.0.0.1:9/stub", undefined, { fetch: async () => new Response("ok"), timeoutMs: 30000 });
console.log(res.status);
`);
  assert.equal(stdout, "200");
  assert.ok(ms < 20_000, `the process took ${ms} ms to exit`);
});
