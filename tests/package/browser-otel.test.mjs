// resilient-fetch/otel in Chromium: a page bundled by esbuild (as an app would bundle it) with
// the package, its otel entry and the OpenTelemetry web SDK: the web tracer provider with its
// StackContextManager (a span is active only while the code that made it active runs: there is
// no async context in a browser), the in-memory span exporter, and an in-memory metric exporter
// flushed on demand. The page calls the fault server cross-origin, as a page calls an API.
import test, { after, before } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { ORIGIN_A, SCRATCH, launchChromium, linkTools, pageResult, serveStatic, serverLog, uid } from "./helpers.mjs";

const PAGE = `
import { ResilientClient } from "resilient-fetch";
import { instrument } from "resilient-fetch/otel";
import { context, propagation } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { StackContextManager, WebTracerProvider } from "@opentelemetry/sdk-trace-web";
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";

const q = new URLSearchParams(location.search);
const a = q.get("a");
try {
  context.setGlobalContextManager(new StackContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const spans = new InMemorySpanExporter();
  const tracerProvider = new WebTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 2 ** 31 - 1 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const api = instrument(ResilientClient, {
    retry: { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 5 },
    breaker: { failureThreshold: 3, cooldownMs: 60000 },
  }, { tracerProvider, meterProvider, propagate: (url) => url.startsWith(a) });
  const tracer = tracerProvider.getTracer("page");
  // A click handler's span, active only while the handler runs: the call is made inside it.
  const retried = await tracer.startActiveSpan("click", (span) =>
    api.fetch(a + "/flaky?id=" + q.get("id") + "&fail=2&code=503").finally(() => span.end()));
  const status = retried.status;
  // Three failures in a row open this breaker (another path, the same origin): the next call is refused.
  await api.fetch(a + "/status?code=500&id=" + q.get("id2"));
  const refused = await api.fetch(a + "/ok").then(() => "sent", (e) => e.name);
  await reader.forceFlush();
  const exported = metricExporter.getMetrics().at(-1);
  const metrics = {};
  for (const m of exported.scopeMetrics.flatMap((s) => s.metrics)) {
    metrics[m.descriptor.name] = m.dataPoints.map((p) => ({ attributes: p.attributes, value: p.value }));
  }
  window.__result = {
    status, refused, metrics,
    spans: spans.getFinishedSpans().map((s) => ({
      name: s.name, kind: s.kind, id: s.spanContext().spanId, trace: s.spanContext().traceId,
      parent: s.parentSpanContext?.spanId, attributes: s.attributes, events: s.events.map((e) => e.name),
    })),
  };
} catch (e) {
  window.__error = String(e && e.stack || e);
}
`;

// Bounds and secrets (docs/otel.md): ten origins through a client of maxOrigins 3, and calls
// carrying credentials (URL userinfo, credential headers) that fail.
const BOUNDS_PAGE = `
import { ResilientClient } from "resilient-fetch";
import { instrument } from "resilient-fetch/otel";
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { WebTracerProvider } from "@opentelemetry/sdk-trace-web";
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";

const q = new URLSearchParams(location.search);
try {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new WebTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 2 ** 31 - 1 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const events = [];
  const api = instrument(ResilientClient, { maxOrigins: 3, retry: false, onEvent: (e) => events.push(e) },
    { tracerProvider, meterProvider });
  const statuses = [];
  for (const origin of q.get("origins").split(",")) statuses.push((await api.fetch(origin + "/x")).status);
  const errors = [];
  const fail = (p) => p.then(() => errors.push("resolved"), (e) => errors.push({ name: e.name, message: e.message, stack: e.stack }));
  const a = new URL(q.get("a"));
  await fail(api.fetch("http://someone:hunter2pw@" + a.host + "/ok"));
  await fail(api.fetch(a.origin + "/hang?id=" + q.get("id"),
    { headers: { Authorization: "Bearer sekr3t-token" } }, { timeoutMs: 100 }));
  await reader.forceFlush();
  const metrics = {};
  for (const m of metricExporter.getMetrics().at(-1).scopeMetrics.flatMap((s) => s.metrics)) {
    metrics[m.descriptor.name] = m.dataPoints.map((p) => ({ attributes: p.attributes, value: p.value }));
  }
  window.__result = {
    statuses, errors, metrics, events: JSON.stringify(events),
    spans: spans.getFinishedSpans().map((s) => JSON.stringify({ name: s.name, attributes: s.attributes, events: s.events, status: s.status })),
  };
} catch (e) {
  window.__error = String(e && e.stack || e);
}
`;

let browser;
before(async () => {
  linkTools(["@opentelemetry/api", "@opentelemetry/core", "@opentelemetry/sdk-trace-base", "@opentelemetry/sdk-trace-web",
    "@opentelemetry/sdk-metrics"]);
  browser = await launchChromium();
});
after(async () => { await browser?.close(); });

/** Bundles `page` with esbuild into a served folder with the wasm; returns the static site. */
async function bundled(name, page) {
  const app = path.join(SCRATCH, name);
  const dist = path.join(app, "dist");
  fs.mkdirSync(dist, { recursive: true });
  fs.writeFileSync(path.join(app, "main.mjs"), page);
  const esbuild = path.join(process.env.RF_TOOLS_DIR, "node_modules", ".bin", "esbuild");
  execFileSync(esbuild, ["main.mjs", "--bundle", "--format=esm", "--minify", "--outfile=dist/app.js", "--log-level=warning"],
    { cwd: app, stdio: "inherit" });
  fs.copyFileSync(path.join(SCRATCH, "node_modules", "resilient-fetch", "web", "resilient_fetch_bg.wasm"),
    path.join(dist, "resilient_fetch_bg.wasm"));
  fs.writeFileSync(path.join(dist, "index.html"), `<!doctype html><meta charset="utf-8"><script type="module" src="./app.js"></script>`);
  return serveStatic(dist);
}

test("Chromium: the call span under the caller's span (captured when the call is made), a span per attempt, traceparent per attempt, metrics", async () => {
  const site = await bundled("otel-app", PAGE);
  const id = uid("browser-otel"), id2 = uid("browser-otel-open");
  try {
    const { result } = await pageResult(browser, `${site.url}/index.html?a=${ORIGIN_A}&id=${id}&id2=${id2}`);
    assert.equal(result.status, 200);
    assert.equal(result.refused, "CircuitOpenError");
    const { spans, metrics } = result;
    const click = spans.find((s) => s.name === "click");
    const calls = spans.filter((s) => s.name === "resilient_fetch GET");
    assert.equal(calls.length, 3);
    const [call] = calls.filter((c) => c.parent === click.id);
    assert.ok(call, "the first call's span is a child of the span active when it was made");
    assert.equal(call.trace, click.trace);
    assert.equal(call.kind, 0, "INTERNAL");
    const attempts = spans.filter((s) => s.parent === call.id);
    assert.deepEqual(attempts.map((s) => [s.name, s.kind, s.attributes["http.request.resend_count"], s.attributes["http.response.status_code"]]),
      [["GET", 2, undefined, 503], ["GET", 2, 1, 503], ["GET", 2, 2, 200]], "CLIENT spans, one per attempt");
    assert.ok(attempts.every((s) => s.attributes["url.full"] === `${ORIGIN_A}/flaky` && s.attributes["server.address"] === "127.0.0.1"));
    assert.deepEqual(call.events, ["resilient_fetch.retry", "resilient_fetch.retry"]);
    // The calls made outside any span are roots, each in its own trace.
    assert.ok(calls.filter((c) => c !== call).every((c) => c.parent === undefined));
    const last = calls.find((c) => c.attributes["error.type"] === "CircuitOpenError");
    assert.deepEqual(last.events, ["resilient_fetch.short_circuit", "exception"]);
    assert.equal(spans.filter((s) => s.parent === last.id).length, 0, "a refused call sends nothing");
    // Cross-origin, through the preflight the fault server allows: each attempt's own span.
    const log = await serverLog(ORIGIN_A, id);
    assert.deepEqual(log.map((r) => r.traceparent), attempts.map((s) => `00-${s.trace}-${s.id}-01`));
    const points = (name, attrs) => (metrics["resilient_fetch." + name] ?? [])
      .filter((p) => Object.entries(attrs).every(([k, v]) => p.attributes[k] === v));
    const o = { "resilient_fetch.origin": ORIGIN_A };
    assert.equal(points("attempts", { ...o, "http.response.status_code": 503 })[0]?.value, 2);
    assert.equal(points("attempts", { ...o, "http.response.status_code": 500 })[0]?.value, 3);
    assert.equal(points("retries", { ...o, "resilient_fetch.reason": "status" })[0]?.value, 4);
    assert.equal(points("short_circuits", o)[0]?.value, 1);
    assert.equal(points("breaker.state", { ...o, "resilient_fetch.breaker.state": "open" })[0]?.value, 1);
    assert.equal(points("retry.delay", o)[0]?.value.count, 4);
    assert.equal(points("breaker.transitions", { ...o, "resilient_fetch.breaker.state": "open" })[0]?.value, 1);
  } finally {
    await site.close();
  }
});

/** The bounds page's result, run once for the two tests below (ten origins that allow any page). */
let boundsRun;
function boundsResult() {
  boundsRun ??= (async () => {
    const hosts = await Promise.all(Array.from({ length: 10 }, () => new Promise((resolve) => {
      const server = http.createServer((req, res) => res.writeHead(200, { "access-control-allow-origin": "*" }).end("ok"));
      server.listen(0, "127.0.0.1", () => resolve(server));
    })));
    const origins = hosts.map((h) => `http://127.0.0.1:${h.address().port}`);
    const site = await bundled("otel-bounds-app", BOUNDS_PAGE);
    try {
      const { result } = await pageResult(browser,
        `${site.url}/index.html?a=${ORIGIN_A}&id=${uid("browser-otel-secret")}&origins=${origins.join(",")}`);
      return { origins, result };
    } finally {
      await site.close();
      await Promise.all(hosts.map((h) => new Promise((resolve) => h.close(resolve))));
    }
  })();
  return boundsRun;
}

// Promise (docs/otel.md, Metrics): a client's metrics name at most maxOrigins origins; the rest are _OTHER.
test("Chromium: metric origins bounded by maxOrigins, the origins past it share _OTHER", async () => {
  const { origins, result } = await boundsResult();
  assert.deepEqual(result.statuses, Array(10).fill(200));
  const { metrics } = result;
  const named = origins.slice(0, 3);
  for (const name of ["call.duration", "attempts", "attempt.duration", "breaker.state", "budget.tokens"]) {
    const values = new Set((metrics["resilient_fetch." + name] ?? []).map((p) => p.attributes["resilient_fetch.origin"]));
    for (const v of values) assert.ok(v === "_OTHER" || named.includes(v), `${name}: ${v}`);
  }
  const calls = (origin) => (metrics["resilient_fetch.call.duration"] ?? [])
    .filter((p) => p.attributes["resilient_fetch.origin"] === origin).reduce((n, p) => n + p.value.count, 0);
  assert.deepEqual(named.map(calls), [1, 1, 1], "the first three keep their names");
  // Seven past the bound, and the two calls to ORIGIN_A (a fourth origin).
  assert.equal(calls("_OTHER"), 9);
});

// Promise (docs/otel.md, No credentials): none in any span attribute, event or status, nor in the
// metrics, the package's events or its own errors.
test("Chromium: no credential (URL userinfo, Authorization) in any span, metric, event or the package's own error", async () => {
  const { result } = await boundsResult();
  assert.equal(result.errors.length, 2, "each call carrying a credential failed");
  assert.equal(result.errors[0].name, "TypeError");
  const secrets = ["someone", "hunter2pw", "sekr3t-token"];
  const leaks = (text) => secrets.filter((secret) => text.includes(secret));
  for (const span of result.spans) assert.deepEqual(leaks(span), [], span);
  assert.ok(result.spans.some((span) => span.includes("REDACTED:REDACTED@127.0.0.1")), "the refused URL, redacted");
  assert.deepEqual(leaks(JSON.stringify(result.metrics)), []);
  assert.deepEqual(leaks(result.events), []);
  assert.deepEqual(leaks(JSON.stringify(result.errors[1])), [], "the second call's own error");
});
