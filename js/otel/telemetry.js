// resilient-fetch/otel: what one instrument() call holds (the client it watches, the origins its
// metrics name), the metrics of each event, and the instruments per meter.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins js/otel/ into pkg-template/otel.js).
import { metrics, trace, ValueType } from "@opentelemetry/api";
import { Call } from "./call.js";
import { functionField } from "./options.js";
import { targetOf, safely } from "./target.js";
import { SCOPE, VERSION, P, CLIENT, ORIGIN, OUTCOME, REASON, STATE, PREVIOUS, STATUS, OUTBOX_NAME, OUTBOX_STATE, BREAKER_STATES, DURATIONS, WAITS, RETRY_COUNTS, MAX_ORIGINS, OTHER } from "./names.js";

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

export { Telemetry };
