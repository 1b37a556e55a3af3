// resilient-fetch/otel in Node: the packed package's entry, imported by name, against the fault
// server, into the OpenTelemetry SDK's in-memory span exporter and an in-memory metric exporter
// whose reader is flushed on demand. The API and SDK are tools/'s, linked into the scratch
// project as a user would have installed them (the API is an optional peer dependency).
import test, { after } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import http from "node:http";
import path from "node:path";
import { ORIGIN_A, ORIGIN_B, SCRATCH, errorOf, linkTools, serverLog, uid, fullOnly } from "./helpers.mjs";

linkTools(["@opentelemetry/api", "@opentelemetry/core", "@opentelemetry/sdk-trace-base", "@opentelemetry/sdk-metrics",
  "@opentelemetry/context-async-hooks"]);
const { ResilientClient, install, uninstall, CircuitOpenError, QueuedError, TimeoutError } = await import("resilient-fetch");
const { instrument } = await import("resilient-fetch/otel");
const otel = await import("@opentelemetry/api");
const { W3CTraceContextPropagator } = await import("@opentelemetry/core");
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = await import("@opentelemetry/sdk-trace-base");
const { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } =
  await import("@opentelemetry/sdk-metrics");
const { AsyncLocalStorageContextManager } = await import("@opentelemetry/context-async-hooks");

const { SpanKind, SpanStatusCode } = otel;
// As an app's SDK set-up does in Node: the active span follows async code.
otel.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
after(() => otel.context.disable());

const PORT = Number(new URL(ORIGIN_A).port);
const M = "resilient_fetch.";

/** A tracer provider and a meter provider of their own, exporting to memory. */
function telemetry() {
  const spanExporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spanExporter)] });
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  // Exported when flushed, never on its own.
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 2 ** 31 - 1 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    tracerProvider, meterProvider, options: { tracerProvider, meterProvider },
    tracer: tracerProvider.getTracer("app"),
    spans: () => spanExporter.getFinishedSpans(),
    /** The metrics now, by name. */
    async metrics() {
      await reader.forceFlush();
      const exported = metricExporter.getMetrics().at(-1);
      return new Map((exported?.scopeMetrics ?? []).flatMap((s) => s.metrics).map((m) => [m.descriptor.name, m]));
    },
    shutdown: () => Promise.all([meterProvider.shutdown(), tracerProvider.shutdown()]),
  };
}

/** The data points of metric `name` whose attributes include `attrs`. */
function points(metrics, name, attrs = {}) {
  return (metrics.get(M + name)?.dataPoints ?? [])
    .filter((p) => Object.entries(attrs).every(([k, v]) => p.attributes[k] === v));
}
/** Their sum (counters, gauges) or count (histograms). */
const total = (pts) => pts.reduce((n, p) => n + (typeof p.value === "number" ? p.value : p.value.count), 0);

const parentOf = (span) => span.parentSpanContext?.spanId;
const idOf = (span) => span.spanContext().spanId;
const byStart = (a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1];
const callSpans = (spans) => spans.filter((s) => s.name.startsWith("resilient_fetch "));
const attemptsOf = (spans, call) => spans.filter((s) => parentOf(s) === idOf(call)).sort(byStart);
const eventsOf = (span, name) => span.events.filter((e) => e.name === M + name);

/** No attribute of any metric point holds a path, a query or the test's id. */
function assertBounded(metrics, id) {
  for (const [name, m] of metrics) {
    for (const p of m.dataPoints) {
      for (const [k, v] of Object.entries(p.attributes)) {
        if (typeof v !== "string") continue;
        assert.ok(!v.includes(id) && !v.includes("?") && !/^https?:\/\/[^/]+\/./.test(v), `${name} ${k}=${v}`);
      }
    }
  }
}

test("a retried GET: a call span under the caller's span, a CLIENT span per attempt, resend_count from the second, the backoff as span events", async () => {
  const t = telemetry();
  const seen = [];
  const client = instrument(ResilientClient,
    { retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 5 }, breaker: false, onEvent: (e) => seen.push(e.type) },
    t.options);
  const id = uid("otel-retry");
  const res = await t.tracer.startActiveSpan("handler", async (handler) => {
    try {
      return await client.fetch(`${ORIGIN_A}/flaky?id=${id}&fail=2&code=503#part`);
    } finally {
      handler.end();
    }
  });
  assert.equal(res.status, 200);
  assert.equal((await serverLog(ORIGIN_A, id)).length, 3);
  const spans = t.spans();
  const handler = spans.find((s) => s.name === "handler");
  const [call, ...others] = callSpans(spans);
  assert.deepEqual(others, [], "one call span");
  assert.equal(call.name, "resilient_fetch GET");
  assert.equal(call.kind, SpanKind.INTERNAL);
  assert.equal(parentOf(call), idOf(handler), "the call span is a child of the caller's active span");
  assert.equal(call.spanContext().traceId, handler.spanContext().traceId);
  const base = { "http.request.method": "GET", "url.full": `${ORIGIN_A}/flaky`, "server.address": "127.0.0.1", "server.port": PORT };
  assert.deepEqual(call.attributes, { ...base, [M + "origin"]: ORIGIN_A, [M + "attempts"]: 3, "http.response.status_code": 200 });
  assert.equal(call.status.code, SpanStatusCode.UNSET);
  const attempts = attemptsOf(spans, call);
  assert.equal(attempts.length, 3);
  assert.deepEqual(attempts.map((s) => [s.name, s.kind]), Array(3).fill(["GET", SpanKind.CLIENT]));
  assert.deepEqual(attempts.map((s) => s.attributes), [
    { ...base, "http.response.status_code": 503, "error.type": "503" },
    { ...base, "http.request.resend_count": 1, "http.response.status_code": 503, "error.type": "503" },
    { ...base, "http.request.resend_count": 2, "http.response.status_code": 200 },
  ]);
  assert.deepEqual(attempts.map((s) => s.status.code), [SpanStatusCode.ERROR, SpanStatusCode.ERROR, SpanStatusCode.UNSET]);
  const retries = eventsOf(call, "retry");
  assert.deepEqual(retries.map((e) => [e.attributes[M + "attempt"], e.attributes[M + "reason"], e.attributes[M + "retry_after"]]),
    [[2, "status", false], [3, "status", false]]);
  assert.ok(retries.every((e) => e.attributes[M + "delay_ms"] >= 0 && e.attributes[M + "delay_ms"] <= 5));
  // The wait lies between the attempts: each retry event after the attempt before it ended.
  assert.ok(byStart({ startTime: attempts[0].endTime }, { startTime: retries[0].time }) <= 0);
  // The client's own listener still hears every event.
  assert.deepEqual(seen, ["attemptStart", "attemptEnd", "retry", "attemptStart", "attemptEnd", "retry", "attemptStart",
    "attemptEnd", "success"]);
  await t.shutdown();
});

test("calls made at once under different spans: each call and its attempts stay under its own caller", async () => {
  const t = telemetry();
  const client = instrument(ResilientClient, { retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 20 }, breaker: false },
    t.options);
  const N = 8;
  const results = await Promise.all(Array.from({ length: N }, (_, i) =>
    t.tracer.startActiveSpan(`handler-${i}`, async (handler) => {
      try {
        await Promise.resolve(); // the call made after an await, as handlers do
        const res = await client.fetch(`${ORIGIN_A}/flaky?id=${uid(`otel-conc-${i}`)}&fail=${i % 3}&code=503`);
        return res.status;
      } finally {
        handler.end();
      }
    })));
  assert.deepEqual(results, Array(N).fill(200));
  const spans = t.spans();
  const calls = callSpans(spans);
  assert.equal(calls.length, N);
  for (let i = 0; i < N; i++) {
    const handler = spans.find((s) => s.name === `handler-${i}`);
    const mine = calls.filter((c) => parentOf(c) === idOf(handler));
    assert.equal(mine.length, 1, `handler-${i} has its own call span`);
    const attempts = attemptsOf(spans, mine[0]);
    assert.equal(attempts.length, 1 + (i % 3), `handler-${i}'s call has its attempts`);
    assert.ok(attempts.every((a) => a.spanContext().traceId === handler.spanContext().traceId));
    assert.deepEqual(attempts.map((a) => a.attributes["http.request.resend_count"]),
      [undefined, 1, 2].slice(0, 1 + (i % 3)));
  }
  assert.equal(spans.filter((s) => s.kind === SpanKind.CLIENT).length, Array.from({ length: N }, (_, i) => 1 + (i % 3))
    .reduce((a, b) => a + b), "no attempt span more or less");
  await t.shutdown();
});

test("an open breaker: the refused call has a span with its refusal and no attempt; transitions, short circuits and the state gauge", async () => {
  const t = telemetry();
  const client = instrument(ResilientClient, { retry: false, breaker: { failureThreshold: 2, cooldownMs: 60_000 } }, t.options);
  const id = uid("otel-breaker");
  const url = `${ORIGIN_A}/status?code=503&id=${id}`;
  assert.equal((await client.fetch(url)).status, 503);
  assert.equal((await client.fetch(url)).status, 503);
  const refused = await errorOf(client.fetch(url));
  assert.ok(refused instanceof CircuitOpenError, String(refused));
  assert.equal((await serverLog(ORIGIN_A, id)).length, 2, "nothing sent once open");
  const spans = t.spans();
  const calls = callSpans(spans).sort(byStart);
  assert.equal(calls.length, 3);
  assert.deepEqual(calls.map((c) => c.attributes["error.type"]), ["503", "503", "CircuitOpenError"]);
  assert.deepEqual(calls.map((c) => c.attributes[M + "attempts"]), [1, 1, 0]);
  assert.deepEqual(attemptsOf(spans, calls[2]), [], "a refused call sends nothing");
  assert.equal(eventsOf(calls[2], "short_circuit").length, 1);
  assert.ok(eventsOf(calls[2], "short_circuit")[0].attributes[M + "retry_after_ms"] > 50_000);
  assert.equal(calls[2].status.code, SpanStatusCode.ERROR);
  assert.ok(calls[2].events.some((e) => e.name === "exception"), "the error is recorded on the call span");
  const opened = eventsOf(calls[1], "breaker_transition");
  assert.deepEqual(opened.map((e) => [e.attributes[M + "breaker.previous_state"], e.attributes[M + "breaker.state"],
    e.attributes[M + "reason"]]), [["closed", "open", "failures"]]);
  const m = await t.metrics();
  const o = { [M + "origin"]: ORIGIN_A };
  assert.equal(total(points(m, "short_circuits", o)), 1);
  assert.equal(total(points(m, "breaker.transitions", { ...o, [M + "breaker.state"]: "open", [M + "breaker.previous_state"]: "closed",
    [M + "reason"]: "failures" })), 1);
  assert.deepEqual(Object.fromEntries(points(m, "breaker.state", o).map((p) => [p.attributes[M + "breaker.state"], p.value])),
    { closed: 0, open: 1, "half-open": 0 });
  assert.equal(total(points(m, "attempts", { ...o, [M + "outcome"]: "response", "http.response.status_code": 503 })), 2);
  assert.equal(total(points(m, "call.duration", { ...o, "error.type": "CircuitOpenError" })), 1);
  assert.equal(total(points(m, "call.duration", { ...o, "error.type": "503", "http.request.method": "GET" })), 2);
  assertBounded(m, id);
  await t.shutdown();
});

test("timeouts: attempt spans with error.type timeout, the call's TimeoutError, and the retry metrics (reason, delay, per call)", async () => {
  const t = telemetry();
  const client = instrument(ResilientClient,
    { timeoutMs: 100, retry: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 10 }, breaker: false }, t.options);
  const id = uid("otel-timeout");
  const error = await errorOf(client.fetch(`${ORIGIN_A}/hang?id=${id}`));
  assert.ok(error instanceof TimeoutError, String(error));
  const spans = t.spans();
  const [call] = callSpans(spans);
  assert.equal(call.attributes["error.type"], "TimeoutError");
  assert.equal(call.status.code, SpanStatusCode.ERROR);
  const attempts = attemptsOf(spans, call);
  assert.deepEqual(attempts.map((a) => a.attributes["error.type"]), ["timeout", "timeout"]);
  assert.ok(attempts.every((a) => a.status.code === SpanStatusCode.ERROR && a.attributes["http.response.status_code"] === undefined));
  assert.deepEqual(eventsOf(call, "give_up").map((e) => e.attributes[M + "reason"]), ["maxAttempts"]);
  const m = await t.metrics();
  const o = { [M + "origin"]: ORIGIN_A };
  assert.equal(total(points(m, "attempts", { ...o, [M + "outcome"]: "timeout" })), 2);
  assert.equal(total(points(m, "retries", { ...o, [M + "reason"]: "timeout" })), 1);
  const [delay] = points(m, "retry.delay", { ...o, [M + "reason"]: "timeout" });
  assert.equal(delay.value.count, 1);
  assert.ok(delay.value.sum >= 0 && delay.value.sum <= 0.01, `one wait of at most 10 ms: ${delay.value.sum} s`);
  assert.equal(m.get(M + "retry.delay").descriptor.unit, "s");
  const [perCall] = points(m, "call.retries", o);
  assert.deepEqual([perCall.value.count, perCall.value.sum], [1, 1], "one call that retried once");
  assert.equal(total(points(m, "give_ups", { ...o, [M + "reason"]: "maxAttempts" })), 1);
  const [duration] = points(m, "attempt.duration", { ...o, [M + "outcome"]: "timeout" });
  assert.ok(duration.value.sum >= 0.18, `two attempts of 100 ms: ${duration.value.sum} s`);
  assertBounded(m, id);
  await t.shutdown();
});

test("a hedged read: the hedge is a span event and an attribute of its attempt, the slow one is aborted; hedges and wins counted", fullOnly(), async () => {
  const t = telemetry();
  const client = instrument(ResilientClient, { hedge: { delayMs: 30 }, breaker: false }, t.options);
  const id = uid("otel-hedge");
  const res = await client.fetch(`${ORIGIN_A}/tail?id=${id}&slow=1&ms=1000`);
  assert.equal(await res.text(), "tail");
  const spans = t.spans();
  const [call] = callSpans(spans);
  const [first, hedge] = attemptsOf(spans, call);
  assert.equal(first.attributes["error.type"], "aborted");
  assert.equal(first.attributes[M + "hedge"], undefined);
  assert.equal(hedge.attributes[M + "hedge"], true);
  assert.equal(hedge.attributes["http.request.resend_count"], 1);
  assert.equal(hedge.attributes["http.response.status_code"], 200);
  assert.deepEqual(eventsOf(call, "hedge").map((e) => [e.attributes[M + "attempt"], e.attributes[M + "delay_ms"]]), [[2, 30]]);
  const m = await t.metrics();
  const o = { [M + "origin"]: ORIGIN_A };
  assert.equal(total(points(m, "hedges", o)), 1);
  assert.equal(total(points(m, "hedge.wins", o)), 1);
  assert.equal(total(points(m, "attempts", { ...o, [M + "outcome"]: "aborted" })), 1);
  await t.shutdown();
});

test("a stale answer: the call span says which failure it stood in for (an attribute of a bounded set and a span event), and ends as its answer", fullOnly(), async () => {
  const t = telemetry();
  const client = instrument(ResilientClient, { stale: true, retry: false, breaker: false }, t.options);
  const url = `${ORIGIN_A}/kept?id=${uid("otel-stale")}`;
  await (await client.fetch(url)).text();
  const served = await client.fetch(url);
  assert.equal(await served.text(), "kept 1");
  const calls = callSpans(t.spans()).sort(byStart);
  assert.equal(calls[0].attributes[M + "stale.reason"], undefined);
  assert.equal(calls[1].attributes[M + "stale.reason"], "status");
  assert.equal(calls[1].attributes["http.response.status_code"], 200);
  assert.deepEqual(eventsOf(calls[1], "stale").map((e) => e.attributes[M + "reason"]), ["status"]);
  await t.shutdown();
});

test("failover: an attempt sent to an alternate origin has a span naming that origin; its metrics count it there", fullOnly(), async () => {
  const t = telemetry();
  const client = instrument(ResilientClient, {
    failover: { [ORIGIN_A]: [ORIGIN_B] }, retry: { baseDelayMs: 0, maxDelayMs: 0 }, breaker: false,
  }, t.options);
  const id = uid("otel-failover");
  assert.equal(await (await client.fetch(`${ORIGIN_A}/down?id=${id}&on=a&k=1`)).text(), "ok b");
  const spans = t.spans();
  const [call] = callSpans(spans);
  const [first, second] = attemptsOf(spans, call);
  const [a, b] = [new URL(ORIGIN_A), new URL(ORIGIN_B)];
  assert.equal(first.attributes["url.full"], `${ORIGIN_A}/down`);
  assert.equal(second.attributes["url.full"], `${ORIGIN_B}/down`, "the same path, at B; no query, as for A");
  assert.deepEqual([second.attributes["server.address"], second.attributes["server.port"]], [b.hostname, Number(b.port)]);
  assert.equal(first.attributes["server.port"], Number(a.port));
  assert.equal(call.attributes["url.full"], `${ORIGIN_A}/down`, "the call's span keeps the URL the caller gave");
  const m = await t.metrics();
  const ends = (origin) => total(points(m, "attempts", { [M + "origin"]: origin }));
  assert.deepEqual([ends(ORIGIN_A), ends(ORIGIN_B)], [1, 1]);
  await t.shutdown();
});

test("rate limits: a call that waits for its origin's quota has the wait as a span event and in the wait histogram", fullOnly(), async () => {
  const t = telemetry();
  const client = instrument(ResilientClient, { breaker: false }, t.options);
  const id = uid("otel-quota");
  const url = `${ORIGIN_A}/quota?id=${id}&limit=1&windowMs=1000`;
  assert.equal((await client.fetch(url)).status, 200); // spends the window's only request
  assert.equal((await client.fetch(url)).status, 200); // waits for the next window
  const calls = callSpans(t.spans()).sort(byStart);
  assert.equal(eventsOf(calls[0], "rate_limit_wait").length, 0);
  const [wait] = eventsOf(calls[1], "rate_limit_wait");
  assert.equal(wait.attributes[M + "reason"], "quota");
  assert.ok(wait.attributes[M + "delay_ms"] > 0 && wait.attributes[M + "delay_ms"] <= 1000);
  const m = await t.metrics();
  const [waits] = points(m, "rate_limit.wait", { [M + "origin"]: ORIGIN_A, [M + "reason"]: "quota" });
  assert.equal(waits.value.count, 1);
  await t.shutdown();
});

test("propagate: each attempt sends its own span's traceparent, beside the call's idempotency key; off by default", async () => {
  otel.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  try {
    const t = telemetry();
    const retry = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1 };
    const traced = instrument(ResilientClient, { retry, breaker: false }, { ...t.options, propagate: true });
    const id = uid("otel-propagate");
    // A POST through the fast path (the init gets the key header) and a Request (its headers kept).
    assert.equal((await traced.fetch(`${ORIGIN_A}/flaky?id=${id}&fail=1&code=503`, { method: "POST", body: "x" })).status, 200);
    const rid = uid("otel-propagate-request");
    const request = new Request(`${ORIGIN_A}/flaky?id=${rid}&fail=1&code=503`, { headers: { "x-app": "1" } });
    assert.equal((await traced.fetch(request)).status, 200);
    const spans = t.spans();
    for (const [logId, method] of [[id, "POST"], [rid, "GET"]]) {
      const log = await serverLog(ORIGIN_A, logId);
      const call = callSpans(spans).find((c) => c.attributes["http.request.method"] === method);
      const attempts = attemptsOf(spans, call);
      assert.deepEqual(log.map((r) => r.traceparent),
        attempts.map((a) => `00-${a.spanContext().traceId}-${idOf(a)}-01`), `${method}: each attempt's own span`);
      if (method === "POST") {
        assert.ok(log[0].key !== null && log.every((r) => r.key === log[0].key), "the key is still sent, the same on each attempt");
      } else {
        assert.ok(log.every((r) => r.headers.includes("x-app")), "the request's own headers are kept");
      }
    }
    const plain = instrument(ResilientClient, { breaker: false }, t.options);
    const pid = uid("otel-no-propagate");
    await plain.fetch(`${ORIGIN_A}/ok?id=${pid}`);
    assert.deepEqual((await serverLog(ORIGIN_A, pid)).map((r) => r.traceparent), [null]);
    await t.shutdown();
  } finally {
    otel.propagation.disable();
  }
});

test("each attempt's fetch runs in its attempt span's context; a call's own onEvent and fetch are still used", async () => {
  const t = telemetry();
  const clientEvents = [], callEvents = [], active = [];
  const client = instrument(ResilientClient,
    { retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 }, breaker: false, onEvent: (e) => clientEvents.push(e.type) },
    t.options);
  const id = uid("otel-call-policy");
  const res = await client.fetch(`${ORIGIN_A}/flaky?id=${id}&fail=1&code=503`, undefined, {
    onEvent: (e) => callEvents.push(e.type),
    fetch: (input, init) => {
      active.push(otel.trace.getActiveSpan()?.spanContext().spanId);
      return fetch(input, init);
    },
  });
  assert.equal(res.status, 200);
  const spans = t.spans();
  const attempts = attemptsOf(spans, callSpans(spans)[0]);
  assert.deepEqual(active, attempts.map(idOf), "the call's fetch ran inside each attempt's span");
  assert.deepEqual(callEvents, ["attemptStart", "attemptEnd", "retry", "attemptStart", "attemptEnd", "success"]);
  assert.deepEqual(clientEvents, [], "a call's onEvent replaces its client's, as without instrument()");
  const m = await t.metrics();
  assert.equal(total(points(m, "attempts", { [M + "origin"]: ORIGIN_A })), 2, "the metrics do not depend on whose listener");
  await t.shutdown();
});

test("the outbox: a kept call's span and counters, and the queue depth gauge as it fills and drains", fullOnly(), async () => {
  const t = telemetry();
  const name = uid("otel-outbox");
  const client = instrument(ResilientClient, { outbox: { name }, retry: { maxAttempts: 1 }, breaker: false }, t.options);
  const id = uid("otel-ledger");
  await fetch(`${ORIGIN_A}/ledger?id=${id}&down=1`, { method: "PUT" });
  const kept = await errorOf(client.fetch(`${ORIGIN_A}/ledger?id=${id}`, { method: "POST", body: "order-1" }));
  assert.ok(kept instanceof QueuedError, String(kept));
  const [call] = callSpans(t.spans());
  assert.equal(call.attributes["error.type"], "QueuedError");
  assert.deepEqual(eventsOf(call, "queued").map((e) => e.attributes[M + "reason"]), ["status"]);
  assert.equal(call.attributes[M + "idempotency_key"], kept.idempotencyKey);
  const waiting = { [M + "outbox.name"]: name, [M + "outbox.state"]: "waiting" };
  let m = await t.metrics();
  assert.equal(total(points(m, "outbox.queued", { [M + "origin"]: ORIGIN_A, [M + "reason"]: "status" })), 1);
  assert.equal(total(points(m, "outbox.entries", waiting)), 1);
  assert.equal(total(points(m, "outbox.entries", { ...waiting, [M + "outbox.state"]: "dead" })), 0);
  await fetch(`${ORIGIN_A}/ledger?id=${id}&down=0`, { method: "PUT" });
  const flushed = await client.outbox.flush();
  assert.equal(flushed.delivered, 1);
  m = await t.metrics();
  assert.equal(total(points(m, "outbox.delivered", { [M + "origin"]: ORIGIN_A })), 1, "the replay's events reach the client's listener");
  assert.equal(total(points(m, "outbox.entries", waiting)), 0);
  await t.shutdown();
});

test("without providers: the global ones, registered after instrument(); install() instruments the global fetch", async () => {
  const t = telemetry();
  const client = instrument(install, { retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 }, breaker: false });
  try {
    otel.trace.setGlobalTracerProvider(t.tracerProvider);
    otel.metrics.setGlobalMeterProvider(t.meterProvider);
    const id = uid("otel-global");
    const res = await fetch(`${ORIGIN_A}/flaky?id=${id}&fail=1&code=503`);
    assert.equal(res.status, 200);
    const spans = t.spans();
    const [call] = callSpans(spans);
    assert.equal(attemptsOf(spans, call).length, 2);
    const m = await t.metrics();
    assert.equal(total(points(m, "attempts", { [M + "origin"]: ORIGIN_A })), 2);
    assert.equal(total(points(m, "budget.tokens", { [M + "origin"]: ORIGIN_A })), client.stats()[ORIGIN_A].budgetTokens);
    // What wraps the global later sees the app's calls, not install()'s attempts (as uninstrumented).
    const wrapper = globalThis.fetch;
    const seen = [];
    globalThis.fetch = (i, n) => { seen.push(String(i)); return wrapper(i, n); };
    const url = `${ORIGIN_A}/flaky?id=${uid("otel-global-wrapped")}&fail=1&code=503`;
    assert.equal((await globalThis.fetch(url)).status, 200);
    assert.deepEqual(seen, [url], "each attempt went through what install() wrapped");
    globalThis.fetch = wrapper;
  } finally {
    uninstall();
    otel.trace.disable();
    otel.metrics.disable();
    await t.shutdown();
  }
});

test("CommonJS: require('resilient-fetch/otel') instruments a client of require('resilient-fetch')", async () => {
  const require = createRequire(path.join(SCRATCH, "package.json"));
  const cjs = require("resilient-fetch/otel");
  assert.equal(typeof cjs.instrument, "function");
  assert.notEqual(cjs.instrument, instrument, "the CommonJS copy");
  const t = telemetry();
  const client = cjs.instrument(require("resilient-fetch").ResilientClient, { breaker: false }, { ...t.options, name: "cjs" });
  assert.equal((await client.fetch(`${ORIGIN_A}/ok`)).status, 200);
  const [call] = callSpans(t.spans());
  assert.equal(call.instrumentationScope.name, require("resilient-fetch/package.json").name);
  assert.equal(call.instrumentationScope.version, require("resilient-fetch/package.json").version);
  const m = await t.metrics();
  assert.equal(total(points(m, "attempts", { [M + "origin"]: ORIGIN_A, [M + "client"]: "cjs" })), 1);
  await t.shutdown();
});

test("a freed client: collections go on without it, and stop reading it", async () => {
  const t = telemetry();
  const client = instrument(ResilientClient, { breaker: false }, t.options);
  await client.fetch(`${ORIGIN_A}/ok`);
  let reads = 0;
  const stats = client.stats;
  client.stats = function () { reads++; return stats.call(this); };
  assert.equal(points(await t.metrics(), "budget.tokens").length, 1);
  assert.equal(reads, 1, "each collection reads the client's stats()");
  client.free();
  await t.metrics();
  await t.metrics();
  assert.equal(reads, 2, "read once more (it throws: freed), then no more");
  await t.shutdown();
});

/** `n` HTTP servers on 127.0.0.1 (ports of their own) answering 200 "ok"; close() stops them. */
async function servers(n) {
  const list = await Promise.all(Array.from({ length: n }, () => new Promise((resolve) => {
    const server = http.createServer((req, res) => res.end("ok"));
    server.listen(0, "127.0.0.1", () => resolve(server));
  })));
  return {
    origins: list.map((s) => `http://127.0.0.1:${s.address().port}`),
    close: () => Promise.all(list.map((s) => new Promise((resolve) => s.close(resolve)))),
  };
}

// Promise (docs/otel.md, Metrics): every attribute set is bounded; a client's metrics name at
// most maxOrigins origins, and every origin past them is _OTHER.
test("metric origins are bounded by the client's maxOrigins: the origins past it share _OTHER, on every metric", async () => {
  const t = telemetry();
  const hosts = await servers(10);
  try {
    const client = instrument(ResilientClient, { maxOrigins: 3, retry: false }, t.options);
    for (const origin of hosts.origins) assert.equal((await client.fetch(`${origin}/x`)).status, 200);
    const m = await t.metrics();
    const named = hosts.origins.slice(0, 3);
    for (const name of ["call.duration", "call.retries", "attempts", "attempt.duration", "breaker.state", "budget.tokens"]) {
      const values = new Set(points(m, name).map((p) => p.attributes[M + "origin"]));
      assert.ok(values.size <= 4, `${name}: at most maxOrigins + 1 origin values, got ${[...values]}`);
      for (const v of values) assert.ok(v === "_OTHER" || named.includes(v), `${name}: ${v} is named or _OTHER`);
    }
    // The first three keep their names; the seven after them are counted under _OTHER.
    const calls = (origin) => total(points(m, "call.duration", { [M + "origin"]: origin }));
    assert.deepEqual(named.map(calls), [1, 1, 1]);
    assert.equal(calls("_OTHER"), 7);
    assert.equal(total(points(m, "attempts", { [M + "origin"]: "_OTHER", [M + "outcome"]: "response" })), 7);
    // The gauges: the registry keeps the last three origins, all past the bound: _OTHER holds
    // how many are in each state, and their tokens added up.
    const state = Object.fromEntries(points(m, "breaker.state", { [M + "origin"]: "_OTHER" })
      .map((p) => [p.attributes[M + "breaker.state"], p.value]));
    assert.deepEqual(state, { closed: 3, open: 0, "half-open": 0 });
    const stats = client.stats();
    assert.equal(Object.keys(stats).length, 3, "the registry keeps maxOrigins");
    assert.equal(total(points(m, "budget.tokens", { [M + "origin"]: "_OTHER" })),
      Object.values(stats).reduce((n, s) => n + s.budgetTokens, 0));
    // A client without maxOrigins names up to the core's default: ten are all named.
    const wide = instrument(ResilientClient, { retry: false }, { ...t.options, name: "wide" });
    for (const origin of hosts.origins) await wide.fetch(`${origin}/x`);
    const values = new Set(points(await t.metrics(), "attempts", { [M + "client"]: "wide" }).map((p) => p.attributes[M + "origin"]));
    assert.deepEqual([...values].sort(), [...hosts.origins].sort());
  } finally {
    await hosts.close();
    await t.shutdown();
  }
});

// Promise (docs/otel.md): with breaker.key, resilient_fetch.origin names the key the client names
// the call's breaker by, on the call span and on every metric.
test("breaker.key: the call span and the metrics name the call's key, as its events do", async () => {
  const t = telemetry();
  const key = (url) => new URL(url).origin + "/" + new URL(url).pathname.split("/")[1];
  const client = instrument(ResilientClient, { retry: false, breaker: { key } }, t.options);
  assert.equal((await client.fetch(`${ORIGIN_A}/ok`)).status, 200);
  assert.equal((await client.fetch(`${ORIGIN_A}/status?code=404`, undefined, { breaker: { key: () => "by-call" } })).status, 404);
  const calls = callSpans(t.spans());
  assert.deepEqual(calls.map((c) => c.attributes[M + "origin"]).sort(), [`${ORIGIN_A}/ok`, "by-call"].sort());
  const m = await t.metrics();
  for (const name of ["call.duration", "attempts", "attempt.duration"]) {
    assert.deepEqual(new Set(points(m, name).map((p) => p.attributes[M + "origin"])), new Set([`${ORIGIN_A}/ok`, "by-call"]), name);
  }
  assert.deepEqual(Object.keys(client.stats()).sort(), ["by-call", `${ORIGIN_A}/ok`]);
  await t.shutdown();
});

const SECRETS = ["someone", "hunter2pw", "sekr3t-token", "cookie-s3cret", "proxy-pa55"];
/** Every secret of SECRETS found in `text`. */
const leaks = (text) => SECRETS.filter((secret) => text.includes(secret));
/** What a span exports as text: its name, attributes, events with theirs, and its status. */
const spanText = (s) => JSON.stringify({ name: s.name, attributes: s.attributes, events: s.events, status: s.status });

// Promise (docs/otel.md, Traces): no credential (URL userinfo, Authorization, Cookie,
// Proxy-Authorization) in any span attribute, event, status message or metric attribute; nor in
// the package's own events and errors.
test("no credential reaches a span, a metric, an event or the package's own errors: userinfo and credential headers redacted", async () => {
  const t = telemetry();
  const events = [];
  const client = instrument(ResilientClient,
    { timeoutMs: 100, retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 }, breaker: { failureThreshold: 2, cooldownMs: 60_000 },
      onEvent: (e) => events.push(e) }, t.options);
  const port = new URL(ORIGIN_A).port;
  // The platform refuses a URL with credentials, quoting it.
  const withUserinfo = await errorOf(client.fetch(`http://someone:hunter2pw@127.0.0.1:${port}/ok`));
  assert.ok(withUserinfo instanceof TypeError, String(withUserinfo));
  // ... and a header value it cannot send, quoting the value.
  const badHeader = await errorOf(client.fetch(`${ORIGIN_A}/ok`, { headers: { Authorization: "Bearer sekr3t-token\u0000" } }));
  assert.ok(badHeader instanceof TypeError, String(badHeader));
  assert.deepEqual(leaks(badHeader.message), ["sekr3t-token"], "the platform's message quotes the value (what the span must not)");
  // The package's own errors of calls carrying every credential: a timeout, then the open breaker.
  const headers = { Authorization: "Bearer sekr3t-token", Cookie: "a=1; session=cookie-s3cret", "Proxy-Authorization": "Basic proxy-pa55" };
  const own = [];
  own.push(await errorOf(client.fetch(`${ORIGIN_A}/hang?id=${uid("otel-secret")}`, { headers })));
  own.push(await errorOf(client.fetch(new Request(`${ORIGIN_A}/hang?id=${uid("otel-secret")}`, { headers }))));
  assert.ok(own[0] instanceof TimeoutError, String(own[0]));
  own.push(await errorOf(client.fetch(`${ORIGIN_A}/ok`, { headers })));
  assert.ok(own[2] instanceof CircuitOpenError, String(own[2]));
  for (const e of own) assert.deepEqual(leaks(`${e.message} ${e.stack} ${JSON.stringify(e)}`), [], `${e.name}: ${e.message}`);
  assert.ok(events.length > 0);
  assert.deepEqual(leaks(JSON.stringify(events)), [], "the package's events carry no credential");
  const spans = t.spans();
  assert.equal(callSpans(spans).length, 5);
  for (const s of spans) assert.deepEqual(leaks(spanText(s)), [], spanText(s));
  const exceptions = callSpans(spans).flatMap((s) => s.events.filter((e) => e.name === "exception"));
  assert.equal(exceptions.length, 5, "every failed call keeps its error, redacted");
  const userinfo = exceptions.find((e) => /credentials/.test(e.attributes["exception.message"]));
  assert.match(userinfo.attributes["exception.message"], /REDACTED:REDACTED@127\.0\.0\.1/);
  assert.equal(userinfo.attributes["exception.type"], "TypeError");
  const m = await t.metrics();
  for (const [name, metric] of m) {
    for (const p of metric.dataPoints) assert.deepEqual(leaks(JSON.stringify(p.attributes)), [], name);
  }
  await t.shutdown();
});

test("bad arguments: a TypeError that names what is wrong", () => {
  assert.throws(() => instrument({}), /make must be ResilientClient, install, or a function/);
  assert.throws(() => instrument(ResilientClient, 5), /policy must be an object/);
  assert.throws(() => instrument(ResilientClient, { onEvent: 1 }), /policy\.onEvent must be a function/);
  assert.throws(() => instrument(ResilientClient, {}, { tracerProvider: {} }), /options\.tracerProvider must be a TracerProvider/);
  assert.throws(() => instrument(ResilientClient, {}, { meterProvider: 1 }), /options\.meterProvider must be a MeterProvider/);
  assert.throws(() => instrument(ResilientClient, {}, { propagate: "yes" }), /options\.propagate must be a boolean or a function/);
  assert.throws(() => instrument(ResilientClient, {}, { name: "" }), /options\.name must be a string of 1 to 64/);
  assert.throws(() => instrument(() => ({}), {}), /make did not return a ResilientClient/);
  // The client's own checks are untouched.
  assert.throws(() => instrument(ResilientClient, { retry: { maxAttempts: 0 } }), RangeError);
});
