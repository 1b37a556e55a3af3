// The caller's signal and the response handed back.
//
// Signals: one "abort" listener per caller signal, however many calls and responses
// share it (fifty calls on one signal add one listener, so Node never warns about
// listeners), removed when nothing watches the signal any more. A polyfilled signal
// without removeEventListener keeps its one listener.
//
// Responses: the body of the response a call resolves with stays bounded after the
// call: a read that waits for data past the call's deadline, or longer than
// bodyTimeoutMs for the next chunk, rejects with a TimeoutError, and the attempt's
// AbortController is aborted so the connection is released. Aborting the caller's
// signal later still stops the body, for as long as the body (or the response) lives.
// Timers run only while a read waits for data, so an unread body holds none.
// The response keeps its identity (url, headers, instanceof Response): its prototype
// becomes a subclass whose body getter and read methods go through the guard.
// Keep the single `export { ... }` line last: the build turns it into
// `module.exports` for the CommonJS copy, and the import line below into a require.
import { makeTimeoutError, TIMEOUT_KIND_CALL, TIMEOUT_KIND_BODY } from "./errors.js";

/** What an aborted signal rejects with: its reason, or an AbortError where a polyfill has none. */
function abortReason(signal) {
  let reason;
  try { reason = signal.reason; } catch { /* a hostile getter: use the default */ }
  if (reason !== undefined) return reason;
  if (typeof DOMException === "function") return new DOMException("This operation was aborted", "AbortError");
  const error = new Error("This operation was aborted");
  error.name = "AbortError";
  return error;
}

/** Whether `signal` has aborted; a getter that throws counts as not aborted. */
function isAborted(signal) {
  try { return signal.aborted === true; } catch { return false; }
}

// signal -> { set of functions to call on abort, the one listener }
const WATCHERS = new WeakMap();

/** Calls `fn()` once when `signal` aborts (unless unwatched first). */
function watchSignal(signal, fn) {
  let watcher = WATCHERS.get(signal);
  if (watcher === undefined) {
    const set = new Set();
    const listener = () => {
      for (const f of [...set]) {
        try { f(); } catch { /* one watcher must not stop the others */ }
      }
    };
    try {
      signal.addEventListener("abort", listener, { once: true });
    } catch {
      return;
    }
    watcher = { set, listener };
    WATCHERS.set(signal, watcher);
  }
  watcher.set.add(fn);
}

/** Stops calling `fn` for `signal`; the listener goes with the last watcher. */
function unwatchSignal(signal, fn) {
  const watcher = WATCHERS.get(signal);
  if (watcher === undefined) return;
  watcher.set.delete(fn);
  if (watcher.set.size > 0 || typeof signal.removeEventListener !== "function") return;
  WATCHERS.delete(signal);
  try { signal.removeEventListener("abort", watcher.listener); } catch { /* nothing more to do */ }
}

// ---- the response handed back

const Base = typeof Response === "function" ? Response : class {};
const BODY = Object.getOwnPropertyDescriptor(Base.prototype, "body")?.get;
const BODY_USED = Object.getOwnPropertyDescriptor(Base.prototype, "bodyUsed")?.get;
// Where a response keeps its guard: { shared, wrapped: the guarded body or null, used }.
// A property of the response, not a WeakMap entry: a WeakMap of short-lived responses
// makes every garbage collection walk its entries (measured: most of the guard's cost).
const GUARD = Symbol("resilient-fetch guard");
// When a body (and its response) is collected, its link leaves the caller's signal.
const UNLINK = typeof FinalizationRegistry === "function"
  ? new FinalizationRegistry(({ signal, fire }) => unwatchSignal(signal, fire))
  : null;

/**
 * Calls `stop(target, reason)` once `signal` aborts (at once if it has), holding `target` only
 * weakly: a long-lived signal never keeps a response alive, and the link leaves the signal
 * when the target is collected.
 */
function linkWeakly(target, signal, stop) {
  if (isAborted(signal)) {
    stop(target, abortReason(signal));
    return;
  }
  if (typeof WeakRef !== "function") return;
  const ref = new WeakRef(target);
  const fire = () => {
    const held = ref.deref();
    if (held !== undefined) stop(held, abortReason(signal));
  };
  watchSignal(signal, fire);
  UNLINK?.register(target, { signal, fire });
}

/** Ends a response and all its copies (the call's own signal aborted). */
const failAll = (shared, reason) => shared.fail(reason);

/** What a response and its clones share: the attempt, its limits, the failure once there is one. */
class Shared {
  constructor(controller, deadline, totalMs, idleMs, expire, origin, onEvent) {
    this.controller = controller;
    this.deadline = deadline;
    this.totalMs = totalMs;
    this.idleMs = idleMs;
    this.expire = expire;
    this.origin = origin;
    this.onEvent = onEvent;
    this.failed = undefined;
    // Copies of the response made (it and its clones), and those whose body is not over yet.
    this.copies = 1;
    this.live = 1;
    this.counted = false;
  }

  /** The TimeoutError of a read that waited too long: counted once for the call, however many copies time out. */
  timeoutError(isDeadline) {
    const ms = isDeadline ? this.totalMs : this.idleMs;
    if (!this.counted) {
      this.counted = true;
      try {
        return this.expire(isDeadline, ms, this.origin, this.onEvent);
      } catch {
        // The client is gone (freed or collected): nothing to count, the error still holds.
      }
    }
    return makeTimeoutError(isDeadline ? TIMEOUT_KIND_CALL : TIMEOUT_KIND_BODY, ms);
  }

  /** Ends every copy's body with `reason` (once) and aborts the attempt. */
  fail(reason) {
    if (this.failed === undefined) {
      this.failed = reason;
      try { this.controller.abort(reason); } catch { /* already done */ }
    }
    return this.failed;
  }
}

// One copy's guard (the response's or a clone's): the guarded body once made, whether it was
// used, its own failure, the read waiting for data (its reject) and how to stop its branch.
// Copies read independently: one copy's timeout or caller's abort ends that copy alone, and
// the attempt is aborted (its connection released) once no other copy's body is still open.
function copyGuard(shared, response) {
  return { shared, response, wrapped: null, used: false, failed: undefined, ended: false, reject: null, stop: null, signal: undefined };
}

/**
 * Until a read takes its body, a copy stops by cancelling its own branch: one that fails
 * unread buffers nothing more, and the source is cancelled once every branch is.
 */
function cancelBranch(guard, reason) {
  try { BODY.call(guard.response)?.cancel(reason).catch(() => {}); } catch { /* locked or gone */ }
}

/** Why this copy's body failed: its own failure or the whole response's, or undefined. */
function failureOf(guard) {
  return guard.failed ?? guard.shared.failed;
}

/** This copy's body is over (read to its end, cancelled or failed): true when it was the last one open. */
function endCopy(guard) {
  if (guard.ended) return false;
  guard.ended = true;
  return --guard.shared.live === 0;
}

/** Ends this copy's body with `reason`: its waiting read rejects, and its branch stops (the attempt with it when no other copy is open). */
function failCopy(guard, reason) {
  if (guard.ended) return failureOf(guard) ?? reason;
  guard.failed = reason;
  const last = endCopy(guard);
  guard.reject?.(reason);
  if (last) guard.shared.fail(reason);
  else if (guard.stop !== null) guard.stop(reason);
  else cancelBranch(guard, reason);
  return reason;
}

/** The read of this copy waiting for data ran out of time: the copy ends with the TimeoutError. */
function timeOutCopy(guard, isDeadline) {
  return failureOf(guard) ?? failCopy(guard, guard.shared.timeoutError(isDeadline));
}

/**
 * Makes aborting `signal` stop this copy's body alone (a coalesced call's caller: the others
 * who joined read on). Returns `response`.
 */
function linkCopy(response, signal) {
  const guard = response?.[GUARD];
  if (guard === undefined || signal === undefined || signal === null) return response;
  guard.signal = signal;
  linkWeakly(guard, signal, failCopy);
  return response;
}

/**
 * Returns `response` with its body bounded: `deadline` (performance.now() ms, or
 * Infinity; the end of `totalMs` from the call's start), `idleMs` (0: none), and aborting `signal` stops it
 * (undefined: no signal; null: none yet, a coalesced call's callers link theirs with linkCopy).
 * `expire(isDeadline, ms, origin, onEvent)` counts the timeout and returns its TimeoutError.
 */
function guardResponse(response, controller, signal, deadline, totalMs, idleMs, expire, origin, onEvent) {
  const limited = deadline !== Infinity || idleMs > 0;
  if ((!limited && signal === undefined) || BODY === undefined) return response;
  let body;
  try {
    body = BODY.call(response); // throws for a Response-like object a mock fetch made
  } catch {
    return response;
  }
  if (body === null) return response;
  const shared = new Shared(controller, deadline, totalMs, idleMs, expire, origin, onEvent);
  // The signal holds the guard weakly; the response and its body hold it strongly.
  if (signal !== undefined && signal !== null) linkWeakly(shared, signal, failAll);
  // The guard first, then the prototype: in V8 adding a property after the prototype changed
  // takes a slow path (~0.6 µs a response in Node); in this order both are cached transitions.
  response[GUARD] = copyGuard(shared, response);
  Object.setPrototypeOf(response, GuardedResponse.prototype);
  return response;
}

/** Schedules `fn` after `ms`; the timer does not keep Node or Deno alive by itself. */
function timer(fn, ms) {
  const id = setTimeout(fn, ms);
  if (typeof id === "object" && typeof id?.unref === "function") id.unref();
  return id;
}

/**
 * Makes `response`'s guarded body read `raw` instead of the platform's body (policy resume:
 * src/resume/resume.js); returns what its copies share, or undefined when it is not guarded.
 */
function readThrough(response, raw) {
  const guard = response?.[GUARD];
  if (guard !== undefined) guard.raw = raw;
  return guard?.shared;
}

/** The guarded body of `response` (made on first use), over the platform's (or what replaces it). */
function guardedBody(response, guard) {
  const raw = guard.raw ?? BODY.call(response);
  if (raw === null || guard.wrapped !== null) return guard.wrapped ?? raw;
  const { shared } = guard;
  let reader = null;
  let cancelled = false;
  guard.wrapped = new ReadableStream({
    pull(controller) {
      guard.used = true;
      const failed = failureOf(guard);
      if (failed !== undefined) return Promise.reject(failed);
      if (reader === null) {
        reader = raw.getReader();
        guard.stop = (reason) => reader.cancel(reason).catch(() => {});
      }
      const now = performance.now();
      const idleDue = shared.idleMs > 0 ? now + shared.idleMs : Infinity;
      const isDeadline = shared.deadline <= idleDue;
      const due = isDeadline ? shared.deadline : idleDue;
      return new Promise((resolve, reject) => {
        guard.reject = reject;
        const t = due === Infinity ? undefined : timer(() => {
          reject(timeOutCopy(guard, isDeadline));
        }, Math.max(0, due - now));
        reader.read().then(({ done, value }) => {
          clearTimeout(t);
          // Cancelled meanwhile (the stream is closed already): nothing more to hand on.
          if (!cancelled) {
            try {
              if (done) {
                endCopy(guard);
                controller.close();
              } else {
                controller.enqueue(value);
              }
            } catch { /* closed or errored meanwhile */ }
          }
          resolve();
        }, (e) => {
          clearTimeout(t);
          reject(failureOf(guard) ?? e);
        });
      });
    },
    cancel(reason) {
      cancelled = true;
      endCopy(guard);
      const done = (reader ?? raw).cancel(reason);
      if (shared.copies === 1) return done;
      // A copy's body is a branch of a tee, whose cancel settles only once every branch is
      // cancelled: this copy's settles at once and leaves the others' bodies whole.
      done.catch(() => {});
      return undefined;
    },
  }, { highWaterMark: 0 });
  return guard.wrapped;
}

/** Every byte of the guarded body, as fetch's read methods take it. */
async function readAll(response) {
  const guard = response[GUARD];
  // A copy that ended unread (its caller's signal, a timeout) rejects with why, as fetch does.
  if (guard !== undefined && !guard.used && failureOf(guard) !== undefined) throw failureOf(guard);
  if (response.bodyUsed) throw new TypeError("Body is unusable: Body has already been read");
  const raw = guard?.raw ?? BODY.call(response);
  if (raw === null) return new Uint8Array(0);
  // Straight from the platform's body when the guarded stream was never handed out:
  // one timer for the whole read, re-armed from the last chunk (not one per chunk).
  const direct = guard !== undefined && guard.wrapped === null;
  const reader = (direct ? raw : response.body).getReader();
  const chunks = [];
  let length = 0;
  let read;
  if (direct) {
    guard.used = true;
    const { shared } = guard;
    let last = performance.now();
    let timeout;
    const check = () => {
      const now = performance.now();
      const isDeadline = now >= shared.deadline;
      if (isDeadline || (shared.idleMs > 0 && now - last >= shared.idleMs)) {
        timeOutCopy(guard, isDeadline);
        return;
      }
      const idleDue = shared.idleMs > 0 ? last + shared.idleMs : Infinity;
      timeout = timer(check, Math.max(0, Math.min(idleDue, shared.deadline) - now));
    };
    const failed = failureOf(guard);
    if (failed !== undefined) throw failed;
    guard.stop = (reason) => reader.cancel(reason).catch(() => {});
    // The first check comes after the first reads had their chance: data already there is
    // read even past the deadline; only a read that waits is cut.
    if (shared.deadline !== Infinity || shared.idleMs > 0) {
      const idleDue = shared.idleMs > 0 ? last + shared.idleMs : Infinity;
      timeout = timer(check, Math.max(0, Math.min(idleDue, shared.deadline) - last));
    }
    read = () => new Promise((resolve, reject) => {
      guard.reject = reject;
      reader.read().then((r) => { last = performance.now(); resolve(r); }, (e) => reject(failureOf(guard) ?? e));
    });
    try {
      const bytes = await collect(read, chunks, length);
      endCopy(guard);
      return bytes;
    } finally {
      clearTimeout(timeout);
    }
  }
  return collect(() => reader.read(), chunks, length);
}

/** Reads chunks with `read()` until done; one Uint8Array of them all. */
async function collect(read, chunks, length) {
  for (;;) {
    const { done, value } = await read();
    if (done) break;
    chunks.push(value);
    length += value.byteLength;
  }
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(length);
  let at = 0;
  for (const c of chunks) { out.set(c, at); at += c.byteLength; }
  return out;
}

const DECODER = new TextDecoder();

class GuardedResponse extends Base {
  get body() {
    const guard = this[GUARD];
    return guard === undefined ? BODY.call(this) : guardedBody(this, guard);
  }

  get bodyUsed() {
    const guard = this[GUARD];
    // A copy that ended unread had its branch cancelled by us, not read by its caller.
    if (guard !== undefined && guard.failed !== undefined) return guard.used;
    return BODY_USED.call(this) || guard?.used === true;
  }

  async arrayBuffer() {
    const bytes = await readAll(this);
    return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
      ? bytes.buffer : bytes.slice().buffer;
  }

  async bytes() {
    return readAll(this);
  }

  async text() {
    return DECODER.decode(await readAll(this));
  }

  async json() {
    return JSON.parse(await this.text());
  }

  async blob() {
    return new Blob([await readAll(this)], { type: this.headers.get("content-type") ?? "" });
  }

  async formData() {
    return new Base(await readAll(this), { headers: this.headers }).formData();
  }

  clone() {
    const guard = this[GUARD];
    if (guard === undefined) return super.clone();
    if (this.bodyUsed) throw new TypeError("Response.clone: Body has already been consumed.");
    if (guard.wrapped !== null) {
      // The guarded body was handed out but never read: as fetch, clone unless it is locked,
      // and let each copy make its guarded body afresh over its own branch.
      if (guard.wrapped.locked) throw new TypeError("Response.clone: Body is locked.");
      guard.wrapped = null;
    }
    const copy = super.clone();
    const { shared } = guard;
    shared.copies += 1;
    shared.live += 1;
    copy[GUARD] = copyGuard(shared, copy);
    Object.setPrototypeOf(copy, GuardedResponse.prototype);
    // A copy stops with what stops this one: its own failure so far, and its caller's signal.
    if (guard.failed !== undefined) failCopy(copy[GUARD], guard.failed);
    return linkCopy(copy, guard.signal);
  }
}
if (typeof Base.prototype.bytes !== "function") delete GuardedResponse.prototype.bytes;

export { abortReason, isAborted, watchSignal, unwatchSignal, guardResponse, linkCopy, readThrough, BODY };
