// Installs the packed tarball into a scratch project the way a user would
// (`npm install ./resilient-fetch-x.y.z.tgz`), copies the package tests beside
// it, and runs them there with `node --test`, so they import "resilient-fetch"
// (and "resilient-fetch/full") by name. Environment: RF_TARBALL, RF_TOOLS_DIR, RF_OUT, RF_TEST_ORIGIN_A/B.
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const tarball = process.env.RF_TARBALL;
if (!tarball) throw new Error("RF_TARBALL is not set");

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "rf-consumer-"));
fs.writeFileSync(path.join(scratch, "package.json"),
  JSON.stringify({ name: "consumer", private: true, type: "module" }, null, 2));
fs.copyFileSync(path.join(here, "..", "..", ".npmrc"), path.join(scratch, ".npmrc"));
console.error(`[package] npm install ${path.basename(tarball)} in ${scratch}`);
execFileSync("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", tarball],
  { cwd: scratch, stdio: "inherit" });

// The two builds (README, "Two builds"): a file that says `// builds: full` in its first lines
// (a capability's tests, and the modules they load) runs against resilient-fetch/full only; one
// that says `// builds: lean` (the default entry's packaging) against "resilient-fetch" only;
// every other test file (the contract) against both: as written, and as a copy
// `<name>.full.test.mjs` that imports resilient-fetch/full wherever it names the package (and
// sets globalThis.RF_BUILD = "full" first, which helpers.mjs's `full` reads).
const toFull = (text) => text
  .replace(/(["'])resilient-fetch\1/g, "$1resilient-fetch/full$1")
  // A path into the installed package (a page's import of /node_modules/resilient-fetch/browser.js).
  .replace(/\/resilient-fetch\/(?=browser\.js["']|errors\.js["']|web\/|cjs\/)/g, "/resilient-fetch/full/");
const buildsOf = (text) => /^\/\/ builds: (full|lean)\b/m.exec(text.split("\n").slice(0, 8).join("\n"))?.[1] ?? "both";
for (const f of fs.readdirSync(here)) {
  if (!(f.endsWith(".mjs") || f.endsWith(".cjs")) || f === "run.mjs") continue;
  const text = fs.readFileSync(path.join(here, f), "utf8");
  const builds = buildsOf(text);
  // A copy for the full build that names the package nowhere would test the lean one.
  if (builds === "full" && /\.test\.(mjs|cjs)$/.test(f) && toFull(text) === text) throw new Error(`${f}: "// builds: full" but it never names the package`);
  fs.writeFileSync(path.join(scratch, f), builds === "full" ? toFull(text) : text);
  const test = /\.test\.(mjs|cjs)$/.exec(f);
  if (test && builds === "both") {
    const mark = `globalThis.RF_BUILD = "full";\n`;
    if (toFull(text) === text) throw new Error(`${f}: runs against both builds but never names the package`);
    const copy = toFull(text).replace(/^("use strict";\n)?/, (strict) => strict + mark);
    fs.writeFileSync(path.join(scratch, f.replace(/\.test\.(mjs|cjs)$/, ".full.test.$1")), copy);
  }
}
// RF_ONLY=word runs only the test files whose name contains it.
const files = fs.readdirSync(scratch)
  .filter((f) => f.endsWith(".test.mjs") || f.endsWith(".test.cjs"))
  .filter((f) => !process.env.RF_ONLY || f.includes(process.env.RF_ONLY))
  .sort();
// node --test with no file would run whatever it finds: refuse instead.
if (files.length === 0) throw new Error(`no package test file matches RF_ONLY=${process.env.RF_ONLY}`);
const result = spawnSync(process.execPath, ["--test", "--test-reporter=tap", "--test-concurrency=1", ...files],
  { cwd: scratch, stdio: "inherit", env: { ...process.env, RF_SCRATCH: scratch } });
fs.rmSync(scratch, { recursive: true, force: true });
process.exit(result.status ?? 1);
