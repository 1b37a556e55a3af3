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

const loading = init();
let loaded = false;
loading.then(() => { loaded = true; }, () => {});

const Inner = wasm.ResilientClient;
// What install() passes the constructor to make the face of its client (no policy of its own).
const FACE = Symbol("install");
const unbound = () =>
  new TypeError("resilientFetch: a ResilientClient method was called without its client: pass api.fetch.bind(api), not api.fetch");

/** Resolves once the wasm is instantiated (every export works before: calls wait for it). */
export default function ready() {
  return loading.then(() => {});
}

/** `fetch`, made resilient; before the wasm is ready the call starts once it is. */
export function resilientFetch(input, init, policy) {
  return loaded ? wasm.resilientFetch(input, init, policy) : loading.then(() => wasm.resilientFetch(input, init, policy));
}

/**
 * A client with its own policy, breakers, budgets and stats. Made before the wasm is ready, its
 * policy is checked once it is, and an invalid one rejects its calls; after `await ready()` the
 * constructor throws it at once, as in the other entries.
 */
export class ResilientClient {
  #client = null;
  #making = null;

  constructor(policy) {
    if (policy === FACE) return;
    if (loaded) {
      this.#client = new Inner(policy);
    } else {
      this.#pending(loading.then(() => new Inner(policy)));
    }
  }

  /** The wasm's client `made` (a promise of it) once it settles. */
  #pending(made) {
    this.#making = made.then((client) => (this.#client = client));
    this.#making.catch(() => {});
  }

  /** This object's client now (null until the wasm is ready); a TypeError for another `this`. */
  static #of(self) {
    if (!(self instanceof ResilientClient)) throw unbound();
    return self.#client;
  }

  /** Runs `use(client)` now, or once the client is made (a rejection if it cannot be). */
  static #later(self, use) {
    const client = ResilientClient.#of(self);
    return client ? use(client) : self.#making.then(use);
  }

  fetch(input, init, policy) {
    try {
      return ResilientClient.#later(this, (c) => Inner.prototype.fetch.call(c, input, init, policy));
    } catch (e) {
      return Promise.reject(e);
    }
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
    const client = ResilientClient.#of(this);
    if (client) return client.reset(origin);
    this.#making.then((c) => c.reset(origin), () => {});
  }

  get outbox() {
    return ResilientClient.#of(this)?.outbox;
  }

  free() {
    const client = ResilientClient.#of(this);
    if (client) return client.free();
    this.#making.then((c) => c.free(), () => {});
  }

  /**
   * The client of an install (`made`: the wasm's client, or a promise of it). The global wrapper
   * calls the wasm client's own `fetch`, which is made to call this object's: what wraps this
   * object's `fetch` (resilient-fetch/otel) wraps the global's too, as in the other entries.
   */
  static installed(made) {
    const face = new ResilientClient(FACE);
    const link = (client) => {
      Object.defineProperty(client, "fetch", {
        configurable: true,
        writable: true,
        value: (input, init, policy) => face.fetch(input, init, policy),
      });
      return client;
    };
    if (made instanceof Inner) face.#client = link(made);
    else face.#pending(made.then(link));
    return face;
  }
}

if (Symbol.dispose) ResilientClient.prototype[Symbol.dispose] = ResilientClient.prototype.free;

// The install() still waiting for the wasm, if any: uninstall() before it is ready cancels it.
let installing = null;

/**
 * Puts a resilient wrapper on `globalThis.fetch` and returns its client. Called before the wasm
 * is ready, it takes effect once it is (calls until then go to the platform's `fetch`).
 */
export function install(policy) {
  if (loaded) return ResilientClient.installed(wasm.install(policy));
  const pending = loading.then(() => {
    if (installing !== pending) throw new TypeError("resilientFetch: uninstall() was called before this install() took effect");
    installing = null;
    return wasm.install(policy);
  });
  installing = pending;
  return ResilientClient.installed(pending);
}

/** Puts back the `fetch` that `install()` wrapped, or cancels an install still waiting. */
export function uninstall() {
  if (installing !== null) {
    installing = null;
    return true;
  }
  return loaded ? wasm.uninstall() : false;
}

/** Bytes of linear memory the module holds now (0 before the wasm is ready). */
export function memoryBytes() {
  return loaded ? wasm.memoryBytes() : 0;
}

export { TimeoutError, CircuitOpenError, BulkheadFullError, RateLimitError, ThrottledError, QueuedError } from "./errors.js";
