// Node ESM: `import ... from "resilient-fetch"` works with no init call.
import test from "node:test";
import assert from "node:assert/strict";
import { ORIGIN_A, serverLog, uid } from "./helpers.mjs";
import * as rf from "resilient-fetch";

test("ESM import by name exposes the API with no init call", () => {
  assert.equal(typeof rf.resilientFetch, "function");
  assert.equal(typeof rf.ResilientClient, "function");
});

test("ESM: resilientFetch reaches a local server", async () => {
  const id = uid("esm");
  const res = await rf.resilientFetch(`${ORIGIN_A}/ok?id=${id}`);
  assert.equal(res.status, 200);
  assert.equal(await res.text(), "ok");
  assert.equal((await serverLog(ORIGIN_A, id)).length, 1);
});

test("the exports map resolves the node build for import", async () => {
  const resolved = import.meta.resolve("resilient-fetch");
  assert.match(resolved, /\/node_modules\/resilient-fetch\/node\.mjs$/);
});
