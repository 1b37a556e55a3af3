// Shared origin health (policy `share`; the rules are in src/share/rules.rs, the protocol in
// src/share/note.rs; the shell's part in src/share/shell.rs).
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files).
import { SHARE_VERSION, NOTE_KIND_HELLO, NOTE_KIND_HOLD } from "../../js/errors.js";

// ---------------------------------------------------------------- shared origin health
// A client's notes about its origins go to the clients of the same share name in other tabs,
// iframes and workers of the site (worker_threads of one Node process; Deno's workers) over a
// BroadcastChannel, and theirs come back. A message is [version, kind, origin, time, rank]:
// an origin (never a path, query, header, body or key), a note's kind, a wall-clock time,
// a rank. Anything else is dropped here (isNote); the wasm checks the rest.

/**
 * Opens the channel of share `name`; `hear(kind, origin, monotonicMs, rank)` gets each
 * well-formed note of a peer. With `durableObject` (Cloudflare Workers), the channel is the
 * one the package's Workers entry makes over it (pkg-template/edge.js: the same messages,
 * the same methods). Undefined where there is no BroadcastChannel (Cloudflare Workers,
 * without `durableObject`): sharing then does nothing.
 */
function shareOpen(name, hear, durableObject) {
  const edge = durableObject && globalThis[Symbol.for("resilient-fetch.edge")];
  if (!edge && typeof BroadcastChannel !== "function") return undefined;
  let channel;
  try {
    channel = edge ? edge.channel(name, durableObject) : new BroadcastChannel(`resilient-fetch/${name}`);
  } catch {
    return undefined;
  }
  channel.onmessage = ({ data }) => {
    if (!isNote(data)) return;
    const [, kind, origin, at, rank] = data;
    hear(kind, origin, at - Date.now() + performance.now(), rank);
  };
  // Node: an open channel must not keep the process alive.
  channel.unref?.();
  return channel;
}

// ---- share rules: pkg-template/full/edge.js has a copy (scripts/codes.mjs).
/**
 * Whether `m` is a note as src/share/note.rs defines it: [SHARE_VERSION, kind, origin, time, rank],
 * a hello naming no origin ("") and every other kind exactly an origin (NOTE_KIND_HOLD is the
 * last kind).
 */
function isNote(m) {
  if (!Array.isArray(m) || m.length !== 5 || m[0] !== SHARE_VERSION) return false;
  const [, kind, origin, at, rank] = m;
  return Number.isInteger(kind) && kind >= NOTE_KIND_HELLO && kind <= NOTE_KIND_HOLD && Number.isFinite(at) &&
    Number.isInteger(rank) && rank >= 0 && rank <= 0xffffffff && typeof origin === "string" &&
    (kind === NOTE_KIND_HELLO ? origin === "" : isOrigin(origin));
}

/** Exactly an http(s) origin as the registry keys it (never a path, query or credentials). */
function isOrigin(origin) {
  if (origin.length > 2048) return false;
  try {
    const url = new URL(origin);
    return (url.protocol === "http:" || url.protocol === "https:") && url.origin === origin;
  } catch {
    return false;
  }
}
// ---- end of share rules

/** Sends a note; `at` is monotonic ms, sent as wall-clock ms. Never throws. */
function shareSend(channel, kind, origin, at, rank) {
  try {
    channel.postMessage([SHARE_VERSION, kind, origin, at + Date.now() - performance.now(), rank]);
  } catch { /* closed: sharing is a hint */ }
}

/** A call starts: a channel that refreshes its view in the background may (edge.js; it never throws). */
const sharePoke = (channel) => channel.poke?.();

function shareClose(channel) {
  channel.onmessage = null;
  channel.close();
}

export { shareOpen, shareSend, sharePoke, shareClose };
