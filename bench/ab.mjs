// Two builds of the package side by side in one Node process, interleaved rounds of awaited
// GETs through resilientFetch against the same stub fetch (no network: the stub answers a
// fresh body-less 200): the per-call time of a change against the commit before it, with the
// machine's state the same for both. Not a table of bench/run.sh; a check of one change.
//   node bench/ab.mjs BEFORE_PKG_DIR AFTER_PKG_DIR     (each a built pkg/, scripts/build.sh)
const [a, b] = process.argv.slice(2);
globalThis.fetch = () => Promise.resolve(new Response(null, { status: 200 }));
const A = await import(a + "/node.mjs"), B = await import(b + "/node.mjs");
const URL_ = "http://127.0.0.1:9/x";
async function loop(f, n) { const t = performance.now(); for (let i = 0; i < n; i++) await f(URL_); return (performance.now() - t) * 1000 / n; }
for (const m of [A, B]) await loop(m.resilientFetch, 20000);
const ra = [], rb = [];
for (let r = 0; r < 8; r++) { ra.push(await loop(A.resilientFetch, 50000)); rb.push(await loop(B.resilientFetch, 50000)); }
const med = (x) => x.slice().sort((p, q) => p - q)[x.length >> 1];
console.log("before", med(ra).toFixed(2), "after", med(rb).toFixed(2), "ratio", (med(rb) / med(ra)).toFixed(3));
console.log(ra.map((x) => x.toFixed(1)).join(" "), "|", rb.map((x) => x.toFixed(1)).join(" "));
