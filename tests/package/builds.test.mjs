// builds: lean (this file compares the two entries itself: tests/package/run.mjs)
// The two builds of the package, as a user meets them: "resilient-fetch" (lean: the mission)
// refuses an option of a capability it lacks, naming the option and the entry that has it,
// and accepts `false` for it; "resilient-fetch/full" has every capability; each entry is a
// module of its own, in ES modules, CommonJS and TypeScript.
import test from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import * as lean from "resilient-fetch";
import * as full from "resilient-fetch/full";
import { ORIGIN_A, SCRATCH, compileTs, linkTools } from "./helpers.mjs";

const require = createRequire(path.join(SCRATCH, "package.json"));

// Each opt-in capability's option, with a value that turns it on.
const OPTIONS = {
  rateLimit: { maxWaitMs: 1000 },
  throttle: true,
  hedge: { delayMs: 50 },
  coalesce: true,
  share: "builds-test",
  outbox: { name: "builds-test" },
  stale: { maxStaleMs: 1000 },
  failover: { "https://a.test": ["https://b.test"] },
  resume: { maxResumes: 2 },
};

/** Asserts `error` is the lean build's TypeError for `option`. */
function refusedFor(option) {
  return (error) => {
    assert.equal(error.constructor, TypeError, `${option}: ${error}`);
    assert.match(error.message, new RegExp(`^${option} needs "resilient-fetch/full": "resilient-fetch" is the lean build, without `));
    return true;
  };
}

test("the lean build refuses each capability's option with a TypeError naming it and resilient-fetch/full", async () => {
  for (const [option, value] of Object.entries(OPTIONS)) {
    assert.throws(() => new lean.ResilientClient({ [option]: value }), refusedFor(option));
    await assert.rejects(lean.resilientFetch(`${ORIGIN_A}/ok`, {}, { [option]: value }), refusedFor(option));
    const client = new lean.ResilientClient();
    await assert.rejects(client.fetch(`${ORIGIN_A}/ok`, {}, { [option]: value }), refusedFor(option));
    client.free();
  }
  // A nested field of one is refused the same way (the option is named, not its field).
  assert.throws(() => new lean.ResilientClient({ hedge: { maxHedges: 2 } }), refusedFor("hedge"));
  // The lean build's own checks still come with their ranges.
  assert.throws(() => new lean.ResilientClient({ retry: { maxAttempts: 0 } }), RangeError);
});

test("the lean build accepts false (and null) for a capability it lacks: off, as asked", async () => {
  const off = Object.fromEntries(Object.keys(OPTIONS).map((o) => [o, false]));
  const client = new lean.ResilientClient(off);
  const r = await client.fetch(`${ORIGIN_A}/ok`, {}, { hedge: null, coalesce: false });
  assert.equal(r.status, 200);
  await r.arrayBuffer();
  assert.equal(client.outbox, undefined, "a lean client has no outbox");
  client.free();
});

test("the full build takes every capability's option; each entry is a module of its own", async () => {
  const client = new full.ResilientClient({ ...OPTIONS, share: false });
  assert.equal(typeof client.outbox?.flush, "function", "a full client with an outbox shows it");
  const r = await client.fetch(`${ORIGIN_A}/ok`);
  assert.equal(r.status, 200);
  await r.arrayBuffer();
  client.free();
  // Two builds, two instances: separate wasm modules, clients and error classes.
  assert.notEqual(lean.ResilientClient, full.ResilientClient);
  assert.notEqual(lean.TimeoutError, full.TimeoutError);
  assert.ok(!(new full.ResilientClient() instanceof lean.ResilientClient));
});

test("CommonJS: require() of each entry gives its build", () => {
  const cjsLean = require("resilient-fetch");
  const cjsFull = require("resilient-fetch/full");
  assert.throws(() => new cjsLean.ResilientClient({ hedge: true }), refusedFor("hedge"));
  const client = new cjsFull.ResilientClient({ hedge: true, coalesce: true });
  client.free();
  // import and require of one entry are one instance (node.mjs loads node.cjs).
  assert.equal(cjsLean.ResilientClient, lean.ResilientClient);
  assert.equal(cjsFull.ResilientClient, full.ResilientClient);
});

test("each entry ships its own wasm, and the lean one is the smaller", () => {
  const root = path.join(SCRATCH, "node_modules", "resilient-fetch");
  const leanWasm = fs.statSync(path.join(root, "web", "resilient_fetch_bg.wasm")).size;
  const fullWasm = fs.statSync(path.join(root, "full", "web", "resilient_fetch_bg.wasm")).size;
  assert.ok(leanWasm < fullWasm, `lean ${leanWasm} B, full ${fullWasm} B`);
});

test("TypeScript: the lean entry's Policy takes only false for a capability's option; the full entry's takes each", () => {
  const compile = (name, source) => compileTs(`builds-${name}`, source);
  const mission = compile("lean-ok", `
import { resilientFetch, ResilientClient, type Policy } from "resilient-fetch";
const policy: Policy = { timeoutMs: 5000, retry: { maxAttempts: 4 }, breaker: { mode: "consecutive" }, bulkhead: true };
void resilientFetch("https://example.test/", {}, policy);
void new ResilientClient(policy).stats();
`);
  assert.equal(mission.status, 0, mission.stdout + mission.stderr);
  const off = compile("lean-off", `
import { ResilientClient } from "resilient-fetch";
void new ResilientClient({ rateLimit: false, throttle: false, hedge: false, coalesce: false, share: false, outbox: false, failover: false });
`);
  assert.equal(off.status, 0, off.stdout + off.stderr);
  for (const option of Object.keys(OPTIONS)) {
    const value = JSON.stringify(OPTIONS[option]);
    const r = compile(`lean-${option}`, `
import { ResilientClient } from "resilient-fetch";
void new ResilientClient({ ${option}: ${value} });
`);
    assert.notEqual(r.status, 0, `${option} compiled against the lean entry`);
    // The lean Policy declares each lacking option as `false` (off) only.
    assert.match(r.stdout, new RegExp(`${option}|not assignable to type 'false'`), r.stdout);
    const ok = compile(`full-${option}`, `
import { ResilientClient } from "resilient-fetch/full";
void new ResilientClient({ ${option}: ${value} });
`);
    assert.equal(ok.status, 0, `${option} against resilient-fetch/full: ${ok.stdout}${ok.stderr}`);
  }
  // resilient-fetch/otel checks a policy against the build of the client it instruments.
  linkTools(["@opentelemetry/api"]);
  const otel = (entry) => compile(`otel-${entry.replace("/", "-")}`, `
import { ResilientClient } from "${entry}";
import { instrument } from "resilient-fetch/otel";
void instrument(ResilientClient, { retry: false, hedge: { delayMs: 30 } }).stats();
`);
  const leanOtel = otel("resilient-fetch");
  assert.notEqual(leanOtel.status, 0, "hedge compiled through instrument() with the lean client");
  assert.match(leanOtel.stdout, /hedge|not assignable to type 'false'/, leanOtel.stdout);
  const fullOtel = otel("resilient-fetch/full");
  assert.equal(fullOtel.status, 0, fullOtel.stdout + fullOtel.stderr);
});
