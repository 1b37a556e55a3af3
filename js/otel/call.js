// resilient-fetch/otel: one call's spans (the call's, and one per attempt), and the fetch each
// attempt is sent with, in its span's context.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins js/otel/ into pkg-template/otel.js).
import { context, propagation, trace, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { atOrigin, redact, errorType, safely } from "./target.js";
import { P, METHOD, ORIGIN, REASON, STATE, PREVIOUS, STATUS, ERROR_TYPE, RESEND, ATTEMPTS, HEDGE, KEY, GIVE_UP, STALE } from "./names.js";

/** One call: its span, its attempts' spans, and the onEvent and fetch its call policy carries. */
class Call {
  constructor(telemetry, target, callPolicy, send, onEvent, propagates) {
    this.t = telemetry;
    this.target = target;
    this.m = telemetry.instruments();
    this.started = performance.now();
    // The caller's context, now: see the top of this file.
    const parent = context.active();
    this.span = telemetry.tracer.startSpan(`resilient_fetch ${target.spanMethod}`,
      { kind: SpanKind.INTERNAL, attributes: { ...target.attributes, [ORIGIN]: target.origin } }, parent);
    this.ctx = trace.setSpan(parent, this.span);
    this.attempts = new Map(); // attempt number -> { span, ctx }
    this.unsent = null; // the attempt that started and whose fetch is not called yet
    this.made = 0;
    this.done = false;
    this.policy = {
      ...callPolicy,
      onEvent: (event) => {
        try {
          telemetry.record(event, this.m);
          this.on(event);
        } catch { /* telemetry must not disturb the caller's listener */ }
        return onEvent?.(event);
      },
      // The attempt's request, sent in its span's context with what the client would send
      // it with: nothing else differs.
      fetch: (input, init) => {
        const attempt = this.unsent;
        this.unsent = null;
        const f = send ?? platformFetch();
        if (attempt === null) return f(input, init);
        if (propagates) init = carrying(attempt.ctx, input, init);
        return context.with(attempt.ctx, f, undefined, input, init);
      },
    };
  }

  /** The call's spans, from one of its events. */
  on(e) {
    const span = this.span;
    switch (e.type) {
      case "attemptStart": {
        // An attempt to an alternate origin (failover) names that origin.
        const attributes = e.origin === this.target.origin ? { ...this.target.attributes } : atOrigin(this.target, e.origin);
        if (e.attempt > 1) attributes[RESEND] = e.attempt - 1;
        const attempt = this.t.tracer.startSpan(this.target.spanMethod, { kind: SpanKind.CLIENT, attributes }, this.ctx);
        const started = { span: attempt, ctx: trace.setSpan(this.ctx, attempt) };
        this.attempts.set(e.attempt, started);
        this.unsent = started;
        this.made = Math.max(this.made, e.attempt);
        if (e.idempotencyKey !== undefined && e.attempt === 1) span.setAttribute(KEY, e.idempotencyKey);
        break;
      }
      case "attemptEnd": {
        const started = this.attempts.get(e.attempt);
        if (started === undefined) break;
        this.attempts.delete(e.attempt);
        if (this.unsent === started) this.unsent = null;
        const attempt = started.span;
        if (e.status !== undefined) attempt.setAttribute(STATUS, e.status);
        const failed = e.outcome !== "response" ? e.outcome : e.status >= 400 ? String(e.status) : undefined;
        if (failed !== undefined) {
          attempt.setAttribute(ERROR_TYPE, failed);
          attempt.setStatus({ code: SpanStatusCode.ERROR });
        }
        attempt.end();
        break;
      }
      case "hedge":
        this.attempts.get(e.attempt)?.span.setAttribute(HEDGE, true);
        span.addEvent(P + "hedge", { [P + "attempt"]: e.attempt, [P + "delay_ms"]: e.delayMs });
        break;
      case "retry":
        span.addEvent(P + "retry", {
          [P + "attempt"]: e.attempt, [P + "delay_ms"]: e.delayMs, [REASON]: e.reason, [P + "retry_after"]: e.retryAfter,
        });
        break;
      case "giveUp":
        span.setAttribute(GIVE_UP, e.reason);
        span.addEvent(P + "give_up", { [REASON]: e.reason, [ATTEMPTS]: e.attempts });
        break;
      case "stale":
        span.setAttribute(STALE, e.reason);
        span.addEvent(P + "stale", { [REASON]: e.reason, [P + "age_ms"]: e.ageMs });
        break;
      case "shortCircuit": span.addEvent(P + "short_circuit", { [P + "retry_after_ms"]: e.delayMs }); break;
      case "bulkheadRejected": span.addEvent(P + "bulkhead_rejected"); break;
      case "rateLimitWait": span.addEvent(P + "rate_limit_wait", { [P + "delay_ms"]: e.delayMs, [REASON]: e.reason }); break;
      case "rateLimitRejected":
        span.addEvent(P + "rate_limit_rejected", { [P + "retry_after_ms"]: e.delayMs, [REASON]: e.reason });
        break;
      case "throttled": span.addEvent(P + "throttled", { [P + "probability"]: e.probability }); break;
      case "breakerTransition": {
        const a = { [STATE]: e.to, [PREVIOUS]: e.from };
        if (e.reason !== undefined) a[REASON] = e.reason;
        span.addEvent(P + "breaker_transition", a);
        break;
      }
      case "queued": span.addEvent(P + "queued", { [REASON]: e.reason, [P + "outbox.id"]: e.id }); break;
      default: break;
    }
  }

  /** The call settled with `response`, or failed with `error`. */
  end(response, error) {
    if (this.done) return;
    this.done = true;
    for (const { span } of this.attempts.values()) span.end();
    this.attempts.clear();
    const span = this.span;
    const origin = this.t.originOf(this.target.origin);
    const attributes = { [ORIGIN]: origin, [METHOD]: this.target.attributes[METHOD], ...this.t.extra };
    span.setAttribute(ATTEMPTS, this.made);
    if (response !== undefined) {
      const status = response?.status;
      if (typeof status === "number") {
        span.setAttribute(STATUS, status);
        attributes[STATUS] = status;
        if (status >= 400) {
          span.setAttribute(ERROR_TYPE, String(status));
          attributes[ERROR_TYPE] = String(status);
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
      }
    } else {
      const type = errorType(error);
      span.setAttribute(ERROR_TYPE, type);
      attributes[ERROR_TYPE] = type;
      // The platform's errors may quote the URL (userinfo included) or a header's value: what
      // the span keeps of an error is redacted as url.full is.
      const secrets = this.target.secrets;
      const said = (value) => typeof value === "string" ? redact(value, secrets) : undefined;
      if (typeof error === "string") span.recordException(redact(error, secrets));
      else if (typeof error === "object" && error !== null) {
        span.recordException({ name: said(safely(() => error.name)), message: said(safely(() => error.message)),
          stack: said(safely(() => error.stack)), code: safely(() => error.code) });
      }
      span.setStatus({ code: SpanStatusCode.ERROR, message: redact(String(safely(() => error?.message ?? error)), secrets) });
    }
    span.end();
    this.m.callDuration.record((performance.now() - this.started) / 1000, attributes);
    if (this.made > 0) {
      this.m.callRetries.record(this.made - 1, { [ORIGIN]: origin, [METHOD]: attributes[METHOD], ...this.t.extra });
    }
  }
}

/**
 * What install() wrapped, by wrapper: `WRAPPED` of js/install.js, the realm-wide map every copy
 * of the package shares, looked up when asked (it is made when the package loads, which may be
 * after this module; undefined before).
 */
const WRAPPED = { get: (wrapper) => globalThis[Symbol.for("resilient-fetch wrappers")]?.get(wrapper) };

// ---- platform fetch: copied by scripts/codes.mjs from js/install.js; edit that, then run it.
/** The platform's fetch now: the global, or what an install() (of any copy) wrapped. */
function platformFetch() {
  const f = globalThis.fetch;
  return WRAPPED.get(f) ?? f;
}
// ---- end of platform fetch

/** `init` with the context's propagation headers (traceparent...) added to the request's own. */
function carrying(ctx, input, init) {
  const carrier = {};
  propagation.inject(ctx, carrier);
  const names = Object.keys(carrier);
  if (names.length === 0) return init;
  const own = init.headers !== undefined ? init.headers : typeof input === "object" && input !== null ? input.headers : undefined;
  const headers = new Headers(own);
  for (const name of names) headers.set(name, carrier[name]);
  return { ...init, headers };
}

export { Call, WRAPPED };
