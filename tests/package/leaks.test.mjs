// Nothing is left behind when a call settles: 100 000 calls (successes,
// retries, timeouts, caller aborts, network errors) through a stub fetch, then
// no timer, no listener on the caller's signal once the responses are collected,
// and no growth of wasm memory.
// This file runs in its own process (node --test), so the stub is private to it.
import test from "node:test";
import assert from "node:assert/strict";
import { ResilientClient, memoryBytes, TimeoutError } from "resilient-fetch";
import { collectUntil, countListeners } from "./helpers.mjs";

const CALLS = 100_000;
const BATCH = 500;

function stubFetch() {
  // fetch(input, init) as the platform takes it: a URL string or a Request.
  globalThis.fetch = (input, init) => {
    const path = new URL(typeof input === "string" ? input : input.url).pathname;
    const headers = new Headers(typeof input === "string" ? init?.headers : input.headers);
    const signal = init?.signal;
    if (path === "/hang") {
      return new Promise((_, reject) => {
        signal.addEventListener("abort", () => reject(signal.reason), { once: true });
      });
    }
    if (path === "/neterr") return Promise.reject(new TypeError("fetch failed"));
    if (path === "/flaky") {
      const n = Number(headers.get("x-n") ?? 0);
      return Promise.resolve(new Response("", { status: n % 2 ? 200 : 503 }));
    }
    return Promise.resolve(new Response("ok"));
  };
}

function timers() {
  return process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
}

test(`${CALLS} mixed calls leave no timer, listener or memory behind`, async () => {
  const realFetch = globalThis.fetch;
  stubFetch();
  try {
    const client = new ResilientClient({
      timeoutMs: 5, retry: { baseDelayMs: 0, maxDelayMs: 1 }, breaker: { failureThreshold: 1000 },
    });
    const longLived = new AbortController();
    const listeners = countListeners(longLived.signal);

    const baselineTimers = timers();
    const outcomes = { ok: 0, timeout: 0, aborted: 0, neterr: 0, other: 0 };
    const one = async (i) => {
      const kind = i % 50;
      try {
        if (kind === 0) {
          await client.fetch("http://stub.test/hang", { signal: longLived.signal }, { retry: false });
        } else if (kind === 1) {
          const ac = new AbortController();
          const p = client.fetch("http://stub.test/hang", { signal: ac.signal }, { timeoutMs: 1000 });
          queueMicrotask(() => ac.abort());
          await p;
        } else if (kind === 2) {
          await client.fetch("http://stub.test/neterr", undefined, { retry: { maxAttempts: 2, baseDelayMs: 0 } });
        } else if (kind < 10) {
          await client.fetch("http://stub.test/flaky", { headers: { "x-n": String(i) }, signal: longLived.signal });
          outcomes.ok++;
        } else {
          await client.fetch("http://stub.test/ok", kind % 2 ? { method: "POST", body: "x" } : undefined);
          outcomes.ok++;
        }
      } catch (e) {
        if (e instanceof TimeoutError) outcomes.timeout++;
        else if (e?.name === "AbortError") outcomes.aborted++;
        else if (e instanceof TypeError) outcomes.neterr++;
        else { outcomes.other++; throw e; }
      }
    };
    const run = async (from, to) => {
      for (let i = from; i < to; i += BATCH) {
        await Promise.all(Array.from({ length: Math.min(BATCH, to - i) }, (_, k) => one(i + k)));
      }
    };

    await run(0, CALLS / 10); // warm-up
    const memoryAfterWarmUp = memoryBytes();
    await run(CALLS / 10, CALLS);
    const memoryAtEnd = memoryBytes();

    assert.equal(outcomes.other, 0);
    assert.ok(outcomes.timeout > 1000 && outcomes.aborted > 1000 && outcomes.neterr > 1000, JSON.stringify(outcomes));
    assert.equal(timers(), baselineTimers, "timers left behind");
    // Each response keeps a link from the signal to its body while it lives; gone with it.
    assert.ok(await collectUntil(() => listeners.live === 0), `${listeners.live} listeners left on the caller's signal`);
    assert.equal(client.stats()["http://stub.test"].inFlight, 0);
    assert.equal(memoryAtEnd, memoryAfterWarmUp,
      `wasm memory grew after warm-up: ${memoryAfterWarmUp} -> ${memoryAtEnd} bytes`);
    console.log(`# memory ${memoryAfterWarmUp / 65536} pages after warm-up, ${memoryAtEnd / 65536} at the end;`,
      JSON.stringify(outcomes));
  } finally {
    globalThis.fetch = realFetch;
  }
});
