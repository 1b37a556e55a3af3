// Resumed downloads (policy resume): a GET's body that breaks is asked for again from the
// byte it broke at, and the rest is read on in the caller's one stream (js/body.js `onBreak`).
// Whether it may, the request's headers and the answer are judged in Rust (src/resume/body.rs);
// the waits and attempts are the engine's (src/resume/shell.rs). Here: what Rust reads of a
// response, the range request, and handing the rest's reader to the guard.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files).
import { onBreak } from "../../js/body.js";

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

/**
 * Makes a broken read of `response`'s body go on through `resumer` (src/resume/shell.rs):
 * `resumer.resume(bytes, error, gap)` resolves with [the answer, its AbortController] whose
 * body is the rest, or null when nothing is left, or rejects with why not.
 */
function attachResume(response, resumer) {
  onBreak(response, (guard, error, gap) => resumer.resume(guard.got, error, gap).then((answer) => {
    if (answer === null) return null;
    guard.shared.controller = answer[1];
    return answer[0].body?.getReader() ?? null;
  }));
}

/** The TypeError a body that could not be resumed errors with (as fetch's own broken body does): `message` says why, `reason` names it, `cause` is the failure it could not resume. */
function resumeError(message, reason, cause) {
  const error = new TypeError(`resilient-fetch: ${message}`, cause === undefined ? undefined : { cause });
  error.reason = reason;
  return error;
}

export { resumeHead, rangeRequest, attachResume, resumeError };
