// builds: full (a capability of resilient-fetch/full: tests/package/run.mjs)
// Server-sent events that reconnect (policy `events`, `client.events()`): the WHATWG field rules,
// POST with a body, reconnects with Last-Event-ID after cuts and idle gaps, the backoff between
// reconnects (from the server's log), the answers that end a stream, the breaker, and stopping,
// against the fault server's /sse on 127.0.0.1.
import test from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { ORIGIN_A, compileTs, serverLog, sleep, uid, waitLog, within } from "./helpers.mjs";
import { ResilientClient, resilientEvents } from "resilient-fetch";

const sse = (id, plans) => `${ORIGIN_A}/sse?id=${id}&script=${encodeURIComponent(JSON.stringify(plans))}`;
const QUICK = { retry: { baseDelayMs: 10, maxDelayMs: 20 }, breaker: false };

/** The first `n` items of `stream`'s iterator (then it is left: the stream closes). */
async function take(stream, n, ms = 5000) {
  const items = [];
  await within((async () => {
    for await (const item of stream) {
      items.push(item);
      if (items.length === n) break;
    }
  })(), ms, `${n} events`);
  return items;
}

/** What ends `stream`'s iteration: the error it throws, or null when it ends cleanly. */
async function ending(stream, ms = 5000) {
  return within((async () => {
    try {
      for await (const _ of stream);
      return null;
    } catch (e) {
      return e;
    }
  })(), ms, "the stream's end");
}

test("the event stream is parsed as the WHATWG rules say, chunks split anywhere", async () => {
  const id = uid("sse-fields");
  const chunks = [
    "\uFEFFdata: a\r", "\n\r\n", ": a comment\n", "data:b1\nda", "ta: b2\n\n",
    "event: ping\ndata\n\n", "id: 7\0x\ndata: c\n\n", "id: 8\rdata: d\r\r",
    "retry: 12a\nretry: 250\ndata: e\n\n", "data:  two spaces\n\n", "foo: bar\nevent\ndata: f\r\n\r\n",
    "id: 9\n\n", "data: g\n\n", "data: unfinished",
  ];
  const client = new ResilientClient(QUICK);
  const stream = client.events(sse(id, [{ chunks, everyMs: 5, then: "hang" }]));
  const heard = [];
  stream.addEventListener("message", (e) => heard.push(["message", e.data, e.lastEventId]));
  stream.addEventListener("ping", (e) => heard.push(["ping", e.data, e.lastEventId]));
  let opened = 0;
  stream.onopen = () => opened++;
  assert.equal(stream.readyState, stream.CONNECTING);
  const items = await take(stream, 9);
  assert.deepEqual(items, [
    { data: "a", event: "message", id: "", retry: undefined },
    { data: "b1\nb2", event: "message", id: "", retry: undefined },
    { data: "", event: "ping", id: "", retry: undefined },
    { data: "c", event: "message", id: "", retry: undefined }, // an id with NUL is ignored
    { data: "d", event: "message", id: "8", retry: undefined }, // CR alone ends lines
    { data: "e", event: "message", id: "8", retry: 250 }, // retry: digits only
    { data: " two spaces", event: "message", id: "8", retry: undefined }, // one space goes
    { data: "f", event: "message", id: "8", retry: undefined }, // unknown fields ignored
    { data: "g", event: "message", id: "9", retry: undefined }, // an id without data still sets it
  ]);
  assert.deepEqual(heard.slice(0, 3), [["message", "a", ""], ["message", "b1\nb2", ""], ["ping", "", ""]]);
  assert.equal(opened, 1);
  assert.equal(stream.readyState, stream.CLOSED, "leaving the loop closes the stream");
  assert.equal(stream.lastEventId, "9");
  const [entry] = await waitLog(ORIGIN_A, id, (log) => log[0]?.closedAt);
  assert.equal(entry.accept, "text/event-stream");
  assert.equal(entry.cacheControl, "no-store");
  assert.equal(entry.lastEventId, null);
});

test("a POST with a body (an LLM API) streams, through the module-wide client too", async () => {
  const id = uid("sse-post");
  const body = JSON.stringify({ prompt: "hello" });
  const stream = resilientEvents(sse(id, [{ echo: true, then: "hang" }]), {
    method: "POST", body, headers: { "content-type": "application/json" },
  });
  const [item] = await take(stream, 1);
  assert.equal(item.data, body);
  const [entry] = await serverLog(ORIGIN_A, id);
  assert.equal(entry.method, "POST");
  assert.equal(entry.body, body);
});

test("a 200 that is not text/event-stream ends the stream with an error, no reconnect", async () => {
  const id = uid("sse-type");
  const stream = new ResilientClient(QUICK).events(sse(id, [{ type: "text/plain", chunks: ["data: x\n\n"] }]));
  let errors = 0;
  stream.onerror = () => errors++;
  const e = await ending(stream);
  assert.equal(e?.name, "EventStreamError");
  assert.equal(e.code, "not-event-stream");
  assert.equal(stream.readyState, 2);
  assert.equal(errors, 1);
  await sleep(200);
  assert.equal((await serverLog(ORIGIN_A, id)).length, 1);
});

test("a cut connection reconnects with Last-Event-ID, and error fires before it", async () => {
  const id = uid("sse-cut");
  const stream = new ResilientClient(QUICK).events(sse(id, [
    { chunks: ["id: 1\ndata: one\n\n", "data: partial"], then: "drop" },
    { chunks: ["id: 2\ndata: two\n\n"], then: "end" },
    { chunks: ["data: three\n\n"], then: "hang" },
  ]));
  const states = [];
  stream.addEventListener("error", () => states.push(stream.readyState));
  const items = await take(stream, 3);
  assert.deepEqual(items.map((i) => [i.data, i.id]), [["one", "1"], ["two", "2"], ["three", "2"]]);
  assert.deepEqual(states, [0, 0], "an error event, CONNECTING, before each reconnect");
  const log = await serverLog(ORIGIN_A, id);
  assert.deepEqual(log.map((e) => e.lastEventId), [null, "1", "2"]);
});

test("an idle gap longer than events.idleMs reconnects; heartbeats keep a stream alive", async () => {
  const id = uid("sse-idle");
  const stream = new ResilientClient({ ...QUICK, events: { idleMs: 1000 } }).events(sse(id, [
    { chunks: ["id: a\ndata: x\n\n"], then: "beat", beatMs: 200, beatForMs: 1600 },
    { chunks: ["data: y\n\n"], then: "hang" },
  ]));
  const items = await take(stream, 2, 8000);
  assert.deepEqual(items.map((i) => i.data), ["x", "y"]);
  const [first, second] = await serverLog(ORIGIN_A, id);
  assert.equal(second.lastEventId, "a");
  // Heartbeats for 1.6 s (longer than idleMs; the last at 1.4 s or later) kept it; then 1 s of
  // silence ended it.
  const lived = first.closedAt - first.t;
  assert.ok(lived >= 1400 + 1000 - 20 && lived < 1600 + 1000 + 500, `closed after ${lived} ms`);
  assert.ok(second.t >= first.closedAt - 5);
});

test("the waits between reconnects stay within the full-jitter window (server's retry as the base)", async () => {
  const id = uid("sse-backoff");
  const stream = new ResilientClient({ retry: { baseDelayMs: 50, maxDelayMs: 1000 }, breaker: false }).events(sse(id, [
    { chunks: ["retry: 300\n\n"], then: "drop" },
    { status: 503 }, { status: 503 }, { status: 503 },
    { chunks: ["data: up\n\n"], then: "hang" },
  ]));
  await take(stream, 1, 10_000);
  const log = await serverLog(ORIGIN_A, id);
  assert.equal(log.length, 5);
  // Reconnect k waits in [0, min(cap, 300 * 2^k)), the cap raised to the server's retry.
  const windows = [300, 600, 1000, 1000];
  const gaps = log.slice(1).map((e, k) => e.t - (log[k].closedAt ?? log[k].t));
  gaps.forEach((gap, k) => assert.ok(gap >= -5 && gap <= windows[k] + 100, `reconnect ${k}: ${gap} ms (window ${windows[k]})`));
});

test("204 ends the stream, as a status not retried does", async () => {
  for (const [status, code] of [[204, "no-content"], [404, "status"]]) {
    const id = uid("sse-end");
    const e = await ending(new ResilientClient(QUICK).events(sse(id, [{ status }])));
    assert.equal(e?.code, code, String(e));
    assert.equal(e.status, status);
    await sleep(150);
    assert.equal((await serverLog(ORIGIN_A, id)).length, 1, `${status}: no reconnect`);
  }
});

test("events: false never reconnects; events.maxReconnects bounds reconnects that bring no event", async () => {
  const id = uid("sse-off");
  const off = await ending(new ResilientClient({ ...QUICK, events: false }).events(sse(id, [{ chunks: ["data: x\n\n"], then: "drop" }])));
  assert.equal(off?.code, "no-reconnect", String(off));
  assert.equal((await serverLog(ORIGIN_A, id)).length, 1);
  const id2 = uid("sse-exhausted");
  const exhausted = await ending(new ResilientClient({ ...QUICK, events: { maxReconnects: 2 } }).events(sse(id2, [{ status: 503 }])));
  assert.equal(exhausted?.code, "exhausted", String(exhausted));
  assert.equal((await serverLog(ORIGIN_A, id2)).length, 3, "the first connection and 2 reconnects");
});

test("each reconnect is paid from the origin's retry budget: a spent budget ends the stream", async () => {
  const id = uid("sse-budget");
  // A reconnect after a drop costs what a retry after a network error does (timeoutRetryCost):
  // 25 tokens pay for two reconnects of 10, not a third.
  const client = new ResilientClient({ ...QUICK, retryBudget: { capacity: 25, timeoutRetryCost: 10 } });
  const ended = await ending(client.events(sse(id, [{ chunks: [": hello\n\n"], then: "drop" }])));
  assert.equal(ended?.code, "budget", String(ended));
  assert.equal((await serverLog(ORIGIN_A, id)).length, 3, "the first connection and the 2 reconnects paid for");
  assert.ok(client.stats()[ORIGIN_A].budgetTokens < 10, JSON.stringify(client.stats()[ORIGIN_A]));
});

test("an open breaker holds the reconnect back until its cooldown has passed", async () => {
  const id = uid("sse-breaker");
  const cooldownMs = 1500;
  const client = new ResilientClient({
    retry: { baseDelayMs: 10, maxDelayMs: 20 },
    breaker: { mode: "consecutive", failureThreshold: 2, cooldownMs },
  });
  const stream = client.events(sse(id, [{ status: 503 }, { status: 503 }, { chunks: ["data: back\n\n"], then: "hang" }]));
  const [item] = await take(stream, 1, 8000);
  assert.equal(item.data, "back");
  const log = await serverLog(ORIGIN_A, id);
  assert.equal(log.length, 3, "nothing sent while the breaker was open");
  assert.ok(log[2].t - log[1].t >= cooldownMs, `the probe went ${log[2].t - log[1].t} ms after the second 503`);
});

test("close() and the caller's signal stop a stream at once", async () => {
  const id = uid("sse-close");
  const stream = new ResilientClient(QUICK).events(sse(id, [{ chunks: ["data: x\n\n"], then: "hang" }]));
  await new Promise((resolve) => stream.addEventListener("message", resolve, { once: true }));
  const iteration = ending(stream);
  const closed = Date.now();
  stream.close();
  assert.equal(stream.readyState, 2);
  assert.equal(await iteration, null, "close() ends the iteration cleanly");
  const [entry] = await waitLog(ORIGIN_A, id, (log) => log[0]?.closedAt);
  assert.ok(entry.closedAt - closed < 200, `the server saw the close ${entry.closedAt - closed} ms later`);

  // Aborted while it waits to reconnect: no reconnect, the iteration throws the reason.
  const id2 = uid("sse-abort");
  const controller = new AbortController();
  const waiting = new ResilientClient({ retry: { baseDelayMs: 5000, maxDelayMs: 5000 }, breaker: false })
    .events(sse(id2, [{ chunks: ["retry: 5000\n\n"], then: "drop" }]), { signal: controller.signal });
  await new Promise((resolve) => waiting.addEventListener("error", resolve, { once: true }));
  const aborted = ending(waiting, 500);
  controller.abort();
  const e = await aborted;
  assert.equal(e?.name, "AbortError");
  await sleep(200);
  assert.equal((await serverLog(ORIGIN_A, id2)).length, 1);

  // Aborted while connected: the server sees the connection closed.
  const id3 = uid("sse-abort-open");
  const c3 = new AbortController();
  const open = new ResilientClient(QUICK).events(sse(id3, [{ chunks: ["data: x\n\n"], then: "hang" }]), { signal: c3.signal });
  await new Promise((resolve) => open.addEventListener("message", resolve, { once: true }));
  const at = Date.now();
  c3.abort();
  const [e3] = await waitLog(ORIGIN_A, id3, (log) => log[0]?.closedAt);
  assert.ok(e3.closedAt - at < 200);
  assert.equal(open.readyState, 2);
});

test("a bad events policy throws at once, naming the field and its range", () => {
  const client = new ResilientClient();
  assert.throws(() => client.events(`${ORIGIN_A}/sse`, {}, { events: { idleMs: 5 } }),
    { name: "RangeError", message: "events.idleMs must be an integer from 1000 to 2147483647 (got 5)" });
  assert.throws(() => new ResilientClient({ events: { maxReconnect: 1 } }), /did you mean "events.maxReconnects"/);
});

test("the lean build has no events", async () => {
  const lean = await import(["resilient", "fetch"].join("-"));
  assert.equal("resilientEvents" in lean, false);
  assert.equal(lean.ResilientClient.prototype.events, undefined);
  assert.throws(() => new lean.ResilientClient({ events: {} }), /events needs "resilient-fetch\/full"/);
});

const TS_PROGRAM = `
import { ResilientClient, resilientEvents, type EventStream, type EventsPolicy, type ServerSentEvent } from "resilient-fetch";
const events: EventsPolicy = { idleMs: 30_000, maxReconnects: 5 };
const client = new ResilientClient({ events, retry: { baseDelayMs: 100 } });
const stream: EventStream = client.events("http://127.0.0.1/sse", { method: "POST", body: "{}" }, { events: { idleMs: false } });
stream.onmessage = (e) => { const s: string = e.data + e.lastEventId; void s; };
stream.addEventListener("ping", () => {});
const state: 0 | 1 | 2 = stream.readyState;
void state;
async function main(): Promise<number> {
  let n = 0;
  for await (const item of resilientEvents(new URL("http://127.0.0.1/sse"))) {
    const e: ServerSentEvent = item;
    n += e.data.length + (e.retry ?? 0);
    if (e.event === "done") break;
  }
  stream.close();
  return n;
}
void main;
`;

test("the TypeScript declarations: with the DOM lib, with Node's types alone, with Workers' types", () => {
  const workers = path.join(process.env.RF_TOOLS_DIR, "node_modules", "@cloudflare", "workers-types");
  for (const [name, options, extra] of [
    ["events-dom", {}, []],
    ["events-node", { lib: ["es2022"], types: ["node"] }, []],
    ["events-workers", { lib: ["es2022"], types: [] }, [path.join(workers, "index.d.ts")]],
  ]) {
    const r = compileTs(name, TS_PROGRAM, "main.ts", options, extra);
    assert.equal(r.status, 0, `${name}: ${r.stdout}${r.stderr}`);
  }
  const bad = compileTs("events-bad", `import { ResilientClient } from "resilient-fetch";
new ResilientClient({ events: { idleMs: true } });`);
  assert.notEqual(bad.status, 0, "events.idleMs: true compiled");
});
