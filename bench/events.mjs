// Server-sent events parsed per second (bench/README.md): one server on 127.0.0.1 writes the same
// event stream to every client: BENCH_EVENTS_COUNT events (20 000) of about 50 bytes (an id, an
// event name on every tenth, one or two data lines; about 1 MB), in BENCH_EVENTS_CHUNK-byte writes
// (1024), then ends. Each client reads it to its last event: ours (`client.events()`, the Rust
// parser in the wasm: each chunk's bytes cross into wasm memory, each event's strings cross back)
// and @microsoft/fetch-event-source (pinned in package.json; its parser is JS), both over Node's
// fetch. BENCH_EVENTS_ROUNDS rounds (7) after a warm-up, alternating; the medians are reported,
// with the time per chunk.
import { createServer } from "node:http";
import { performance } from "node:perf_hooks";

import { ResilientClient } from "resilient-fetch/full";
import { fetchEventSource } from "@microsoft/fetch-event-source";

const COUNT = Number(process.env.BENCH_EVENTS_COUNT ?? 20_000);
const CHUNK = Number(process.env.BENCH_EVENTS_CHUNK ?? 1024);
const ROUNDS = Number(process.env.BENCH_EVENTS_ROUNDS ?? 7);

// fetch-event-source is written for pages: it reads window's timers and document's visibility
// (openWhenHidden: true; it still removes its listener when done), given here as a page has them.
globalThis.window ??= globalThis;
globalThis.document ??= { hidden: false, addEventListener() {}, removeEventListener() {} };

let text = "";
for (let i = 0; i < COUNT; i++) {
  if (i % 10 === 0) text += "event: tick\n";
  text += `id: ${i}\ndata: {"n":${i},"text":"event number ${i}"}\n`;
  if (i % 3 === 0) text += "data: a second line\n";
  text += "\n";
}
const body = Buffer.from(text);
const chunks = Math.ceil(body.length / CHUNK);

const server = createServer((req, res) => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store" });
  for (let at = 0; at < body.length; at += CHUNK) res.write(body.subarray(at, at + CHUNK));
  res.end();
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${server.address().port}/stream`;

const client = new ResilientClient({ breaker: false, retry: false });

/** ms until ours has seen every event. */
async function ours() {
  const t0 = performance.now();
  let n = 0;
  for await (const _ of client.events(url)) if (++n === COUNT) break;
  return performance.now() - t0;
}

/** ms until fetch-event-source has seen every event. */
function theirs() {
  const t0 = performance.now();
  const controller = new AbortController();
  let n = 0;
  return new Promise((resolve, reject) => {
    fetchEventSource(url, {
      signal: controller.signal,
      openWhenHidden: true,
      fetch: globalThis.fetch,
      onmessage() {
        if (++n === COUNT) {
          controller.abort();
          resolve(performance.now() - t0);
        }
      },
      onerror(e) { reject(e); throw e; },
    }).catch(reject);
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const runs = { ours: [], theirs: [] };
await ours();
await theirs();
for (let r = 0; r < ROUNDS; r++) {
  runs.ours.push(await ours());
  runs.theirs.push(await theirs());
}
server.close();

const row = (name, ms) =>
  `| ${name} | ${Math.round(COUNT / (ms / 1000)).toLocaleString("en")} | ${ms.toFixed(1)} | ${((ms * 1000) / chunks).toFixed(1)} |`;
console.log(`\n### Server-sent events parsed per second (${COUNT} events, ${(body.length / 1e6).toFixed(2)} MB in ${CHUNK}-byte chunks, Node ${process.version}, median of ${ROUNDS})\n`);
console.log("| client | events/s | ms for the stream | µs per chunk |");
console.log("| --- | ---: | ---: | ---: |");
console.log(row("resilient-fetch/full `client.events()` (Rust parser)", median(runs.ours)));
console.log(row("@microsoft/fetch-event-source 2.0.1 (JS parser)", median(runs.theirs)));
