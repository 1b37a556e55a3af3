// The resume lane: a download whose connection breaks three times, read with `resume` and
// without, against a stub origin in the page (nothing leaves it).
import { ResilientClient } from "resilient-fetch";
import { $, el, lane } from "./page.js";

const URL_ = "https://downloads.invalid/app.bin";
const SIZE = 2 * 1024 * 1024;
const CUTS = [400_000, 1_000_000, 1_600_000];
const ETAG = '"app-v1"';

/** The resource: SIZE seeded bytes. */
const BODY = (() => {
  const bytes = new Uint8Array(SIZE);
  let x = 0x9e3779b9;
  for (let i = 0; i < SIZE; i++) { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; bytes[i] = x & 0xff; }
  return bytes;
})();

/**
 * A stub origin: it serves BODY with a strong ETag, honours `Range: bytes=N-` with `If-Range`
 * (206), and its body breaks (a network error, as fetch's) once at each of CUTS, once per run.
 * `ranges` lists what each request asked for.
 */
function origin() {
  const left = [...CUTS];
  const ranges = [];
  const fetch = async (input, init) => {
    const request = new Request(input, init);
    const asked = /^bytes=(\d+)-$/.exec(request.headers.get("range") ?? "");
    const honoured = asked !== null && (request.headers.get("if-range") ?? ETAG) === ETAG;
    const start = honoured ? Number(asked[1]) : 0;
    ranges.push(asked ? `bytes=${start}-` : "all");
    const cut = left.find((at) => at > start);
    if (cut !== undefined) left.splice(left.indexOf(cut), 1);
    const end = cut ?? SIZE;
    let at = start;
    const body = new ReadableStream({
      pull(controller) {
        if (request.signal.aborted) return controller.error(request.signal.reason);
        if (at >= end) return cut === undefined ? controller.close() : controller.error(new TypeError("network error"));
        const chunk = BODY.slice(at, Math.min(end, at + 65536));
        at += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const headers = { etag: ETAG, "accept-ranges": "bytes", "content-length": String(SIZE - start) };
    if (honoured) headers["content-range"] = `bytes ${start}-${SIZE - 1}/${SIZE}`;
    return new Response(body, { status: honoured ? 206 : 200, headers });
  };
  return { fetch, ranges };
}

const hex = async (bytes) => [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))]
  .map((b) => b.toString(16).padStart(2, "0")).join("");

/** One download through the stub: the bytes read before it ended, how it ended, what was asked. */
async function download(policy) {
  const stub = origin();
  const client = new ResilientClient({ ...policy, fetch: stub.fetch });
  let bytes = new Uint8Array(0), error = null;
  try {
    const res = await client.fetch(URL_);
    const reader = res.body.getReader();
    const chunks = [];
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
      }
    } catch (e) {
      error = e;
    }
    bytes = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
    let at = 0;
    for (const c of chunks) { bytes.set(c, at); at += c.byteLength; }
  } finally {
    client.free();
  }
  return { bytes, error, ranges: stub.ranges };
}

export async function compareResume() {
  await lane($("#resume-button"), async () => {
    const plain = await download({});
    const resumed = await download({ resume: true, retry: { maxAttempts: 4, baseDelayMs: 5 } });
    const same = resumed.bytes.byteLength === SIZE && (await hex(resumed.bytes)) === (await hex(BODY));
    const mb = (n) => (n / 1024 / 1024).toFixed(2);
    $("#resume-plain").textContent = `Without resume: ${mb(plain.bytes.byteLength)} of ${mb(SIZE)} MB read, then `
      + `${plain.error ? `${plain.error.name}: ${plain.error.message}` : "no error"}.`;
    $("#resume-summary").replaceChildren(
      el("span", {}, `With resume: true: ${mb(resumed.bytes.byteLength)} MB read, `
        + `${same ? "every byte the file's (SHA-256 matches)" : "NOT the file's bytes"}; requests: `),
      ...resumed.ranges.map((r) => el("code", {}, r)),
    );
    Object.assign($("#resume-summary").dataset, {
      bytes: String(resumed.bytes.byteLength), same: String(same), ranges: resumed.ranges.join(" "),
      plainBytes: String(plain.bytes.byteLength), plainError: plain.error?.name ?? "",
      error: resumed.error?.name ?? "",
    });
  });
}
