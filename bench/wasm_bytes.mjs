// Where the wasm bytes go (bench/README.md): reads `twiggy top -n 100000 --format csv` of a
// copy of the package's wasm built the same way but with its function names kept
// (wasm-opt -Oz -g), and prints the largest items, the bytes per area, the panic and
// formatting machinery, and the generic functions instantiated most often.
//
// Usage: node wasm_bytes.mjs TWIGGY.csv SHIPPED.wasm

import { readFileSync, statSync } from "node:fs";

const [csvPath, shippedPath] = process.argv.slice(2);

function parseCsv(text) {
  const rows = [];
  for (const line of text.split("\n").slice(1)) {
    if (!line) continue;
    const fields = [];
    let i = 0;
    while (i <= line.length) {
      if (line[i] === '"') {
        let value = "";
        i++;
        while (i < line.length) {
          if (line[i] === '"' && line[i + 1] === '"') {
            value += '"';
            i += 2;
          } else if (line[i] === '"') {
            i++;
            break;
          } else value += line[i++];
        }
        fields.push(value);
        i++; // the comma
      } else {
        const end = line.indexOf(",", i);
        const stop = end === -1 ? line.length : end;
        fields.push(line.slice(i, stop));
        i = stop + 1;
      }
    }
    rows.push({ name: fields[0], size: Number(fields[1]) });
  }
  return rows;
}

const all = parseCsv(readFileSync(csvPath, "utf8")).filter((r) => !/^Σ|^\.\.\. and /.test(r.name));
// The names subsection exists only in this analysis copy (the shipped file has none).
const items = all.filter((r) => !/names" subsection|^custom section/.test(r.name));
const total = items.reduce((a, r) => a + r.size, 0);
const shipped = statSync(shippedPath).size;

// Compiler crate hashes ("core[c5930c85a12de822]") and symbol hashes ("::h0123...") out.
const clean = (name) => name.replace(/\[[0-9a-f]{16}\]/g, "").replace(/::h[0-9a-f]{16}$/, "");
const pct = (b) => `${((100 * b) / total).toFixed(1)}%`;
const kb = (b) => `${(b / 1024).toFixed(1)} KB`;
const short = (s, n = 110) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

const areas = [
  ["data segments (strings, tables, constants)", /^data segment/],
  ["f64 formatting (core::fmt float: Display, flt2dec, dragon/grisu)", /flt2dec|fmt::float|<f64 as core::fmt|float_to_decimal|dragon|grisu/],
  ["other core::fmt (Display/Debug, Formatter, write, escapes)", /core::fmt|Formatter|fmt::write|pad_integral|escape_debug|as core::fmt::(Debug|Display)>|alloc::fmt::format/],
  ["panics and bounds/unwrap failures", /panic|unwrap_failed|expect_failed|slice_error_fail|slice_(start|end)_index|index_out_of_bounds|str_index|rust_begin_unwind|abort/],
  ["serde-wasm-bindgen (options in)", /serde_wasm_bindgen/],
  ["serde (core traits, derives)", /serde/],
  ["async: the call's task (its future inlined into it: settle::promise_with), the task queue", /future_to_promise|promise_with|wasm_bindgen_futures|js_sys::futures/],
  ["ours: shell (src/wasm)", /resilient_fetch::wasm/],
  ["ours: policy (decode, merge, validate)", /resilient_fetch::policy/],
  ["ours: core (engine, breaker, registry, origin, ...)", /resilient_fetch::/],
  ["allocator (talc) and alloc glue", /dlmalloc|talc|__rdl_|__rust_(alloc|dealloc|realloc)|alloc::alloc|handle_alloc_error|capacity_overflow/],
  ["alloc collections (Vec, String, BTreeMap, Rc, ...)", /alloc::|hashbrown|btree|RawVec/],
  ["wasm-bindgen exports, shims and externref table", /wasm_bindgen|externref|shim|__wbindgen|__wbg|^export /],
  ["js-sys / web-sys / gloo / getrandom", /js_sys|web_sys|gloo|getrandom/],
  ["core (str, char, slices, drop glue, other)", /core::|<char>|<str|drop_in_place|drop_glue/],
  ["wasm structure (types, imports, tables, globals)", /^(type|import|table|elem|global|memory|start)\b|\[\d+\]$/],
];
const grouped = new Map(areas.map(([name]) => [name, { bytes: 0, count: 0 }]));
grouped.set("other", { bytes: 0, count: 0 });
for (const r of items) {
  const name = clean(r.name);
  const area = areas.find(([, re]) => re.test(name))?.[0] ?? "other";
  const g = grouped.get(area);
  g.bytes += r.size;
  g.count++;
}

console.log("## Where the wasm bytes go (twiggy)");
console.log("");
console.log(
  `Shipped wasm: ${shipped} bytes. Analysed: the same build with function names kept (wasm-opt -Oz -g), ${total} bytes without the names section.`,
);
console.log("");
console.log("| area | bytes | share | items |");
console.log("| --- | ---: | ---: | ---: |");
for (const [name, g] of [...grouped].sort((a, b) => b[1].bytes - a[1].bytes)) {
  if (g.bytes) console.log(`| ${name} | ${g.bytes} | ${pct(g.bytes)} | ${g.count} |`);
}
console.log("");

console.log("Largest items (twiggy top):");
console.log("");
console.log("| bytes | share | item |");
console.log("| ---: | ---: | --- |");
for (const r of items.slice(0, 20)) console.log(`| ${r.size} | ${pct(r.size)} | ${short(clean(r.name)).replace(/\|/g, "\\|")} |`);
console.log("");

// Generic functions: the same path with different type arguments, counted by their base.
const stripArgs = (name) => {
  let depth = 0;
  let out = "";
  for (const ch of name) {
    if (ch === "<") depth++;
    if (depth === 0) out += ch;
    if (ch === ">") {
      depth = Math.max(0, depth - 1);
      if (depth === 0) out += "<…>";
    }
  }
  return out;
};
// "<T as Trait<U>>::method" counts as "<_ as Trait>::method": one trait method, many types.
const base = (name) => {
  const c = clean(name);
  if (c.startsWith("<")) {
    let depth = 0;
    for (let i = 0; i < c.length; i++) {
      if (c[i] === "<") depth++;
      if (c[i] === ">" && --depth === 0) {
        const inner = c.slice(1, i);
        const as = inner.lastIndexOf(" as ");
        const rest = stripArgs(c.slice(i + 1));
        if (as === -1) return `<${stripArgs(inner)}>${rest}`;
        return `<_ as ${stripArgs(inner.slice(as + 4))}>${rest}`;
      }
    }
  }
  return stripArgs(c);
};
const generics = new Map();
for (const r of items) {
  if (/^data segment|^(type|import|export|table|elem|global)\b/.test(r.name)) continue;
  const key = base(r.name);
  const g = generics.get(key) ?? { bytes: 0, count: 0 };
  g.bytes += r.size;
  g.count++;
  generics.set(key, g);
}
const many = [...generics].filter(([, g]) => g.count >= 3).sort((a, b) => b[1].bytes - a[1].bytes);
console.log("Functions instantiated 3 or more times (same path, different type arguments or closures):");
console.log("");
console.log("| function | copies | bytes |");
console.log("| --- | ---: | ---: |");
for (const [name, g] of many.slice(0, 12)) console.log(`| ${short(name, 100).replace(/\|/g, "\\|")} | ${g.count} | ${g.bytes} |`);
console.log("");
console.log(`(${kb(total)} analysed, ${items.length} items; ${kb(shipped)} shipped)`);
