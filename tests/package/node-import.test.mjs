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

test("import and require in one program get one instance and the same error classes", async () => {
  const { createRequire } = await import("node:module");
  const cjs = createRequire(import.meta.url)("resilient-fetch");
  for (const name of ["resilientFetch", "ResilientClient", "TimeoutError", "CircuitOpenError", "BulkheadFullError"]) {
    assert.equal(rf[name], cjs[name], `${name} differs between import and require`);
  }
  // An error thrown through one entry is an instance of the other's class.
  const client = new cjs.ResilientClient({ retry: false, timeoutMs: 50 });
  await assert.rejects(client.fetch(`${ORIGIN_A}/hang`), (e) => e instanceof rf.TimeoutError);
  assert.equal(rf.memoryBytes(), cjs.memoryBytes(), "one wasm memory");
});

test("the exports map resolves the node build for import", async () => {
  const resolved = import.meta.resolve("resilient-fetch");
  // In this file's copy for the full build (run.mjs), "resilient-fetch/full" and full/node.mjs.
  const entry = ["node_modules", "resilient-fetch", "node.mjs"].join("/");
  assert.ok(resolved.endsWith(`/${entry}`), resolved);
});

test("the package carries its README, LICENSE and types, and nothing it does not need", async () => {
  const fs = await import("node:fs");
  const path = await import("node:path");
  const { fileURLToPath } = await import("node:url");
  const root = path.dirname(fileURLToPath(import.meta.resolve("resilient-fetch/package.json")));
  for (const f of ["README.md", "CHANGELOG.md", "docs/behaviour.md", "LICENSE", "index.d.ts", "web/resilient_fetch_bg.wasm"]) {
    assert.ok(fs.existsSync(path.join(root, f)), `${f} missing from the package`);
  }
  assert.ok(!fs.existsSync(path.join(root, "cjs", "resilient_fetch_bg.wasm")), "the wasm is shipped twice");
  assert.match(fs.readFileSync(path.join(root, "README.md"), "utf8"), /resilientFetch/);
});

// The documents of the repository, for those who work on it: linked from the page, not shipped
// (tests/docs_links.rs checks that every link, these too, leads to a file and a heading).
const REPOSITORY_ONLY = ["CONTRIBUTING.md", "bench/README.md"];

test("every relative link of the package's pages leads to a file the package carries", async () => {
  const fs = await import("node:fs");
  const path = await import("node:path");
  const { fileURLToPath } = await import("node:url");
  const root = path.dirname(fileURLToPath(import.meta.resolve("resilient-fetch/package.json")));
  const pages = ["README.md", "CHANGELOG.md", ...fs.readdirSync(path.join(root, "docs")).map((f) => `docs/${f}`)];
  assert.ok(pages.length >= 7, `the package's pages: ${pages}`);
  const missing = [];
  let links = 0;
  for (const page of pages) {
    // Links outside code: fenced blocks and inline code spans dropped first.
    const prose = fs.readFileSync(path.join(root, page), "utf8").replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "");
    for (const [, target] of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target) || target.startsWith("#")) continue;
      links++;
      const file = path.posix.normalize(path.posix.join(path.posix.dirname(page), target.split("#")[0]));
      if (!fs.existsSync(path.join(root, file)) && !REPOSITORY_ONLY.includes(file)) missing.push(`${page}: ${target}`);
    }
  }
  assert.ok(links >= 20, `only ${links} links to other files found`);
  assert.deepEqual(missing, [], "links to files the package does not carry");
});
