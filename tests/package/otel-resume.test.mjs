// builds: full (a capability of resilient-fetch/full: tests/package/run.mjs)
// resilient-fetch/otel sees a resumed download's attempts (policy `resume`, docs/streams.md):
// each resume is a CLIENT span of its own under the call's span, with its resend count, though
// the call's span ended when the response came. The SDK is tools/'s, as in otel.test.mjs.
import test from "node:test";
import assert from "node:assert/strict";
import { ORIGIN_A, linkTools, uid } from "./helpers.mjs";

linkTools(["@opentelemetry/api", "@opentelemetry/core", "@opentelemetry/sdk-trace-base", "@opentelemetry/sdk-metrics",
  "@opentelemetry/context-async-hooks"]);
const { ResilientClient } = await import("resilient-fetch");
const { instrument } = await import("resilient-fetch/otel");
const { SpanKind } = await import("@opentelemetry/api");
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = await import("@opentelemetry/sdk-trace-base");

const parentOf = (span) => span.parentSpanContext?.spanId;
const idOf = (span) => span.spanContext().spanId;

test("otel: each resume of a body is a CLIENT span under the call's, counted as a resend", async () => {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const client = instrument(ResilientClient, { resume: true, retry: { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 2 } },
    { tracerProvider });
  const id = uid("otel-resume");
  const res = await client.fetch(`${ORIGIN_A}/resource?id=${id}&bytes=200000&cuts=50000,120000`);
  assert.equal((await res.arrayBuffer()).byteLength, 200000);
  const spans = exporter.getFinishedSpans();
  const call = spans.find((s) => s.name === "resilient_fetch GET");
  const attempts = spans.filter((s) => parentOf(s) === idOf(call));
  assert.deepEqual(attempts.map((s) => [s.kind, s.attributes["http.request.resend_count"], s.attributes["http.response.status_code"]]),
    [[SpanKind.CLIENT, undefined, 200], [SpanKind.CLIENT, 1, 206], [SpanKind.CLIENT, 2, 206]]);
  assert.ok(attempts.every((s) => s.spanContext().traceId === call.spanContext().traceId));
  client.free();
  await tracerProvider.shutdown();
});
