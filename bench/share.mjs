// Shared origin health, what it saves (bench/README.md): N clients of one share name, each in
// its own worker_thread (as tabs are separate JS realms), calling an origin on 127.0.0.1 every
// 50 ms through an outage with a 1 s cooldown (`mode: "consecutive"`, 5 in a row), beside one
// client alone and, in a second outage, N clients that share nothing. Counted: the requests the
// origin received during each outage, and the ratio to the lone client's. This is the
// throughput claim the tests leave to the bench (tests/package/share.test.mjs asserts the
// causes: one probe per cooldown, no send after hearing the open breaker, and a 3x bound only
// broken sharing crosses).
//
// Env: BENCH_SHARE_CLIENTS (default 5), BENCH_SHARE_OUTAGE_MS (default 10000), BENCH_SHARE_RUNS (default 3).
import { createServer } from "node:http";
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads";

// Shared health is in the full build.
import { ResilientClient } from "resilient-fetch/full";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

if (!isMainThread) {
  // One client: a GET every 50 ms from startAt to stopAt (wall clock).
  const { url, share, startAt, stopAt } = workerData;
  const client = new ResilientClient({ ...(share ? { share } : {}), retry: false, timeoutMs: 2000,
    breaker: { mode: "consecutive", failureThreshold: 5, cooldownMs: 1000 } });
  const pending = [];
  await sleep(Math.max(0, startAt - Date.now()));
  while (Date.now() < stopAt) {
    pending.push(client.fetch(url).then((r) => r.arrayBuffer(), () => {}));
    await sleep(50);
  }
  await Promise.all(pending);
  client.free();
  parentPort.postMessage("done");
} else {
  const N = Number(process.env.BENCH_SHARE_CLIENTS ?? 5);
  const MS = Number(process.env.BENCH_SHARE_OUTAGE_MS ?? 10_000);
  const RUNS = Number(process.env.BENCH_SHARE_RUNS ?? 3);
  // /GROUP?from=T: 503 during [T, T + MS), else 200; counts the requests during the outage per group.
  const during = new Map();
  const server = createServer((req, res) => {
    const url = new URL(req.url, "http://x"), from = Number(url.searchParams.get("from")), now = Date.now();
    const down = now >= from && now < from + MS;
    if (down) during.set(url.pathname, (during.get(url.pathname) ?? 0) + 1);
    res.writeHead(down ? 503 : 200, { "content-length": "0" });
    res.end();
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;
  const client = (group, from, share) => new Promise((resolve, reject) => {
    const w = new Worker(new URL(import.meta.url), { workerData: { url: `${origin}/${group}?from=${from}`, share,
      startAt: from - 500, stopAt: from + MS + 1500 } });
    w.once("message", resolve);
    w.once("error", reject);
  });
  /** One outage: N clients (sharing `share`, or nothing) beside one alone; the counts. */
  const outage = async (run, share) => {
    const from = Date.now() + 1000, fleet = `fleet${run}${share ? "s" : "p"}`, alone = `alone${run}${share ? "s" : "p"}`;
    await Promise.all([client(alone, from), ...Array.from({ length: N }, () => client(fleet, from, share))]);
    return { fleet: during.get(`/${fleet}`) ?? 0, alone: during.get(`/${alone}`) ?? 0 };
  };
  const rows = [];
  for (let run = 0; run < RUNS; run++) {
    const shared = await outage(run, `bench-${process.pid}-${run}`), plain = await outage(run);
    rows.push({ shared, plain });
  }
  server.close();
  const ratio = (r) => (r.alone ? r.fleet / r.alone : NaN);
  const range = (xs) => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}×`;
  console.log(`\n### Shared origin health: requests an origin receives during a ${MS / 1000} s outage (worker_threads, ${RUNS} runs)\n`);
  console.log(`| clients | requests per run | one client alone, same outage | ratio |`);
  console.log(`| --- | --- | --- | --- |`);
  console.log(`| ${N} sharing one name | ${rows.map((r) => r.shared.fleet).join(", ")} | ${rows.map((r) => r.shared.alone).join(", ")} | ${range(rows.map((r) => ratio(r.shared)))} |`);
  console.log(`| ${N} sharing nothing | ${rows.map((r) => r.plain.fleet).join(", ")} | ${rows.map((r) => r.plain.alone).join(", ")} | ${range(rows.map((r) => ratio(r.plain)))} |`);
}
