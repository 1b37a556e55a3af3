// Resumed downloads (policy resume): a GET's body that breaks is asked for again from the
// byte it broke at, and the rest is read on in the caller's one stream (js/body.js `readThrough`).
// Whether it may, the request's headers and the answer are judged in Rust (src/resume/body.rs);
// the waits and attempts are the engine's (src/resume/shell.rs). Here: what Rust reads of a
// response, the range request, and handing the rest's reader to the guard.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files).
import { readThrough, BODY } from "../../js/body.js";

const HEAD = ["etag", "last-modified", "date", "content-encoding", "accept-ranges", "content-range", "content-length"];

/** What a resume reads of `response`: [status, then each of HEAD's values or undefined]. */
function resumeHead(response) {
  const out = [response.status];
  for (const name of HEAD) out.push(response.headers.get(name) ?? undefined);
  return out;
}

/**
 * The call's request asking for the rest: `input` (a Request, or the fast path's URL with
 * its `init`) with `Range` and `If-Range` set.
 */
function rangeRequest(input, init, range, ifRange) {
  const request = new Request(input, init);
  const headers = new Headers(request.headers);
  headers.set("range", range);
  headers.set("if-range", ifRange);
  return new Request(request, { headers });
}

/** Schedules `fn` after `ms`; the timer does not keep Node or Deno alive by itself. */
function unrefTimer(fn, ms) {
  const id = setTimeout(fn, ms);
  if (typeof id === "object" && typeof id?.unref === "function") id.unref();
  return id;
}

/**
 * Makes `response`'s guarded body (js/body.js) read a stream that goes on past a break: its
 * reads come from the platform's body, then from each resumed answer's. `resumer.resume(bytes,
 * error, gap)` (src/resume/shell.rs) resolves with [the answer, its AbortController] whose body
 * is the rest, or null when nothing is left, or rejects with why not; `resumer.cancel()` stops
 * the one under way. The guard keeps the
 * deadline and the caller's signal (aborting the current attempt's controller); the gaps of
 * bodyTimeoutMs are timed here, for a gap is resumed, not fatal. (A clone of the response reads
 * its own branch of the first answer, bounded by the deadline.)
 */
function attachResume(response, resumer) {
  let reader = null;
  let got = 0;
  let cancelled = false;
  let shared;
  let idleMs = 0;
  const read = (controller, resolve, reject) => {
    let gap = false;
    const t = idleMs > 0 ? unrefTimer(() => {
      gap = true;
      let error;
      try { error = shared.expire(false, idleMs, shared.origin, shared.onEvent); } catch { /* the client is gone */ }
      try { shared.controller.abort(error); } catch { /* ended */ }
    }, idleMs) : undefined;
    reader.read().then(({ done, value }) => {
      clearTimeout(t);
      try {
        if (done) {
          controller.close();
        } else {
          got += value.byteLength;
          controller.enqueue(value);
        }
      } catch { /* cancelled meanwhile */ }
      resolve();
    }, (error) => {
      clearTimeout(t);
      if (shared.failed !== undefined || cancelled) return reject(shared.failed ?? error);
      resumer.resume(got, error, gap).then((answer) => {
        if (answer === null) {
          if (!cancelled) controller.close();
          return resolve();
        }
        // Ended meanwhile (the deadline, the caller's signal, a cancel): the answer is let go.
        if (shared.failed !== undefined || cancelled) {
          answer[1].abort(shared.failed);
          return shared.failed === undefined ? resolve() : reject(shared.failed);
        }
        shared.controller = answer[1];
        reader = answer[0].body.getReader();
        read(controller, resolve, reject);
      }, reject);
    });
  };
  const stream = new ReadableStream({
    pull(controller) {
      reader ??= BODY.call(response).getReader();
      return new Promise((resolve, reject) => read(controller, resolve, reject));
    },
    cancel(reason) {
      cancelled = true;
      resumer.cancel();
      // The current body may have failed already (the break): its cancel's failure is not the caller's.
      return (reader ?? BODY.call(response))?.cancel(reason).catch(() => {});
    },
  }, { highWaterMark: 0 });
  shared = readThrough(response, stream);
  if (shared === undefined) return;
  idleMs = shared.idleMs;
  shared.idleMs = 0;
}

/** The TypeError a body that could not be resumed errors with (as fetch's own broken body does): `message` says why, `reason` names it, `cause` is the failure it could not resume. */
function resumeError(message, reason, cause) {
  const error = new TypeError(`resilient-fetch: ${message}`, cause === undefined ? undefined : { cause });
  error.reason = reason;
  return error;
}

export { resumeHead, rangeRequest, attachResume, resumeError };
