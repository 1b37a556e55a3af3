// A download through broken connections (bench/README.md): a 10 MB body whose connection the
// server cuts 5 times, read with `resume` against one uncut download.
//
// A server on 127.0.0.1 in this process serves BENCH_RESUME_MB (10) MB of seeded bytes with a
// strong ETag, Accept-Ranges and Content-Length, honours `Range: bytes=N-` with `If-Range`, and
// destroys the socket once it has written each of BENCH_RESUME_CUTS (5) offsets of the whole
// resource (spread evenly; each once per download). Counted per download: the requests the server
// got, the bytes it wrote, the bytes re-sent beyond a cut (written minus the resource's size:
// bytes the client had been sent already; goal 0), whether the bytes read are the resource's
// (sha256), and the wall time, the median of BENCH_RESUME_ROUNDS (5) rounds. Beside ours: the
// platform's fetch uncut, and the platform's fetch that starts again from byte 0 after a break
// (what a caller does without resuming).

import { createServer } from "node:http";
import { createHash } from "node:crypto";
import { performance } from "node:perf_hooks";

import { ResilientClient } from "resilient-fetch/full";

const MB = Number(process.env.BENCH_RESUME_MB ?? 10);
const CUTS = Number(process.env.BENCH_RESUME_CUTS ?? 5);
const ROUNDS = Number(process.env.BENCH_RESUME_ROUNDS ?? 5);
const SIZE = MB * 1024 * 1024;

const BODY = Buffer.alloc(SIZE);
{
  let x = 0x9e3779b9;
  for (let i = 0; i < SIZE; i++) { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; BODY[i] = x & 0xff; }
}
const DIGEST = createHash("sha256").update(BODY).digest("hex");
const ETAG = '"bench-v1"';

// What the server did for the download under way: the cuts left to make, requests, bytes written.
let state = { cuts: [], requests: 0, written: 0 };
const server = createServer((req, res) => {
  state.requests++;
  const asked = /^bytes=(\d+)-$/.exec(req.headers.range ?? "");
  const honoured = asked !== null && (req.headers["if-range"] ?? ETAG) === ETAG;
  const start = honoured ? Number(asked[1]) : 0;
  const headers = { "content-type": "application/octet-stream", etag: ETAG, "accept-ranges": "bytes",
    "content-length": String(SIZE - start) };
  if (honoured) headers["content-range"] = `bytes ${start}-${SIZE - 1}/${SIZE}`;
  res.writeHead(honoured ? 206 : 200, headers);
  const cut = state.cuts.find((at) => at > start);
  const end = cut ?? SIZE;
  if (cut !== undefined) state.cuts = state.cuts.filter((at) => at !== cut);
  let at = start;
  const pump = () => {
    while (at < end) {
      const chunk = BODY.subarray(at, Math.min(end, at + 65536));
      at += chunk.length;
      state.written += chunk.length;
      if (!res.write(chunk)) { res.once("drain", pump); return; }
    }
    if (cut === undefined) res.end();
    else res.write("", () => setImmediate(() => res.socket?.destroy()));
  };
  pump();
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const URL_ = `http://127.0.0.1:${server.address().port}/file.bin`;

/** The offsets the server cuts at: `n` of them spread evenly through the resource. */
const cutsOf = (n) => Array.from({ length: n }, (_, i) => Math.floor((SIZE * (i + 1)) / (n + 1)));

/** One download by `read()` (the bytes) with `cuts`: its time, what the server did, whether the bytes are right. */
async function once(read, cuts) {
  state = { cuts: [...cuts], requests: 0, written: 0 };
  const t0 = performance.now();
  let bytes;
  let error = null;
  try {
    bytes = await read();
  } catch (e) {
    error = e;
  }
  const ms = performance.now() - t0;
  const right = bytes !== undefined && bytes.length === SIZE && createHash("sha256").update(bytes).digest("hex") === DIGEST;
  return { ms, right, error, requests: state.requests, written: state.written };
}

// Each resume is an attempt: room for the cuts. The default backoff (full jitter from 100 ms,
// doubling) is most of the time through cuts; with no backoff, what is left is the resuming.
const ours = new ResilientClient({ resume: true, retry: { maxAttempts: CUTS + 1 }, totalTimeoutMs: 120_000 });
const eager = new ResilientClient({ resume: true, retry: { maxAttempts: CUTS + 1, baseDelayMs: 0 }, totalTimeoutMs: 120_000 });
const bytesOf = async (client) => new Uint8Array(await (await client.fetch(URL_)).arrayBuffer());
const configurations = [
  { name: "ours, `resume: true`, 1 download uncut", cuts: 0, read: () => bytesOf(ours) },
  { name: `ours, \`resume: true\`, through ${CUTS} cuts (default backoff)`, cuts: CUTS, ours: true, read: () => bytesOf(ours) },
  { name: `ours, \`resume: true\`, through ${CUTS} cuts, \`baseDelayMs: 0\``, cuts: CUTS, read: () => bytesOf(eager) },
  { name: "fetch, 1 download uncut", cuts: 0, read: async () => new Uint8Array(await (await fetch(URL_)).arrayBuffer()) },
  {
    name: `fetch, through ${CUTS} cuts, starting again from byte 0 after each`,
    cuts: CUTS,
    read: async () => {
      for (let tries = 0; ; tries++) {
        try {
          return new Uint8Array(await (await fetch(URL_)).arrayBuffer());
        } catch (e) {
          if (tries >= CUTS) throw e;
        }
      }
    },
  },
];

const rows = [];
for (const c of configurations) {
  const runs = [];
  await once(c.read, cutsOf(c.cuts)); // warm-up
  for (let r = 0; r < ROUNDS; r++) runs.push(await once(c.read, cutsOf(c.cuts)));
  const times = runs.map((r) => r.ms).sort((a, b) => a - b);
  rows.push({ c, runs, median: times[Math.floor(times.length / 2)] });
}
server.close();
server.closeAllConnections?.();

const mb = (bytes) => (bytes / 1024 / 1024).toFixed(2);
console.log(`## A ${MB} MB download through ${CUTS} broken connections (a server on 127.0.0.1)`);
console.log("");
console.log(`The server cuts the connection after writing each of ${CUTS} offsets spread evenly through the body (each`);
console.log(`once per download). Re-sent: bytes the server wrote beyond the resource's ${MB} MB (bytes the client`);
console.log(`had been sent already). Time: the median of ${ROUNDS} downloads; the ratio is against ours uncut.`);
console.log("");
console.log("| configuration | bytes right | requests | MB written | MB re-sent | median ms | × ours uncut |");
console.log("| --- | :---: | ---: | ---: | ---: | ---: | ---: |");
const base = rows[0].median;
for (const { c, runs, median } of rows) {
  const last = runs.at(-1);
  const right = runs.every((r) => r.right) ? "yes" : `no (${runs.find((r) => !r.right).error})`;
  console.log(`| ${c.name} | ${right} | ${last.requests} | ${mb(last.written)} | ${mb(last.written - SIZE)} | ${median.toFixed(1)} | ${(median / base).toFixed(2)} |`);
}
const row = rows.find((r) => r.c.ours);
const resent = Math.max(...row.runs.map((r) => r.written - SIZE));
console.log("");
console.log("| target | measured | |");
console.log("| --- | --- | --- |");
console.log(`| 0 bytes re-sent beyond a cut, with \`resume\` | ${resent} | ${resent === 0 ? "met" : "NOT met"} |`);
console.log(`| the bytes read are the resource's (sha256), every download | ${row.runs.every((r) => r.right) ? "yes" : "no"} | ${row.runs.every((r) => r.right) ? "met" : "NOT met"} |`);
ours.free();
eager.free();
