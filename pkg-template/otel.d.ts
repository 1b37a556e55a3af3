// resilient-fetch/otel (ES modules): OpenTelemetry traces and metrics for a ResilientClient.
import type { MeterProvider, TracerProvider } from "@opentelemetry/api";
import type { Policy, ResilientClient } from "./index.js";

/** Where instrument() sends telemetry, and what its spans carry. */
export interface OtelOptions {
  /** The tracer provider. @default the global one (trace.getTracerProvider()), followed when registered later */
  tracerProvider?: TracerProvider;
  /** The meter provider. @default the global one (metrics.getMeterProvider()), looked up at each call */
  meterProvider?: MeterProvider;
  /**
   * Sends each attempt's trace context (traceparent, through the global propagator) with its
   * request: `true` for every URL, a function of the call's URL for some. In a browser a
   * cross-origin request with it needs a CORS preflight the server must allow. Leave it off
   * when an HTTP instrumentation (undici, fetch) already injects its own. @default false
   */
  propagate?: boolean | ((url: string) => boolean);
  /** Keeps the query in `url.full` (values of AWSAccessKeyId, Signature, sig and X-Goog-Signature redacted). @default false */
  keepQuery?: boolean;
  /** A name for the client (1 to 64 characters), the `resilient_fetch.client` attribute of its metrics. @default none */
  name?: string;
}

/**
 * Makes a client (`new ResilientClient(policy)`, or `install(policy)`, or any function of a
 * policy that returns a client) and instruments it: a span per call and per attempt, and
 * metrics of its origins. The policy's own `onEvent` is still called. Returns the client.
 */
export function instrument<C extends ResilientClient>(
  make: (new (policy: Policy) => C) | ((policy: Policy) => C),
  policy?: Policy | null,
  options?: OtelOptions,
): C;
