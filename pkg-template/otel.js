// resilient-fetch/otel: OpenTelemetry traces and metrics for a ResilientClient, made from the
// client's own events (onEvent) and stats(). Opt-in: no other entry point imports this file,
// and @opentelemetry/api (an optional peer dependency) is the only module it imports.
//
// How it is built, and why:
// - instrument() makes the client itself, so that it owns the client's onEvent (composed with
//   the caller's, which is still called) and can read the client's stats() for the gauges.
// - Each call through the client's fetch (also install()'s global wrapper, which calls it) is
//   given a call policy of its own: an onEvent and a fetch bound to that call. A call's events
//   thus belong to it alone, however many calls run at once, with no call id in the events.
// - The caller's active context is read when the call is made (synchronously, in fetch()),
//   never later: the wasm runs every call's steps from one task queue, so the context active
//   when an attempt starts is whichever call scheduled that queue (Node), or none (browsers).
// - One span for the call (INTERNAL, child of the caller's active span), one CLIENT span per
//   attempt under it (OpenTelemetry's HTTP client conventions: a span per request sent,
//   http.request.resend_count from the second). The call span holds what happens between or
//   instead of attempts: backoff waits, breaker refusals, hedges, rate-limit waits; a call
//   refused before sending still has a span; and the attempts of one call stay in one trace
//   when the caller has none. Each attempt's fetch (the one the client would use: its fetch
//   option, what its install() wrapped, or the platform's) runs in its span's context, so an
//   HTTP instrumentation underneath nests its spans there, and `propagate` can send it on.
// The entry is the join of js/otel/ (this file first): scripts/join-js.mjs writes one import
// line of @opentelemetry/api and one `export { ... };` line last, which the build turns into a
// require and module.exports for the CommonJS copy (otel.cjs).
// Joined by scripts/join-js.mjs from js/otel/instrument.js, js/otel/options.js, js/otel/names.js, js/otel/call.js, js/otel/telemetry.js, js/otel/target.js: edit those, then run it.
import { context, propagation, trace, SpanKind, SpanStatusCode, metrics, ValueType } from "@opentelemetry/api";

/**
 * Makes a client with `make(policy)` (or `new make(policy)` for ResilientClient) and
 * instruments it: traces of its calls and metrics of its origins, to `options.tracerProvider`
 * and `options.meterProvider` (default: the global ones of @opentelemetry/api, looked up
 * when used, so they may be registered later). Returns the client.
 */
function instrument(make, policy, options = {}) {
  if (typeof make !== "function") {
    throw new TypeError("instrument(): make must be ResilientClient, install, or a function that makes a client from a policy");
  }
  if (policy !== undefined && policy !== null && (typeof policy !== "object" || Array.isArray(policy))) {
    throw new TypeError("instrument(): policy must be an object");
  }
  const own = policy ?? {};
  const onEvent = functionField(own, "onEvent");
  const send = functionField(own, "fetch");
  const telemetry = new Telemetry(readOptions(options), own);
  const listener = (event) => {
    try {
      telemetry.record(event, telemetry.instruments());
    } catch { /* telemetry must not disturb the caller's listener */ }
    return onEvent?.(event);
  };
  const clientPolicy = { ...own, onEvent: listener };
  const before = globalThis.fetch;
  const client = typeof make.prototype?.stats === "function" ? new make(clientPolicy) : make(clientPolicy);
  if (client === null || typeof client !== "object" || typeof client.fetch !== "function" ||
    typeof client.stats !== "function") {
    throw new TypeError("instrument(): make did not return a ResilientClient (an object with fetch and stats)");
  }
  // install()'s client sends through what it wrapped (never through what wraps the global
  // later); a client of its own looks the platform's fetch up at each attempt.
  const installed = globalThis.fetch !== before ? WRAPPED.get(globalThis.fetch) : undefined;
  telemetry.sendsWith = send ?? installed;
  const original = client.fetch;
  Object.defineProperty(client, "fetch", {
    configurable: true,
    writable: true,
    value: function fetch(input, init, callPolicy) {
      const call = telemetry.begin(input, init, callPolicy, telemetry.sendsWith, onEvent);
      if (call === null) return original.call(client, input, init, callPolicy);
      let result;
      try {
        result = original.call(client, input, init, call.policy);
      } catch (error) {
        call.end(undefined, error);
        throw error;
      }
      Promise.resolve(result).then((response) => call.end(response), (error) => call.end(undefined, error));
      return result;
    },
  });
  telemetry.watch(client);
  return client;
}


// resilient-fetch/otel: instrument()'s options and the policy fields it reads, checked.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins js/otel/ into pkg-template/otel.js).

/** policy[name]: a function, or undefined (also for null); a TypeError naming the field otherwise. */
function functionField(policy, name) {
  const value = policy[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "function") throw new TypeError(`policy.${name} must be a function`);
  return value;
}

/** The options, checked: a TypeError names the field and what it takes. */
function readOptions(options) {
  if (options === null || typeof options !== "object") throw new TypeError("instrument(): options must be an object");
  const { tracerProvider, meterProvider, propagate = false, keepQuery = false, name } = options;
  if (tracerProvider !== undefined && typeof tracerProvider?.getTracer !== "function") {
    throw new TypeError("instrument(): options.tracerProvider must be a TracerProvider (with getTracer), or undefined for the global one");
  }
  if (meterProvider !== undefined && typeof meterProvider?.getMeter !== "function") {
    throw new TypeError("instrument(): options.meterProvider must be a MeterProvider (with getMeter), or undefined for the global one");
  }
  if (typeof propagate !== "boolean" && typeof propagate !== "function") {
    throw new TypeError("instrument(): options.propagate must be a boolean or a function (url) => boolean");
  }
  if (typeof keepQuery !== "boolean") throw new TypeError("instrument(): options.keepQuery must be a boolean");
  if (name !== undefined && (typeof name !== "string" || name.length < 1 || name.length > 64)) {
    throw new TypeError("instrument(): options.name must be a string of 1 to 64 characters");
  }
  return { tracerProvider, meterProvider, propagate, keepQuery, name };
}


// resilient-fetch/otel: the names its spans and metrics use, and the lists it reads calls by.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins js/otel/ into pkg-template/otel.js).

const SCOPE = "resilient-fetch";
const VERSION = "0.0.0"; // the package's version, written in by scripts/build.sh
const P = "resilient_fetch.";

// Attribute names: OpenTelemetry's HTTP client conventions, and the package's own (prefixed).
const METHOD = "http.request.method";
const METHOD_ORIGINAL = "http.request.method_original";
const URL_FULL = "url.full";
const ADDRESS = "server.address";
const PORT = "server.port";
const STATUS = "http.response.status_code";
const ERROR_TYPE = "error.type";
const RESEND = "http.request.resend_count";
const ORIGIN = P + "origin";
const CLIENT = P + "client";
const OUTCOME = P + "outcome";
const REASON = P + "reason";
const STATE = P + "breaker.state";
const PREVIOUS = P + "breaker.previous_state";
const ATTEMPTS = P + "attempts";
const HEDGE = P + "hedge";
const KEY = P + "idempotency_key";
const GIVE_UP = P + "give_up.reason";
// The failure a kept answer stood in for (policy stale): one of the `stale` event's reasons.
const STALE = P + "stale.reason";
const OUTBOX_NAME = P + "outbox.name";
const OUTBOX_STATE = P + "outbox.state";

// ---- names: generated by scripts/codes.mjs from src/vocab.rs; edit that, then run it.
const BREAKER_STATES = ["closed", "open", "half-open"];
// ---- end of names
// ---- methods: copied by scripts/codes.mjs from js/request.js; edit that, then run it.
/** The methods fetch sends upper-cased, whatever their case (it sends any other as written). */
const STANDARD_METHODS = ["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"];
// ---- end of methods
// The methods OpenTelemetry knows (its `_OTHER` is any other): fetch's, and those it sends as written.
const KNOWN = [...STANDARD_METHODS, "CONNECT", "PATCH", "TRACE"];
// Query parameters whose values are redacted when the query is kept (OpenTelemetry's list).
const SECRET_PARAMS = ["AWSAccessKeyId", "Signature", "sig", "X-Goog-Signature"];
// Seconds: OpenTelemetry's boundaries for HTTP durations, and 30 s (the default deadline).
const DURATIONS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30];
const WAITS = [0, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const RETRY_COUNTS = [0, 1, 2, 3, 4, 5, 10, 19];
// The client's registry bound when its policy sets none: the core's default `maxOrigins`
// (src/policy/types.rs `defaults::MAX_ORIGINS`; tests/core_ts_defaults.rs keeps them equal).
const MAX_ORIGINS = 1000;
// What the metrics name an origin past the bound: OpenTelemetry's word for an attribute value
// left out to keep a set bounded.
const OTHER = "_OTHER";
// Request headers whose values are credentials: none may reach a span or a metric.
const SECRET_HEADERS = ["authorization", "cookie", "proxy-authorization"];


// resilient-fetch/otel: one call's spans (the call's, and one per attempt), and the fetch each
// attempt is sent with, in its span's context.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins js/otel/ into pkg-template/otel.js).

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


// resilient-fetch/otel: what one instrument() call holds (the client it watches, the origins its
// metrics name), the metrics of each event, and the instruments per meter.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins js/otel/ into pkg-template/otel.js).

/** What one instrument() call holds: where telemetry goes, and the client it watches. */
class Telemetry {
  constructor(options, policy) {
    // The global tracer is a proxy that follows a provider registered later.
    this.tracer = (options.tracerProvider ?? trace).getTracer(SCOPE, VERSION);
    this.meterProvider = options.meterProvider;
    this.propagate = options.propagate;
    this.keepQuery = options.keepQuery;
    this.extra = options.name === undefined ? {} : { [CLIENT]: options.name };
    // The origins the metrics name, at most the client's registry bound; every origin after
    // them is OTHER (the client validates maxOrigins itself, before any call).
    this.named = new Set();
    this.maxNamed = Number.isInteger(policy.maxOrigins) && policy.maxOrigins > 0 ? policy.maxOrigins : MAX_ORIGINS;
    this.breaker = policy.breaker !== false;
    this.key = typeof policy.breaker?.key === "function" ? policy.breaker.key : undefined;
    this.budget = policy.retryBudget !== false;
    this.outbox = policy.outbox !== undefined && policy.outbox !== false
      ? String(policy.outbox?.name ?? "default") : undefined;
    this.sendsWith = undefined; // the client's fetch option, or what its install() wrapped
    this.provider = undefined;
    this.m = undefined;
    this.ref = undefined;
    this.watching = undefined;
    this.observe = (result) => this.observeClient(result);
  }

  /**
   * The value of the origin attribute for `origin`: itself while the client's metrics name fewer
   * origins than its registry keeps (first come, first named, for the client's life: a series
   * never changes its name), else OTHER. A client calling a million hosts exports at most
   * maxOrigins + 1 origin values.
   */
  originOf(origin) {
    if (this.named.has(origin)) return origin;
    if (this.named.size >= this.maxNamed) return OTHER;
    this.named.add(origin);
    return origin;
  }

  /** The instruments of the meter in force (the global provider may change: they follow it). */
  instruments() {
    const provider = this.meterProvider ?? metrics.getMeterProvider();
    if (provider !== this.provider) {
      if (this.watching !== undefined) this.watching.meter.removeBatchObservableCallback(this.observe, this.watching.list);
      this.watching = undefined;
      this.provider = provider;
      const meter = provider.getMeter(SCOPE, VERSION);
      this.m = instrumentsOf(meter);
      if (this.ref !== undefined) {
        const m = this.m;
        const list = [m.breakerState, m.budgetTokens, m.hedgeWins, m.outboxEntries];
        meter.addBatchObservableCallback(this.observe, list);
        this.watching = { meter, list };
      }
    }
    return this.m;
  }

  /** Observes `client`'s stats() (and outbox) at each collection, while it lives. */
  watch(client) {
    // Held weakly: a client nobody uses any more is collected, and its callback removed.
    this.ref = typeof WeakRef === "function" ? new WeakRef(client) : { deref: () => client };
    this.provider = undefined;
    this.instruments();
  }

  unwatch() {
    if (this.watching !== undefined) this.watching.meter.removeBatchObservableCallback(this.observe, this.watching.list);
    this.watching = undefined;
    this.ref = undefined;
  }

  async observeClient(result) {
    const client = this.ref?.deref();
    let stats;
    try {
      stats = client?.stats();
    } catch { /* freed */ }
    if (stats === undefined) {
      this.unwatch();
      return;
    }
    const m = this.m;
    // By origin attribute: an origin the metrics name has its own values; those past the bound
    // are added up under OTHER (how many are in each breaker state, their tokens, their wins).
    const by = new Map();
    for (const [origin, s] of Object.entries(stats)) {
      const name = this.originOf(origin);
      let sum = by.get(name);
      if (sum === undefined) by.set(name, sum = { states: [0, 0, 0], tokens: 0, wins: 0, hedged: false });
      const state = BREAKER_STATES.indexOf(s.breakerState);
      if (state >= 0) sum.states[state] += 1;
      sum.tokens += s.budgetTokens;
      sum.wins += s.hedgeWins;
      sum.hedged ||= s.hedges > 0;
    }
    for (const [origin, sum] of by) {
      const o = { [ORIGIN]: origin, ...this.extra };
      if (this.breaker) {
        BREAKER_STATES.forEach((state, i) => result.observe(m.breakerState, sum.states[i], { ...o, [STATE]: state }));
      }
      if (this.budget) result.observe(m.budgetTokens, sum.tokens, o);
      if (sum.hedged) result.observe(m.hedgeWins, sum.wins, o);
    }
    const box = this.outbox === undefined ? undefined : client.outbox;
    if (box !== undefined) {
      try {
        const [waiting, dead] = await Promise.all([box.list(), box.deadLetters()]);
        const o = { [OUTBOX_NAME]: this.outbox, ...this.extra };
        result.observe(m.outboxEntries, waiting.length, { ...o, [OUTBOX_STATE]: "waiting" });
        result.observe(m.outboxEntries, dead.length, { ...o, [OUTBOX_STATE]: "dead" });
      } catch { /* a store that failed to list says nothing this time */ }
    }
  }

  /** A call of the client, or null for what is not instrumented (a data: URL, arguments fetch refuses). */
  begin(input, init, callPolicy, clientFetch, clientOnEvent) {
    let target, onEvent, send;
    try {
      target = targetOf(input, init, this.keepQuery);
      if (target === null) return null;
      let key = this.key;
      if (callPolicy !== undefined && callPolicy !== null) {
        if (typeof callPolicy !== "object" || Array.isArray(callPolicy)) return null;
        onEvent = functionField(callPolicy, "onEvent");
        send = functionField(callPolicy, "fetch");
        if (typeof callPolicy.breaker?.key === "function") key = callPolicy.breaker.key;
      }
      // With breaker.key, the client names the call's breaker (and its events) by the key:
      // the attributes name it too. A key the client will refuse leaves the call to it.
      if (key !== undefined) {
        const named = key(target.href, target.sent);
        if (typeof named !== "string" || named.length < 1 || [...named].length > 256) return null;
        target.origin = named;
      }
    } catch {
      // Left to the client, which rejects the call as fetch would (a getter that throws, a bad field).
      return null;
    }
    const propagates = this.propagate === true ||
      (typeof this.propagate === "function" && safely(() => this.propagate(target.href)) === true);
    return new Call(this, target, callPolicy, send ?? clientFetch, onEvent ?? clientOnEvent, propagates);
  }

  /** The metrics of one event. */
  record(e, m) {
    const o = { [ORIGIN]: this.originOf(e.origin), ...this.extra };
    switch (e.type) {
      case "attemptEnd": {
        const a = { ...o, [OUTCOME]: e.outcome };
        if (e.status !== undefined) a[STATUS] = e.status;
        m.attempts.add(1, a);
        m.attemptDuration.record(e.durationMs / 1000, a);
        break;
      }
      case "retry": {
        const a = { ...o, [REASON]: e.reason };
        m.retries.add(1, a);
        m.retryDelay.record(e.delayMs / 1000, a);
        break;
      }
      case "giveUp": m.giveUps.add(1, { ...o, [REASON]: e.reason }); break;
      case "breakerTransition": {
        const a = { ...o, [STATE]: e.to, [PREVIOUS]: e.from };
        if (e.reason !== undefined) a[REASON] = e.reason;
        m.transitions.add(1, a);
        break;
      }
      case "shortCircuit": m.shortCircuits.add(1, o); break;
      case "bulkheadRejected": m.bulkheadRejections.add(1, o); break;
      case "rateLimitWait": m.rateLimitWait.record(e.delayMs / 1000, { ...o, [REASON]: e.reason }); break;
      case "rateLimitRejected": m.rateLimitRejections.add(1, { ...o, [REASON]: e.reason }); break;
      case "throttled": m.throttled.add(1, o); break;
      case "hedge": m.hedges.add(1, o); break;
      case "bodyTimeout": m.bodyTimeouts.add(1, { ...o, [REASON]: e.reason }); break;
      case "queued": m.queued.add(1, { ...o, [REASON]: e.reason }); break;
      case "delivered": m.delivered.add(1, o); break;
      case "deadLettered": m.deadLettered.add(1, { ...o, [REASON]: e.reason }); break;
      default: break;
    }
  }
}

// Instruments per meter: made once, shared by every client instrumented on that meter.
const INSTRUMENTS = new WeakMap();

function instrumentsOf(meter) {
  let m = INSTRUMENTS.get(meter);
  if (m !== undefined) return m;
  const counter = (name, unit, description) =>
    meter.createCounter(P + name, { unit, description, valueType: ValueType.INT });
  const histogram = (name, unit, description, boundaries) =>
    meter.createHistogram(P + name, { unit, description, advice: { explicitBucketBoundaries: boundaries } });
  m = {
    callDuration: histogram("call.duration", "s", "Duration of calls, from the call to its response's headers or its failure (waits included).", DURATIONS),
    callRetries: histogram("call.retries", "{retry}", "Attempts after the first (retries and hedges) per call that sent one.", RETRY_COUNTS),
    attempts: counter("attempts", "{attempt}", "Attempts that ended, by outcome."),
    attemptDuration: histogram("attempt.duration", "s", "Duration of attempts, until the response's headers or the failure.", DURATIONS),
    retries: counter("retries", "{retry}", "Retries scheduled, by what made the last attempt worth retrying."),
    retryDelay: histogram("retry.delay", "s", "Backoff wait before each retry.", WAITS),
    giveUps: counter("give_ups", "{call}", "Calls that ended with a failure they did not retry, by why."),
    transitions: counter("breaker.transitions", "{transition}", "Breaker state changes."),
    shortCircuits: counter("short_circuits", "{attempt}", "Attempts the open breaker refused (nothing sent)."),
    bulkheadRejections: counter("bulkhead.rejections", "{call}", "Calls the full bulkhead refused (nothing sent)."),
    rateLimitWait: histogram("rate_limit.wait", "s", "Waits for an origin's quota or Retry-After before sending.", WAITS),
    rateLimitRejections: counter("rate_limit.rejections", "{attempt}", "Attempts not sent: the origin's wait was too long for the call."),
    throttled: counter("throttle.rejections", "{attempt}", "Attempts adaptive throttling refused locally."),
    hedges: counter("hedges", "{hedge}", "Hedges sent beside an attempt still in flight."),
    bodyTimeouts: counter("body_timeouts", "{response}", "Response bodies cut off (bodyTimeoutMs or the deadline)."),
    queued: counter("outbox.queued", "{request}", "Requests kept in the outbox."),
    delivered: counter("outbox.delivered", "{request}", "Kept requests delivered."),
    deadLettered: counter("outbox.dead_lettered", "{request}", "Kept requests that will not be sent again."),
    breakerState: meter.createObservableGauge(P + "breaker.state", { unit: "1", valueType: ValueType.INT,
      description: "1 for the breaker state an origin is in, 0 for the others." }),
    budgetTokens: meter.createObservableGauge(P + "budget.tokens", { unit: "{token}", valueType: ValueType.INT,
      description: "Tokens in an origin's retry budget." }),
    hedgeWins: meter.createObservableCounter(P + "hedge.wins", { unit: "{call}", valueType: ValueType.INT,
      description: "Calls a hedge answered first (from stats(); reset() and eviction restart it)." }),
    outboxEntries: meter.createObservableGauge(P + "outbox.entries", { unit: "{request}", valueType: ValueType.INT,
      description: "Requests in the outbox: waiting to be delivered, or dead letters." }),
  };
  INSTRUMENTS.set(meter, m);
  return m;
}


// resilient-fetch/otel: what the spans say of a call's request (its method and URL, as fetch
// reads them), and what they must never say (credentials, redacted).
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins js/otel/ into pkg-template/otel.js).

/**
 * What the spans say of a call's request: the method and URL as fetch reads them, or null
 * for a URL that is no server's (data:, blob:) or arguments fetch will refuse (the call then
 * rejects as it would uninstrumented). The URL keeps no query (unless `keepQuery`, with the
 * signatures OpenTelemetry lists redacted), no fragment and no credentials.
 */
function targetOf(input, init, keepQuery) {
  const isRequest = typeof input === "object" && input !== null && Object.prototype.toString.call(input) === "[object Request]";
  const given = init?.method ?? (isRequest ? input.method : undefined) ?? "GET";
  if (typeof given !== "string") return null;
  const upper = given.toUpperCase();
  const method = STANDARD_METHODS.includes(upper) ? upper : KNOWN.includes(given) ? given : "_OTHER";
  const base = typeof location === "object" && location !== null ? String(location.href) : undefined;
  let url;
  try {
    url = new URL(isRequest ? input.url : String(input), base);
  } catch {
    return null;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  const credentials = url.username !== "" || url.password !== "" ? "REDACTED:REDACTED@" : "";
  let query = "";
  if (keepQuery && url.search !== "") {
    const params = new URLSearchParams(url.search);
    for (const name of SECRET_PARAMS) if (params.has(name)) params.set(name, "REDACTED");
    query = "?" + params.toString();
  }
  const full = `${url.protocol}//${credentials}${url.host}${url.pathname}${query}`;
  const sent = STANDARD_METHODS.includes(upper) ? upper : given;
  const attributes = {
    [METHOD]: method,
    [URL_FULL]: full,
    [ADDRESS]: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    [PORT]: url.port !== "" ? Number(url.port) : url.protocol === "https:" ? 443 : 80,
  };
  // fetch sends the normalized methods upper-cased, any other as given.
  if (method === "_OTHER") attributes[METHOD_ORIGINAL] = given;
  return {
    origin: url.origin, href: url.href, path: url.pathname + query, sent, attributes, spanMethod: method === "_OTHER" ? "HTTP" : method,
    secrets: secretsOf(url, input, init, isRequest),
  };
}

/**
 * The credentials of a call: its URL's userinfo, and the values of its Authorization, Cookie and
 * Proxy-Authorization headers (from init, else the Request), as fetch would send them.
 */
function secretsOf(url, input, init, isRequest) {
  const out = [];
  for (const part of [url.username, url.password]) {
    if (part !== "") out.push(part, safely(() => decodeURIComponent(part)));
  }
  const headers = init?.headers !== undefined ? init.headers : isRequest ? input.headers : undefined;
  const entries = safely(() => typeof headers?.[Symbol.iterator] === "function" ? [...headers]
    : typeof headers === "object" && headers !== null ? Object.entries(headers) : []) ?? [];
  for (const entry of entries) {
    const [name, value] = safely(() => [String(entry[0]).toLowerCase(), String(entry[1])]) ?? [];
    if (!SECRET_HEADERS.includes(name)) continue;
    // The value, and its words and cookie values: a platform's message may quote the value
    // with a control character replaced, or one cookie of several.
    out.push(value);
    for (const word of value.split(/[\s\x00-\x1f;,]+/)) out.push(word, word.slice(word.indexOf("=") + 1));
  }
  // A value this short stands in too many words to be cut out of a message; in a URL's
  // userinfo it is cut out anyway. The longest first, so none is left half cut.
  return [...new Set(out)].filter((v) => typeof v === "string" && v.length >= 3).sort((a, b) => b.length - a.length);
}

/**
 * `text` without credentials: every URL's userinfo as REDACTED:REDACTED (up to the last `@`
 * before its path, as the URL parser reads it), and each of `secrets` as REDACTED.
 */
function redact(text, secrets = []) {
  let out = text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/?#\s]*@/gi, "$1REDACTED:REDACTED@");
  for (const secret of secrets) out = out.split(secret).join("REDACTED");
  return out;
}

/** error.type of a call that failed: the error's name (TimeoutError, CircuitOpenError, AbortError...), else _OTHER. */
function errorType(error) {
  const name = typeof error === "object" && error !== null ? safely(() => error.name) : undefined;
  return typeof name === "string" && /^[A-Za-z][A-Za-z0-9_]{0,63}$/.test(name) ? name : "_OTHER";
}

function safely(f) {
  try {
    return f();
  } catch {
    return undefined;
  }
}

/**
 * The attributes of an attempt sent to `origin`, an alternate origin (`failover`): the call's, with
 * url.full, server.address and server.port naming that origin (the same path and query).
 */
function atOrigin(target, origin) {
  const url = safely(() => new URL(origin));
  if (url === undefined) return { ...target.attributes };
  return {
    ...target.attributes,
    [URL_FULL]: `${url.protocol}//${url.host}${target.path}`,
    [ADDRESS]: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    [PORT]: url.port !== "" ? Number(url.port) : url.protocol === "https:" ? 443 : 80,
  };
}


export { instrument };
