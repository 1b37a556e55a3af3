// Node CommonJS: `require("resilient-fetch")` works with no init call.
const test = require("node:test");
const assert = require("node:assert/strict");
const rf = require("resilient-fetch");

test("CJS require by name exposes the API with no init call", () => {
  assert.equal(typeof rf.resilientFetch, "function");
  assert.equal(typeof rf.ResilientClient, "function");
  // In this file's copy for the full build (run.mjs), "resilient-fetch/full" and full/node.cjs.
  const entry = ["node_modules", "resilient-fetch", "node.cjs"].join("/");
  assert.ok(require.resolve("resilient-fetch").replaceAll("\\", "/").endsWith(`/${entry}`), require.resolve("resilient-fetch"));
});

test("CJS: resilientFetch reaches a local server", async () => {
  const res = await rf.resilientFetch(`${process.env.RF_TEST_ORIGIN_A}/ok`);
  assert.equal(res.status, 200);
  assert.equal(await res.text(), "ok");
});

test("CJS: the smoke checks (retries, key, timeout, breaker) through require()", async () => {
  const { smoke } = await import("./smoke.mjs");
  const report = await smoke(rf, process.env.RF_TEST_ORIGIN_A, process.env.RF_TEST_ORIGIN_B, "resilient-fetch");
  for (const [name, { ok, detail }] of Object.entries(report)) {
    assert.ok(ok, `${name}: ${JSON.stringify(detail)}`);
  }
  assert.deepEqual(Object.keys(report), ["imports", "retries", "key", "timeout", "breaker", "share", "outbox"]);
});
