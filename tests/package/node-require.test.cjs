// Node CommonJS: `require("resilient-fetch")` works with no init call.
const test = require("node:test");
const assert = require("node:assert/strict");
const rf = require("resilient-fetch");

test("CJS require by name exposes the API with no init call", () => {
  assert.equal(typeof rf.resilientFetch, "function");
  assert.equal(typeof rf.ResilientClient, "function");
  assert.match(require.resolve("resilient-fetch"), /node_modules[\\/]resilient-fetch[\\/]node\.cjs$/);
});

test("CJS: resilientFetch reaches a local server", async () => {
  const res = await rf.resilientFetch(`${process.env.RF_TEST_ORIGIN_A}/ok`);
  assert.equal(res.status, 200);
  assert.equal(await res.text(), "ok");
});
