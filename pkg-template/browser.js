// Browsers, bundlers and the default condition. The wasm file is found next to
// the glue (`new URL(..., import.meta.url)`), which Vite and webpack recognise
// and emit as an asset; with esbuild, copy web/resilient_fetch_bg.wasm next to
// the bundle (README, "Using it").
//
// No top-level await: importing this module holds back no other module of the page. The
// wasm's fetch and compile start at import (streaming where the platform has it) and every
// export is callable at once: a call made before the wasm is ready starts when it is, and
// until then `stats()` is empty and `breakerState()` "closed" (no call has ended). `ready()`
// (the default export) resolves once the wasm is ready, and rejects if it cannot load.
import init, * as wasm from "./web/resilient_fetch.js";
// js/install.js's own functions, from the very module the glue loads (scripts/build.sh names its
// folder): an install made before the wasm is ready is one as any other.
import { fetchToWrap, installFetch, readFirst, uninstallFetch } from "./web/snippets/[crate]/js/joined/arguments.js";

const loading = init();
let loaded = false;
// Once the wasm is ready, the installs made before are made first, in their order; then, when
// the page is idle, the warm-up.
loading.then(() => { loaded = true; installEarly(); (globalThis.requestIdleCallback ?? setTimeout)(warm); },
  (e) => { for (const { settle } of early.splice(0)) settle.reject(e); });

// V8 compiles a wasm function when it first runs: the first call would compile the ~190 a call
// runs (3-5 ms in Chromium, bench/README.md "Startup"). One call made while the page is idle,
// through a client of its own to a stub fetch (nothing is sent; no other client, breaker or
// stats is touched), compiles them before the app's first call needs them.
function warm() {
  const client = new Inner({ fetch: () => Promise.resolve(new Response(null)) });
  client.fetch("http://warm.invalid/").then(() => client.free(), () => client.free());
}

// A call with no policy of its own reads its arguments before it enters the wasm (js/request.js
// readFirst): the client's `fetch` and the module-wide one.
const moduleFetch = readFirst(wasm.ResilientClient, wasm.moduleClient);
const Inner = wasm.ResilientClient;
const innerFetch = Inner.prototype.fetch;
const unbound = () =>
  new TypeError("resilientFetch: a ResilientClient method was called without its client: pass api.fetch.bind(api), not api.fetch");
// What install() passes the constructor to make the face of its client (no policy of its own).
const FACE = Symbol();

/** Resolves once the wasm is instantiated (every export works before: calls wait for it). */
export default function ready() {
  return loading.then(() => {});
}

/** `fetch`, made resilient; before the wasm is ready the call starts once it is. */
export function resilientFetch(input, init, policy) {
  return loaded ? moduleFetch(input, init, policy) : loading.then(() => moduleFetch(input, init, policy));
}

//+full /** Server-sent events through the module-wide client; a TypeError before the wasm is ready (`await ready()` first). */
//+full export function resilientEvents(input, init, policy) { if (!loaded) throw notReady(); return wasm.resilientEvents(input, init, policy); }
//+full const notReady = () => new TypeError("resilient-fetch: event streams start once the wasm is ready: await ready() (the default export) first");
/** `client.outbox` before the wasm is ready: each method waits for the client, then is its outbox's. */
function outboxLater(making) {
  const box = {};
  for (const name of ["list", "deadLetters", "flush", "retry", "discard"]) {
    box[name] = (...args) => making.then((client) => client.outbox[name](...args));
  }
  return box;
}

// The face of an install's client (made by install(), below): set in the class's static block.
let faceOf;

/**
 * A client with its own policy, breakers, budgets and stats. Made before the wasm is ready, its
 * policy is checked once it is, and an invalid one rejects its calls; after `await ready()` the
 * constructor throws it at once, as in the other entries.
 */
export class ResilientClient {
  // The wasm's client (until it is made, none), and the promise of it.
  #client;
  #making;
  // Before the wasm is ready, for a policy that asks for an outbox: its methods wait for it.
  #outbox;

  constructor(policy) {
    if (policy === FACE) return;
    if (loaded) {
      this.#client = new Inner(policy);
    } else {
      this.#pending(loading.then(() => new Inner(policy)));
      const asked = policy?.outbox;
      if (asked !== undefined && asked !== null && asked !== false) this.#outbox = outboxLater(this.#making);
    }
  }

  /** The wasm's client `made` (a promise of it) once it settles. */
  #pending(made) {
    this.#making = made.then((client) => (this.#client = client));
    this.#making.catch(() => {});
  }

  /** This object's client now (none until the wasm is ready); a TypeError for another `this`. */
  static #of(self) {
    if (typeof self !== "object" || self === null || !(#client in self)) throw unbound();
    return self.#client;
  }

  fetch(input, init, policy) {
    let client;
    try {
      client = ResilientClient.#of(this);
    } catch (e) {
      return Promise.reject(e);
    }
    // Once the wasm is ready, the call goes straight to the wasm's client (no closure per call).
    if (client) return innerFetch.call(client, input, init, policy);
    return this.#making.then((c) => innerFetch.call(c, input, init, policy));
  }

  breakerState(origin) {
    const client = ResilientClient.#of(this);
    return client ? client.breakerState(origin) : "closed";
  }

  stats() {
    const client = ResilientClient.#of(this);
    return client ? client.stats() : {};
  }

  reset(origin) {
    // Before the wasm is ready nothing has happened: there is nothing to forget.
    return ResilientClient.#of(this)?.reset(origin);
  }

//+full   events(input, init, policy) { const client = ResilientClient.#of(this); if (!client) throw notReady(); return client.events(input, init, policy); }

  get outbox() {
    const client = ResilientClient.#of(this);
    return client ? client.outbox : this.#outbox;
  }

  free() {
    const client = ResilientClient.#of(this);
    if (client) return client.free();
    this.#making.then((c) => c.free(), () => {});
  }

  static {
    // `made`: the wasm's client of an install (linked to its face), or a promise of it (linked
    // by installEarly() as it is made).
    faceOf = (made) => {
      const face = new ResilientClient(FACE);
      if (made instanceof Inner) face.#client = link(made, face);
      else face.#pending(made);
      return face;
    };
  }
}

if (Symbol.dispose) ResilientClient.prototype[Symbol.dispose] = ResilientClient.prototype.free;

/**
 * The global wrapper of an install calls the wasm client's own `fetch`, which is made to call its
 * face's: what wraps the face's `fetch` (resilient-fetch/otel) wraps the global's too, as in the
 * other entries.
 */
function link(client, face) {
  Object.defineProperty(client, "fetch", {
    configurable: true,
    writable: true,
    value: (input, init, policy) => face.fetch(input, init, policy),
  });
  return client;
}

// The installs made before the wasm was ready, in order: { policy, original, face, settle }. The last one owns the global once it is; uninstall() before then cancels them all.
const early = [];

/**
 * Puts a resilient wrapper on `globalThis.fetch` and returns its client. Before the wasm is ready
 * the wrapper is put there at once and its calls wait for the wasm; then the installed one
 * takes its place.
 */
export function install(policy) {
  if (loaded) return faceOf(wasm.install(policy));
  const entry = { policy, original: fetchToWrap() };
  entry.face = faceOf(new Promise((resolve, reject) => { entry.settle = { resolve, reject }; }));
  installFetch(entry.face, entry.original);
  early.push(entry);
  return entry.face;
}

/** The wasm is ready: each early install is made in its order, so the last owns the global. */
function installEarly() {
  for (const entry of early.splice(0)) {
    try {
      // Its wrapper is still the global's (or what a later early install wraps): installed as
      // it would have been then.
      entry.settle.resolve(link(wasm.install(entry.policy), entry.face));
    } catch (e) {
      entry.settle.reject(e);
    }
  }
}

/** Puts back the `fetch` that `install()` wrapped (an install still waiting for the wasm too). */
export function uninstall() {
  if (early.length > 0) {
    // As after the wasm is ready: false, and nothing changed, when the global is no longer the
    // wrapper.
    if (!uninstallFetch()) return false;
    // Their clients still work, sending through what each wrapped.
    for (const entry of early.splice(0)) {
      loading.then(() => new Inner({ fetch: entry.original, ...(entry.policy ?? {}) })).then(entry.settle.resolve, entry.settle.reject);
    }
    return true;
  }
  return loaded ? wasm.uninstall() : false;
}

/** Bytes of linear memory the module holds now (0 before the wasm is ready). */
export function memoryBytes() {
  return loaded ? wasm.memoryBytes() : 0;
}

export { TimeoutError, CircuitOpenError, BulkheadFullError, RateLimitError, ThrottledError, QueuedError } from "./errors.js";
