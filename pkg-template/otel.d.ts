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
export function instrument<C extends InstrumentedClient, P = Policy>(
  make: (new (policy: P) => C) | ((policy: P) => C),
  policy?: PolicyOf<P> | null,
  options?: OtelOptions,
): C;

/** What instrument() instruments: a client of either build (ResilientClient, or install()'s). */
type InstrumentedClient = Pick<ResilientClient, "breakerState" | "reset"> & {
  fetch(input: string | URL | Request, init?: RequestInit | null, policy?: any): Promise<Response>;
  stats(): ReturnType<ResilientClient["stats"]>;
};

/**
 * The policy `make` takes, as the type of `policy` (not inferred from it, so that its fields are
 * checked against the build's: resilient-fetch/full's client takes every capability's options).
 */
type PolicyOf<P> = [P][P extends unknown ? 0 : never];
