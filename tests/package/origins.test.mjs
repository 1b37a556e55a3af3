// The origin a call is keyed by (its breaker, budget, pacing) is the URL standard's, whichever
// way it was found: js/request.js reads plain absolute http(s) URLs without the URL parser and
// leaves everything else to it. Fuzzed here against `new URL(...).origin`, through the package
// used by name: the origin is the one the call's `attemptStart` event names.
import test from "node:test";
import assert from "node:assert/strict";
import { ResilientClient } from "resilient-fetch";

/** A seeded xorshift generator: the same URLs every run. */
function random(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    return x / 2 ** 32;
  };
}

function* urls(count, seed) {
  const r = random(seed);
  const pick = (xs) => xs[Math.floor(r() * xs.length)];
  const chars = "abcxyzABCXYZ0123456789-";
  const label = () => {
    const special = pick(["", "", "", "", "xn--", "xn--ls8h", "0x7f", "010", "1e3", "256", "_", "é", "%41", " ", "\t"]);
    let s = special;
    for (let i = Math.floor(r() * 6); i > 0; i--) s += pick(chars);
    return s;
  };
  for (let i = 0; i < count; i++) {
    const labels = Array.from({ length: 1 + Math.floor(r() * 4) }, label);
    let host = labels.join(".");
    if (r() < 0.1) host += ".";
    if (r() < 0.1) {
      host = pick(["127.0.0.1", "0x7f.1", "010.0.0.1", "[::1]", "user@a.test", "a:b@c.test", "LOCALHOST", "1.2.3.4",
        "255.255.255.255", "256.1.1.1", "1.2.3", "01.2.3.4", "1.2.3.4.", "0.0.0.0", "1.2.3.04", "a.1.2.3", "1.2.3.4.5"]);
    }
    const port = pick(["", "", "", ":", ":80", ":443", ":080", ":0443", ":8080", ":65535", ":65536", ":1" + Math.floor(r() * 99999)]);
    const rest = pick(["", "/", "/p", "/p?q=1", "?x", "#f", "/a b", "\\x", "/é", "/@x", "//y"]);
    yield `${pick(["http", "https", "HTTP", "Https"])}://${host}${port}${rest}`;
  }
}

test("the origin of 3 000 fuzzed URLs is new URL(...).origin, and a URL it refuses is refused", async () => {
  let seen;
  const client = new ResilientClient({
    maxOrigins: 1_000_000, retry: false, breaker: false, rateLimit: false,
    fetch: () => Promise.resolve(new Response(null, { status: 204 })),
    onEvent: (e) => { if (e.type === "attemptStart") seen = e.origin; },
  });
  let checked = 0, refused = 0;
  for (const url of urls(3000, 0x5eed)) {
    let expected = null;
    try {
      const parsed = new URL(url);
      // fetch refuses a URL with credentials, as the library does
      expected = parsed.username || parsed.password ? null : parsed.origin;
    } catch { /* refused below */ }
    seen = undefined;
    const outcome = await client.fetch(url).then(() => "sent", (e) => e);
    if (expected === null) {
      assert.ok(outcome instanceof TypeError, `${JSON.stringify(url)}: expected a TypeError, got ${outcome}`);
      refused++;
    } else {
      assert.equal(seen, expected, JSON.stringify(url));
      checked++;
    }
  }
  assert.ok(checked > 1000 && refused > 100, `${checked} keyed, ${refused} refused`);
});

// The wasm is told an origin's text once and then names it by a slot (js/request.js `TOLD`, 32
// slots reused in turn), and a method by a code unless it has none: 45 origins revisited in an
// order that reuses every slot many times, with methods of every kind, are each the call's own.
test("origins told by slot and methods told by code are each call's own, slots reused", async () => {
  let seen, method;
  const client = new ResilientClient({
    maxOrigins: 1_000, breaker: false, rateLimit: false,
    retry: { maxAttempts: 2, shouldRetry: (ctx) => { method = ctx.method; return false; } },
    fetch: () => Promise.resolve(new Response(null, { status: 503 })),
    onEvent: (e) => { if (e.type === "attemptStart") seen = e.origin; },
  });
  const methods = ["GET", "get", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "patch", "PROPFIND", "Post"];
  for (let i = 0; i < 400; i++) {
    const origin = `http://o${(i * 7) % 45}.test`;
    const asked = methods[i % methods.length];
    // fetch sends the six standard methods upper-cased, any other as written
    const sent = ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS"].includes(asked.toUpperCase()) ? asked.toUpperCase() : asked;
    seen = method = undefined;
    const response = await client.fetch(`${origin}/item`, { method: asked, body: sent === "GET" || sent === "HEAD" ? undefined : "x" });
    assert.equal(response.status, 503);
    assert.equal(seen, origin, `call ${i}`);
    assert.equal(method, sent, `call ${i} (${asked})`);
  }
  const stats = client.stats();
  assert.equal(Object.keys(stats).length, 45);
  client.free();
});
