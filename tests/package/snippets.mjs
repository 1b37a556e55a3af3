// The code blocks of the package's pages (README.md and docs/*.md, as installed), for
// snippets.test.mjs: found, sorted by the runtime each is written for, and made runnable
// against the fault server with only their URLs rewritten. Their imports stay exactly as
// written, so a snippet that imports what the package does not export fails.
//
// What the pages may leave out, the prelude gives as globals (never a name the package
// exports): `body` and `order` (a JSON body, an order), `showReceipt`, `showOffline`, `showSlow`,
// `showPending`, `showRetryLater` and `handle` (the app's own functions, which record their
// calls), `reread`, `login` and `refresh` (async, resolving to a token), and OpenTelemetry's
// `tracerProvider` and `meterProvider` (the SDK's, in Node).

/** The languages whose blocks are code to run; the others (sh) are counted, not run. */
export const RUN_LANGUAGES = ["js", "ts", "toml", "html"];

/**
 * The fenced blocks of a Markdown page: { page, line, lang, text, fragment }. A block is a
 * fragment when the line just above it is `<!-- fragment: why -->` (`fragment` holds the why).
 */
export function blocksOf(page, markdown) {
  const lines = markdown.split("\n");
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\S*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const [, indent, lang] = open;
    let end = i + 1;
    while (end < lines.length && lines[end].trim() !== "```") end++;
    if (end === lines.length) throw new Error(`${page}:${i + 1}: a code block that never closes`);
    const text = lines.slice(i + 1, end).map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l)).join("\n") + "\n";
    let above = i - 1;
    while (above >= 0 && lines[above].trim() === "") above--;
    const marker = above >= 0 ? /^\s*<!-- fragment:(.*?)-->\s*$/.exec(lines[above]) : null;
    blocks.push({ page, line: i + 1, lang, text, fragment: marker ? marker[1].trim() : null });
    i = end;
  }
  return blocks;
}

/**
 * Where a block runs, from what it is written for: "workerd" (a Worker: `cloudflare:workers`,
 * or an `export default` handler), "page" (HTML, served as it is), "vite" (browser code: a
 * relative URL means a page's origin), "deno" (`npm:` imports), "cjs" (`require`), "ts" (type
 * checked, then run in Node), "node" (an ES module in Node), "wrangler.toml" (the config of the
 * Worker below it).
 */
export function runtimeOf(block) {
  if (block.lang === "toml") return "wrangler.toml";
  if (block.lang === "html") return "page";
  if (block.lang === "ts") return "ts";
  if (/from "cloudflare:workers"|^export default \{/m.test(block.text)) return "workerd";
  if (/from "npm:/.test(block.text)) return "deno";
  if (/\brequire\("/.test(block.text)) return "cjs";
  if (/fetch\("\/[a-z]/.test(block.text)) return "vite";
  return "node";
}

// The hosts the pages use, and the fault server's endpoint for each path they name (a path
// not listed fails the test: a new snippet says here what it reaches).
const HOSTS = { "api.example.com": "A", "origin.example.com": "A", "api.github.com": "B", "api-eu.example.com": "B" };
const PATHS = {
  "": "",
  "/orders": "/api?id=orders",
  "/items": "/api?id=items",
  "/search?q=x": "/api?id=search&q=x",
  "/repos/o/r/issues": "/quota?id=issues&limit=100&form=x",
  "/api/search?q=x": "/api?id=search&q=x",
  "/api/report": "/api?id=report",
  "/api/checkout": "/api?id=checkout",
  "/api/events": "/trickle?id=events&chunks=3&everyMs=10",
  "/api/items": "/api?id=items",
  "/api/me": "/api?id=me",
  "/downloads/app.zip": "/resource?id=download&bytes=3000000&cuts=1000000,2000000",
  // docs/streams.md: event streams (the fault server's /sse plays the script).
  "/v1/chat": `/sse?id=chat&script=${encodeURIComponent(JSON.stringify([{ chunks: ["data: Hel\n\n", "data: lo\n\n", "data: [DONE]\n\n"], then: "hang" }]))}`,
  "/v1/prices": `/sse?id=prices&script=${encodeURIComponent(JSON.stringify([{ chunks: ['data: {"p":1}\n\n'], then: "hang" }]))}`,
};
// A page whose example is about what happens when the origin fails gets a failing endpoint.
const PAGE_PATHS = { "docs/edge.md": { "/orders": "/status?code=503&id=edge-orders" } };

/**
 * The block's text with every URL it names pointed at the fault server (origins `a`, `b`):
 * string literals with one of HOSTS, or a relative `/api/...` path. Throws on a URL it cannot
 * place, so nothing leaves 127.0.0.1.
 */
export function rewriteUrls(block, { a, b }) {
  const origins = { A: a, B: b };
  const paths = { ...PATHS, ...PAGE_PATHS[block.page] };
  const place = (path, where) => {
    if (!(path in paths)) throw new Error(`${where}: no fault-server endpoint for the path "${path}" (snippets.mjs PATHS)`);
    return paths[path];
  };
  const where = `${block.page}:${block.line}`;
  let text = block.text.replace(/(["'])https:\/\/([a-z0-9.-]+)([^"'\s]*)\1/g, (all, q, host, path) => {
    if (!(host in HOSTS)) throw new Error(`${where}: no origin for the host ${host} (snippets.mjs HOSTS)`);
    return q + origins[HOSTS[host]] + place(path, where) + q;
  });
  text = text.replace(/(["'])(\/api\/[^"'\s]*)\1/g, (all, q, path) => q + a + place(path, where) + q);
  const left = /https?:\/\/(?!127\.0\.0\.1[:/])[a-z0-9.-]+/.exec(text);
  if (left) throw new Error(`${where}: a URL the harness does not rewrite: ${left[0]}`);
  return text;
}

/** The prelude's globals (see the top of this file), as a script for any runtime. */
export const PRELUDE = `
globalThis.snippetCalls = [];
const record = (name) => (...args) => { globalThis.snippetCalls.push(name); return undefined; };
for (const name of ["showReceipt", "showOffline", "showSlow", "showPending", "showRetryLater", "handle"]) {
  globalThis[name] = record(name);
}
for (const name of ["reread", "login", "refresh"]) {
  globalThis[name] = async () => { globalThis.snippetCalls.push(name); return "token-" + name; };
}
globalThis.order = { item: "book", quantity: 1 };
globalThis.body = JSON.stringify(globalThis.order);
`;

/** The same names, declared for TypeScript (a .d.ts beside a ts snippet). */
export const PRELUDE_TYPES = `
declare const body: string;
declare const order: { item: string; quantity: number };
declare function showReceipt(receipt: unknown): void;
declare function showOffline(retryAfterMs: number): void;
declare function showSlow(): void;
declare function showPending(id: string): void;
declare function showRetryLater(retryAfterMs: number): void;
declare function handle(chunk: unknown): void;
declare function reread(): Promise<string>;
declare function login(): Promise<string>;
declare function refresh(): Promise<string>;
`;

/**
 * A wrangler.toml as the pages write it: top-level `key = "value"` pairs, `[[table]]` arrays
 * of tables with string and string-array values. Returns { top, tables: { name: [ {...} ] } }.
 */
export function parseWranglerToml(text, where) {
  const top = {}, tables = {};
  let current = top;
  for (const [n, raw] of text.split("\n").entries()) {
    const line = raw.replace(/\s+#.*$/, "").replace(/^#.*$/, "").trim();
    if (!line) continue;
    const table = /^\[\[([a-z_.]+)\]\]$/.exec(line);
    if (table) {
      current = {};
      (tables[table[1]] ??= []).push(current);
      continue;
    }
    const pair = /^([a-z_]+)\s*=\s*(.+)$/.exec(line);
    if (!pair) throw new Error(`${where}, line ${n + 1} of the toml: not understood: ${raw}`);
    current[pair[1]] = JSON.parse(pair[2]);
  }
  return { top, tables };
}

/**
 * What wrangler needs of a Worker's config before it builds (a name, the module, a
 * compatibility date; every Durable Object binding's class in a migration), and what workerd
 * makes of it: { main, compatibilityDate, bindings: [{ name, className }], classes }.
 */
export function workerConfig(toml, where) {
  const { top, tables } = parseWranglerToml(toml, where);
  for (const key of ["name", "main", "compatibility_date"]) {
    if (typeof top[key] !== "string") throw new Error(`${where}: the wrangler.toml has no ${key}`);
  }
  const bindings = (tables["durable_objects.bindings"] ?? []).map((b) => ({ name: b.name, className: b.class_name }));
  const migrated = (tables.migrations ?? []).flatMap((m) => [...(m.new_sqlite_classes ?? []), ...(m.new_classes ?? [])]);
  for (const { className } of bindings) {
    if (!migrated.includes(className)) throw new Error(`${where}: the class ${className} is bound but in no [[migrations]]`);
  }
  return { main: top.main, compatibilityDate: top.compatibility_date, bindings, classes: [...new Set(bindings.map((b) => b.className))] };
}
