// Shortens every import and export name of the wasm (wasm-bindgen's are long: a hash on
// each, closure shims of 250 characters) with wasm-opt, and rewrites the glue files that
// load it to match. Names are bytes in the wasm and in the glue, and hashes do not
// compress: this saves kilobytes gzipped.
//   node scripts/minify-names.mjs WASM GLUE.js [GLUE.js ...]
// wasm-opt (on PATH) prints the renaming as JSON: imports [module, name, new name] (all
// imports move to one module, "a"), exports [name, new name]. Each glue's
// __wbg_get_imports() then returns { a: { new name: function } }, and every `wasm.name`
// becomes `wasm.new name`. Fails loudly if a glue does not have the shape expected.
import { execFileSync } from "node:child_process";
import fs from "node:fs";

const [wasm, ...glues] = process.argv.slice(2);
if (!wasm || glues.length === 0) throw new Error("usage: minify-names.mjs WASM GLUE.js [GLUE.js ...]");

const out = execFileSync("wasm-opt", [wasm, "--minify-imports-and-exports-and-modules", "-o", wasm],
  { encoding: "utf8", maxBuffer: 64 << 20 });
const map = JSON.parse(out.slice(out.indexOf("{")));
const modules = new Set(map.imports.map(([module]) => module));
const newModule = WebAssembly.Module.imports(new WebAssembly.Module(fs.readFileSync(wasm)))[0]?.module;
if (!newModule) throw new Error("the minified wasm has no imports");

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

for (const file of glues) {
  let glue = fs.readFileSync(file, "utf8");
  // The import object: module name -> the glue's variable for it.
  const block = /return \{\n\s+__proto__: null,\n((?:\s+"[^"]+": import\d+,\n)+)\s+\};/.exec(glue);
  if (!block) throw new Error(`${file}: no import object in __wbg_get_imports()`);
  const vars = new Map([...block[1].matchAll(/"([^"]+)": (import\d+)/g)].map((m) => [m[1], m[2]]));
  for (const module of modules) {
    if (!vars.has(module)) throw new Error(`${file}: the wasm imports from ${module}, the glue does not provide it`);
  }
  const own = vars.get("./resilient_fetch_bg.js");
  // The glue's own imports are an object literal of `name: function(...)`: renamed in place.
  const extra = [];
  for (const [module, name, short] of map.imports) {
    if (vars.get(module) === own) {
      const key = new RegExp(`^(\\s+)${escape(name)}: function\\(`, "m");
      if (!key.test(glue)) throw new Error(`${file}: import ${name} not found`);
      glue = glue.replace(key, `$1${short}: function(`);
    } else {
      extra.push(`${short}: ${vars.get(module)}.${name}`);
    }
  }
  glue = glue.replace(block[0], `return { ${JSON.stringify(newModule)}: Object.assign(${own}, { ${extra.join(", ")} }) };`);
  for (const [name, short] of map.exports) {
    glue = glue.replace(new RegExp(`\\bwasm\\.${escape(name)}(?![\\w$])`, "g"), `wasm.${short}`);
  }
  const left = /\bwasm\.(__wbg_|__wbindgen_|wasm_bindgen_)/.exec(glue);
  if (left) throw new Error(`${file}: an export left unrenamed near ${glue.slice(left.index, left.index + 60)}`);
  fs.writeFileSync(file, glue);
}
console.error(`[minify-names] ${map.imports.length} imports and ${map.exports.length} exports renamed in ${wasm}`);
