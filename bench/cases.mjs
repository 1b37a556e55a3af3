// The per-call cases, shared by overhead.mjs (Node) and the page bundle of browser.mjs
// (headless Chromium), so that both runtimes measure the very same variants the same way
// (bench/README.md, "Per-call overhead"). Plain ES module, no Node or DOM specifics.

// Never contacted: every library ends in the stub.
export const URL_ = "http://127.0.0.1:9/bench";

/**
 * A stub `fetch` that resolves at once with a fresh response per call, as a real fetch hands
 * back a new one: by default a body-less `new Response(null, { status: 200 })` (the cheap
 * stub every main row uses, floor, peers and ours alike); with `state.body = true` a
 * `new Response("ok")` (the body-carrying rows: a body costs the stub far more, and the
 * package guards it); with `state.status` set to another status, a body-less response of it.
 */
export function makeStub() {
  const state = { status: 200, body: false };
  const fetch = () =>
    Promise.resolve(
      state.status !== 200
        ? new Response(null, { status: state.status })
        : state.body
          ? new Response("ok")
          : new Response(null, { status: 200 }),
    );
  return { fetch, state };
}

/**
 * The variants, in table order. `libs`: { stub (makeStub()), rf: { resilientFetch,
 * ResilientClient, CircuitOpenError } (the default entry, "resilient-fetch"), rfFull (the same
 * from "resilient-fetch/full", optional), ky, ofetch, cockatiel, CircuitBreaker (opossum,
 * optional), minimumFetch (bench/stack-minimum, optional) }. Each variant: name, set ("main":
 * the body-less stub, or "body": the stub answers `new Response("ok")`), id (the same in both
 * sets for the same case: bare, floor, minimum, ours, oursFull, rejection, ...), call(), optionally
 * ours (the package's), reject (the error class every call must reject with), setup()
 * (untimed, before every slice). Each set has its own "bare stub fetch" and "floor" rows, the
 * references of its ratios and added costs (addedCost, ratio).
 */
export function makeVariants({ stub, rf, rfFull, ky, ofetch, cockatiel, CircuitBreaker, minimumFetch }) {
  const fetch = stub.fetch;
  const { resilientFetch, ResilientClient, CircuitOpenError } = rf;

  // Peers configured as close to our defaults as they go: 10 s per attempt, 3 attempts, a
  // breaker that opens after 5 consecutive failures for 30 s.
  const kyClient = ky.create({ fetch }); // ky's defaults: retry 2, timeout 10 s
  const ofetchClient = ofetch.create({ timeout: 10_000 }, { fetch }); // retry 1 (its default)
  const transient = (r) => [408, 429, 500, 502, 503, 504].includes(r?.status);
  const handled = cockatiel.handleAll.orWhenResult(transient);
  const cockatielPolicy = cockatiel.wrap(
    cockatiel.retry(handled, { maxAttempts: 2, backoff: new cockatiel.ExponentialBackoff() }),
    cockatiel.circuitBreaker(handled, {
      halfOpenAfter: 30_000,
      breaker: new cockatiel.ConsecutiveBreaker(5),
    }),
    cockatiel.timeout(10_000, cockatiel.TimeoutStrategy.Aggressive),
  );

  const MANY_URLS = Array.from({ length: 1000 }, (_, i) => `${URL_}?n=${i}`);
  let nextUrl = 0;
  // An outbox (IndexedDB in Chromium, memory in Node): what it costs a write that is answered
  // (a capability of the full build: measured there, when it is installed).
  const outboxClient = rfFull ? new rfFull.ResilientClient({ outbox: { name: "bench" } }) : null;
  const POST = { method: "POST", body: "{}" };

  // A client of `entry` and the setup that opens its breaker afresh, untimed, before each
  // slice of its calls (so its 30 s cooldown cannot run out while they are timed).
  function openBreakerOf(entry) {
    const client = new entry.ResilientClient();
    const setup = async () => {
      client.reset();
      stub.state.status = 503;
      try {
        for (let i = 0; i < 20 && client.breakerState(URL_) !== "open"; i++) {
          await client.fetch(URL_, undefined, { retry: false });
        }
      } finally {
        stub.state.status = 200;
      }
      if (client.breakerState(URL_) !== "open") throw new Error("the breaker did not open");
    };
    return { client, setup };
  }
  const open = openBreakerOf(rf);
  const openFull = rfFull && openBreakerOf(rfFull);

  const CALLER = { signal: new AbortController().signal };

  async function floor() {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 10_000);
    try {
      return await fetch(URL_, { signal: controller.signal });
    } finally {
      clearTimeout(timer);
    }
  }

  const MINIMUM = "the stack's minimum: promise for a Rust future + AbortController + gloo timer + JsFuture";
  const main = [
    { id: "bare", name: "bare stub fetch", call: () => fetch(URL_) },
    { id: "floor", name: "floor: AbortController + setTimeout/clearTimeout", call: floor },
    ...(minimumFetch ? [{ id: "minimum", name: MINIMUM, call: () => minimumFetch(URL_) }] : []),
    { id: "ours", name: "ours: resilientFetch, defaults, GET", ours: true, call: () => resilientFetch(URL_) },
    ...(rfFull
      ? [{ id: "oursFull", name: "ours (full): resilientFetch, defaults, GET", ours: true, full: true, call: () => rfFull.resilientFetch(URL_) }]
      : []),
    {
      // More URL strings than the fast path remembers origins for (256): every call parses.
      name: "ours: resilientFetch, defaults, GET, 1 000 URLs in turn",
      ours: true,
      call: () => resilientFetch(MANY_URLS[(nextUrl = (nextUrl + 1) % MANY_URLS.length)]),
    },
    {
      // The caller's own signal (one for many calls, as a page's or a query's): watched for
      // the call, then linked to the body.
      name: "ours: resilientFetch, defaults, GET with the caller's AbortSignal",
      ours: true,
      call: () => resilientFetch(URL_, CALLER),
    },
    {
      name: "ours: resilientFetch, defaults, POST (idempotency key)",
      ours: true,
      call: () => resilientFetch(URL_, POST),
    },
    ...(outboxClient
      ? [{
        name: "ours (full): POST through a client with an outbox (answered: nothing kept)",
        ours: true,
        full: true,
        call: () => outboxClient.fetch(URL_, POST),
      }]
      : []),
    {
      id: "rejection",
      name: "ours: open-breaker rejection",
      ours: true,
      reject: CircuitOpenError,
      setup: open.setup,
      call: () => open.client.fetch(URL_),
    },
    ...(openFull
      ? [
          {
            id: "rejectionFull",
            name: "ours (full): open-breaker rejection",
            ours: true,
            full: true,
            reject: rfFull.CircuitOpenError,
            setup: openFull.setup,
            call: () => openFull.client.fetch(URL_),
          },
        ]
      : []),
    { id: "ky", name: "ky (defaults: retry 2, timeout 10 s)", call: () => kyClient(URL_) },
    { name: "ofetch.raw (retry 1, timeout 10 s)", call: () => ofetchClient.raw(URL_) },
    {
      id: "cockatiel",
      name: "cockatiel: retry 2 + breaker + timeout, composed",
      call: () => cockatielPolicy.execute(({ signal }) => fetch(URL_, { signal })),
    },
  ];
  if (CircuitBreaker) {
    let opossum;
    const fresh = () => {
      opossum?.shutdown();
      opossum = new CircuitBreaker((url) => fetch(url), { timeout: 10_000, resetTimeout: 30_000 });
    };
    fresh();
    // reset(): opossum keeps per-call data for its 10 s rolling window; a fresh breaker before
    // the heap passes, so that its release does not land in another variant's measurement.
    main.push({ name: "opossum: breaker + timeout", call: () => opossum.fire(URL_), reset: fresh });
  }
  for (const v of main) v.set = "main";

  // The body-carrying rows: the stub answers a fresh `new Response("ok")`, which the package
  // wraps so that its deadline reaches the body's reads.
  const BODY = ", stub answers new Response(\"ok\")";
  const body = [
    { id: "bare", name: `bare stub fetch${BODY}`, call: () => fetch(URL_) },
    { id: "floor", name: `floor${BODY}`, call: floor },
    ...(minimumFetch ? [{ id: "minimum", name: `the stack's minimum${BODY}`, call: () => minimumFetch(URL_) }] : []),
    { id: "ours", name: `ours: resilientFetch, defaults, GET${BODY}`, ours: true, call: () => resilientFetch(URL_) },
    ...(rfFull
      ? [{ id: "oursFull", name: `ours (full): resilientFetch, defaults, GET${BODY}`, ours: true, full: true, call: () => rfFull.resilientFetch(URL_) }]
      : []),
  ];
  for (const v of body) v.set = "body";
  return [...main, ...body];
}

/** The variant with this id in this set ("main" or "body"); undefined if it was not run. */
export const byId = (variants, id, set = "main") => variants.find((v) => v.id === id && v.set === set);

/** The references of v's ratios and added cost: its own set's bare stub and floor rows. */
export const referencesOf = (variants, v) => ({ bare: byId(variants, "bare", v.set), floor: byId(variants, "floor", v.set) });

/** n awaited calls of v; throws if any did not end as expected (resolve with 200, or reject with v.reject). */
export async function loop(v, n, stub) {
  stub.state.body = v.set === "body";
  let wrong = 0;
  for (let i = 0; i < n; i++) {
    try {
      const r = await v.call();
      if (v.reject || r.status !== 200) wrong++;
    } catch (e) {
      if (!v.reject || !(e instanceof v.reject)) wrong++;
    }
  }
  stub.state.body = false;
  if (wrong) throw new Error(`${v.name}: ${wrong} of ${n} calls did not end as expected`);
}

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** a ÷ b within each round, then the median over rounds (a, b: { rounds: [µs per call] }). */
export const ratio = (a, b) => median(a.rounds.map((x, i) => x / b.rounds[i]));

/** a − b within each round, then the median over rounds: a's µs/call added to b's. */
export const added = (a, b) => median(a.rounds.map((x, i) => x - b.rounds[i]));

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * The timed rounds: a warm-up of `warmup` calls per variant, then `rounds` rounds of `calls`
 * calls per variant, made in `chunks` slices taken in turn (the order rotating), so that a
 * change in the machine's load during a round touches every variant alike. Sets v.rounds
 * (µs per call, one per round) and v.median. `now`: a clock in ms (performance.now).
 */
export async function runRounds(variants, stub, { calls, rounds, warmup, chunks = 10, now, progress }) {
  for (const v of variants) {
    v.rounds = [];
    await v.setup?.();
    await loop(v, warmup, stub);
  }
  for (let r = 0; r < rounds; r++) {
    for (const v of variants) v.spent = 0;
    for (let c = 0; c < chunks; c++) {
      for (let k = 0; k < variants.length; k++) {
        const v = variants[(k + c + r) % variants.length];
        await v.setup?.();
        await tick(); // untimed: lets the event loop (and a page) breathe between slices
        const t0 = now();
        await loop(v, calls / chunks, stub);
        v.spent += now() - t0;
      }
    }
    for (const v of variants) v.rounds.push((v.spent * 1000) / calls);
    progress?.(r + 1);
  }
  for (const v of variants) v.median = median(v.rounds);
}

export const us = (x) => (x < 10 ? x.toFixed(2) : x.toFixed(1));
/** Signed µs: "+3.21" (a row's added cost over its bare stub). */
export const plus = (x) => `${x < 0 ? "−" : "+"}${us(Math.abs(x))}`;
export const times = (x) => `${x < 10 ? x.toFixed(2) : x.toFixed(1)}×`;
