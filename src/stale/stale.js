// Stale answers (policy `stale`; the rules are in src/stale/*.rs): the stores, reading the
// request's and the answer's headers, keeping a copy of an answer (a tee: the caller's reading
// is never delayed), and the answer served instead of a failure.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files).

// What a kept copy carries of its own, in one header: [sent, received, shared, vary, status,
// statusText, ...the answer's own header names and values]. The copy's other headers only let
// the Cache API keep it for its window (it honours Cache-Control); the answer's own come back
// when it is served.
const KEPT = "resilient-fetch-kept";
// The header a served answer carries: why it was served ("timeout", "breakerOpen", ...).
const MARKER = "resilient-fetch-stale";
// The bytes of a copy staleKeep made, for the memory store to keep as they are (at once: the
// answer is kept as soon as its copy is read).
const BYTES = Symbol("bytes");
// The Cache API keys its entries by request: a key is the query of a URL of no server.
const KEY_URL = "https://resilient-fetch.invalid/stale?key=";

/** A header list as one flat array: name, value, name, value. */
function flat(headers) {
  const out = [];
  for (const [name, value] of headers) out.push(name, value);
  return out;
}

/**
 * `work` (a promise), or undefined once `ms` pass first; never rejects. The timer of a lookup
 * (`awaited`: a call waits for it) keeps Node alive, a put's or a delete's does not.
 */
function settled(work, ms, awaited = false) {
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(resolve, Math.max(0, ms));
    if (!awaited && typeof timer === "object") timer.unref?.();
  });
  return Promise.race([work, late]).catch(() => undefined).finally(() => clearTimeout(timer));
}

/** `store[method](key, value)` as a promise (a store may be synchronous, or throw). */
function storeCall(store, method, key, value) {
  return new Promise((resolve) => resolve(store[method](key, value)));
}

/**
 * Whether this runtime's own store serves one user: a page's or a browser worker's (its Cache
 * API and memory are the user's). A Worker's cache serves every user, and a server's memory too.
 */
function privateRuntime() {
  const g = globalThis;
  if (typeof g.navigator === "object" && g.navigator?.userAgent === "Cloudflare-Workers") return false;
  return typeof g.document === "object" || typeof g.DedicatedWorkerGlobalScope === "function" ||
    typeof g.SharedWorkerGlobalScope === "function" || typeof g.ServiceWorkerGlobalScope === "function";
}

/**
 * The Cache API's `resilient-fetch` cache as a store; `memory` from the first time it cannot be
 * opened or used (workerd run locally without a cache service throws "No Cache was configured").
 */
function cacheStore(memory) {
  let opened;
  const cache = () => (opened ??= caches.open("resilient-fetch").catch(() => null));
  const request = (key) => new Request(KEY_URL + encodeURIComponent(key));
  const use = (method, work) => async (key, value) => {
    const c = await cache();
    if (c !== null) {
      try {
        return await work(c, request(key), value);
      } catch {
        opened = Promise.resolve(null);
      }
    }
    return memory[method](key, value);
  };
  return {
    get: use("get", async (c, r) => (await c.match(r)) ?? undefined),
    put: use("put", (c, r, response) => c.put(r, response)),
    delete: use("delete", (c, r) => c.delete(r)),
  };
}

/** A store in this realm's memory: at most `maxEntries` answers and `maxBytes` of bodies, the least recently used out first. */
function memoryStore(maxEntries, maxBytes) {
  const entries = new Map();
  let bytes = 0;
  const drop = (key) => {
    const e = entries.get(key);
    if (e === undefined) return;
    bytes -= e.body.byteLength;
    entries.delete(key);
  };
  return {
    async get(key) {
      const e = entries.get(key);
      if (e === undefined) return undefined;
      entries.delete(key);
      entries.set(key, e);
      const body = e.body.byteLength === 0 ? null : e.body.slice(0);
      return new Response(body, { status: e.status, statusText: e.statusText, headers: e.headers });
    },
    async put(key, response) {
      const body = response[BYTES] ?? (await response.arrayBuffer());
      drop(key);
      if (body.byteLength > maxBytes) return;
      const { status, statusText } = response;
      entries.set(key, { status, statusText, headers: [...response.headers], body });
      bytes += body.byteLength;
      for (const old of entries.keys()) {
        if (entries.size <= maxEntries && bytes <= maxBytes) break;
        drop(old);
      }
    },
    async delete(key) { drop(key); },
  };
}

/**
 * A client's store: `given` (an object with get, put and delete), else the Cache API where the
 * runtime has one, else memory; and whether the runtime's own store is shared (a given one is
 * taken to be: `stale.private` says otherwise).
 */
function staleOpen(given, maxEntries, maxBytes) {
  if (given !== undefined && given !== null) return [given, true];
  const memory = memoryStore(maxEntries, maxBytes);
  const store = typeof globalThis.caches?.open === "function" ? cacheStore(memory) : memory;
  return [store, !privateRuntime()];
}

/** What keeping and serving need of the request: [its URL, ...its header names and values]. */
function staleRequest(source, init) {
  const request = source instanceof Request ? source : undefined;
  const url = request?.url ?? new URL(String(source), globalThis.location?.href).href;
  const headers = init?.headers !== undefined ? new Headers(init.headers) : (request?.headers ?? []);
  return [url, ...flat(headers)];
}

/** What keeping needs of an answer: [its status, ...its header names and values]. */
function staleHeaders(response) {
  try {
    return [response.status, ...flat(response.headers)];
  } catch {
    return [0];
  }
}

/**
 * Keeps a copy of `response` under `key` (and, when its Vary names fields, `vary` under `base`:
 * a lookup finds the names there), its body read beside the caller's (a tee) up to `limit`
 * bytes: a larger one is not kept, and that branch is cancelled. `maxAgeS`: how long the Cache
 * API may keep it. Never awaited by the call; each store call bounded by `ms`.
 */
function staleKeep(store, response, key, base, vary, sent, shared, limit, maxAgeS, ms) {
  let copy;
  try {
    copy = response.clone();
  } catch {
    return;
  }
  const received = Date.now();
  (async () => {
    const chunks = [];
    let size = 0;
    if (copy.body !== null) {
      const reader = copy.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > limit) return reader.cancel().catch(() => {});
        chunks.push(value);
      }
    }
    const kept = (status, statusText, own) => new Headers({
      "cache-control": `max-age=${maxAgeS}`,
      [KEPT]: JSON.stringify([sent, received, shared, vary, status, statusText, ...own]),
    });
    const own = flat(copy.headers);
    const bytes = new Uint8Array(size);
    let at = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, at);
      at += chunk.byteLength;
    }
    const { status, statusText } = copy;
    const stored = new Response(size === 0 ? null : bytes, { headers: kept(status, statusText, own) });
    stored[BYTES] = bytes.buffer;
    await settled(storeCall(store, "put", key, stored), ms);
    if (base !== key) await settled(storeCall(store, "put", base, new Response(null, { headers: kept(0, "", []) })), ms);
  })().catch(() => {});
}

/**
 * The answer kept under `key`, within `ms`: [the stored copy, sent, received, shared, vary,
 * status, statusText, ...its own header names and values], or undefined (none, a store that
 * failed or did not answer, or not one of ours).
 */
async function staleGet(store, key, ms) {
  const found = await settled(storeCall(store, "get", key), ms, true);
  try {
    const meta = JSON.parse(found.headers.get(KEPT));
    return Array.isArray(meta) && meta.length >= 6 ? [found, ...meta] : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The answer `entry` (from staleGet) as served for `reason`: its status and own headers, its
 * `Age`, and the marker; what the call would have resolved with (`replaced`) has its body cancelled.
 */
function staleServe(entry, age, reason, replaced) {
  const [found, , , , , status, statusText, ...own] = entry;
  const headers = new Headers();
  for (let i = 0; i + 1 < own.length; i += 2) headers.append(own[i], own[i + 1]);
  headers.set("age", String(age));
  headers.set(MARKER, reason);
  if (replaced instanceof Response && !replaced.bodyUsed) replaced.body?.cancel().catch(() => {});
  const nullBody = [101, 103, 204, 205, 304].includes(status);
  return new Response(nullBody ? null : found.body, { status, statusText, headers });
}

/** Deletes what is kept under `keys` (a write made it out of date), each within `ms`; never awaited. */
function staleDelete(store, keys, ms) {
  for (const key of keys) settled(storeCall(store, "delete", key), ms);
}

export { staleOpen, staleRequest, staleHeaders, staleKeep, staleGet, staleServe, staleDelete };
