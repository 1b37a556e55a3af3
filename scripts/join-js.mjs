// Joins the concern files of js/ into the snippet modules the shell binds (js/joined/*.js).
// Every snippet is one more module a page without a bundler loads, and
// wasm-bindgen-test-runner's server (one thread per CPU) stalls a browser that loads a fifth:
// the source is split by concern, the runtimes load a few modules. wasm-bindgen reads the
// joined files when the crate compiles, so they are committed; scripts/build.sh runs this
// first, and `node scripts/join-js.mjs --check` (tests/js_joined.rs) fails when one is stale.
//
// A concern file imports what it uses from the others (`import { a, b } from "./x.js";`, one
// line each, by its path from the file) and ends with one `export { ... };` line. Joined: the
// imports between files of one module go, the others point at the joined modules, and one
// export line ends it. A capability's concern files live in its folder (src/<capability>/).
import fs from "node:fs";
import path from "node:path";
import { codesTable } from "./codes.mjs";

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const JS = path.join(ROOT, "js");
// Each joined module and its concern files (paths from js/), in the order they are joined.
const MODULES = {
  "arguments.js": ["request.js", "chain.js", "install.js", "cors.js", "send.js", "hooks.js", "policy-arg.js", "../src/coalesce/coalesce.js", "../src/resume/resume.js"],
  "site.js": ["../src/share/share.js", "../src/outbox/outbox.js", "../src/outbox/outbox-store.js", "../src/outbox/outbox-replay.js", "../src/stale/stale.js", "../src/failover/failover.js", "../src/sse/events.js"],
};
const IMPORT = /^import \{ ([A-Za-z_$][\w$]*(?:, [A-Za-z_$][\w$]*)*) \} from "(\.\.?\/(?:[\w.-]+\/)*[a-z-]+\.js)";$/;
const EXPORT = /^export \{ ([A-Za-z_$][\w$]*(?:, [A-Za-z_$][\w$]*)*) \};$/;

const JOINED = path.join(JS, "joined");
// Each concern file (its absolute path) -> the joined module it is part of.
const joinedOf = new Map();
for (const [joined, parts] of Object.entries(MODULES)) for (const part of parts) joinedOf.set(path.join(JS, part), joined);

// A name declared at the top of a concern file (`const X`, `let X`, `function X`, `class X`):
// joined, two files' names share one scope.
const DECLARED = /^(?:const|let|var|async function\*?|function\*?|class) ([A-Za-z_$][\w$]*)/;

function join(joined, parts) {
  const imports = new Map(); // the path the joined module imports from -> names
  const exports = [];
  const bodies = [];
  const declared = new Map(); // a top-level name -> the concern file that declares it
  for (const part of parts) {
    const file = path.join(JS, part);
    const name = path.relative(ROOT, file);
    const lines = fs.readFileSync(file, "utf8").replace(/\n+$/, "").split("\n");
    const last = lines.pop().match(EXPORT);
    if (!last) throw new Error(`${name} must end with one export { ... } line`);
    exports.push(...last[1].split(", "));
    const body = [];
    for (const line of lines) {
      const m = line.match(IMPORT);
      if (!m) {
        if (/^(import|export) /.test(line)) throw new Error(`${name}: an import or export the join cannot read: ${line}`);
        const top = line.match(DECLARED)?.[1];
        if (top !== undefined) {
          const before = declared.get(top);
          if (before !== undefined) throw new Error(`${name} and ${before} both declare ${top}, and ${joined} joins them into one scope: rename one`);
          declared.set(top, name);
        }
        body.push(line);
        continue;
      }
      const from = path.resolve(path.dirname(file), m[2]);
      if (joinedOf.get(from) === joined) continue; // the same module now
      // Another joined module beside this one, or a snippet of its own in js/.
      const target = joinedOf.has(from) ? `./${joinedOf.get(from)}` : path.relative(JOINED, from);
      if (!joinedOf.has(from) && path.dirname(from) !== JS) throw new Error(`${name}: ${m[2]} is neither joined nor a snippet of js/`);
      const names = imports.get(target) ?? [];
      for (const name of m[1].split(", ")) if (!names.includes(name)) names.push(name);
      imports.set(target, names);
    }
    bodies.push(body.join("\n").replace(/^\n+/, ""));
  }
  const head = [
    `// Joined by scripts/join-js.mjs from ${parts.map((p) => path.relative(ROOT, path.join(JS, p))).join(", ")}: edit those, then run it.`,
    ...[...imports].map(([from, names]) => `import { ${names.join(", ")} } from "${from}";`),
  ];
  return `${head.join("\n")}\n\n${bodies.join("\n\n")}\n\nexport { ${exports.join(", ")} };\n`;
}

// The package's entries that import nothing of it, each joined from concern files of its own
// (js/<entry>/): one file in the package (a bundle of resilient-fetch/otel is that file alone,
// scripts/size-guard.mjs), which exports what its first concern file exports. A concern file
// imports the others (`import { a } from "./x.js";`) and the entry's packages (`import { a }
// from "@scope/name";`, joined into one line), and ends with one `export { ... };` line.
const ENTRIES = {
  "pkg-template/otel.js": ["otel/instrument.js", "otel/options.js", "otel/names.js", "otel/call.js", "otel/telemetry.js", "otel/target.js"],
};
const PACKAGE_IMPORT = /^import \{ ([A-Za-z_$][\w$]*(?:, [A-Za-z_$][\w$]*)*) \} from "(@?[a-z][\w./-]*)";$/;

/** The entry joined from `parts` (paths under js/). */
function joinEntry(entry, parts) {
  const imports = new Map(); // package -> names
  let exports;
  const bodies = [];
  for (const part of parts) {
    const lines = fs.readFileSync(path.join(JS, part), "utf8").replace(/\n+$/, "").split("\n");
    const last = lines.pop().match(EXPORT);
    if (!last) throw new Error(`js/${part} must end with one export { ... } line`);
    exports ??= last[1];
    const body = [];
    for (const line of lines) {
      const own = line.match(IMPORT);
      if (own) {
        if (!parts.includes(path.posix.join(path.posix.dirname(part), own[2]))) {
          throw new Error(`js/${part}: ${entry} imports only its own concern files and packages: ${line}`);
        }
        continue;
      }
      const m = line.match(PACKAGE_IMPORT);
      if (!m) {
        if (/^(import|export) /.test(line)) throw new Error(`js/${part}: an import or export the join cannot read: ${line}`);
        body.push(line);
        continue;
      }
      const names = imports.get(m[2]) ?? [];
      for (const name of m[1].split(", ")) if (!names.includes(name)) names.push(name);
      imports.set(m[2], names);
    }
    bodies.push(body.join("\n").replace(/^\n+/, ""));
  }
  // The first file's opening comment stays on top.
  const first = bodies[0].split("\n");
  const lead = first.findIndex((l) => !l.startsWith("//"));
  const head = [
    ...first.slice(0, lead),
    `// Joined by scripts/join-js.mjs from ${parts.map((p) => `js/${p}`).join(", ")}: edit those, then run it.`,
    ...[...imports].map(([from, names]) => `import { ${names.join(", ")} } from "${from}";`),
  ];
  bodies[0] = first.slice(lead).join("\n").replace(/^\n+/, "");
  return `${head.join("\n")}\n\n${bodies.join("\n\n")}\n\nexport { ${exports} };\n`;
}

const check = process.argv.includes("--check");
// The codes' table in js/errors.js first (scripts/codes.mjs): the concern files import it.
let stale = codesTable(check) ? 0 : 1;
fs.mkdirSync(JOINED, { recursive: true });
for (const [joined, parts] of Object.entries(MODULES)) {
  const file = path.join(JOINED, joined);
  const text = join(joined, parts);
  const now = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : null;
  if (now === text) continue;
  if (check) {
    console.error(`js/joined/${joined} is not the join of its concern files: run node scripts/join-js.mjs`);
    stale++;
  } else {
    fs.writeFileSync(file, text);
  }
}
for (const [entry, parts] of Object.entries(ENTRIES)) {
  const file = path.join(ROOT, entry);
  const text = joinEntry(entry, parts);
  const now = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : null;
  if (now === text) continue;
  if (check) {
    console.error(`${entry} is not the join of its concern files: run node scripts/join-js.mjs`);
    stale++;
  } else {
    fs.writeFileSync(file, text);
  }
}
process.exit(stale ? 1 : 0);
