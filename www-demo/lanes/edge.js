// The Cloudflare Workers lane: two fleets of workerd isolates (with the OriginHealth object and
// without) through an outage of origin A, driven by the demo server.
import { $, ORIGINS, backend, node, sleep } from "./page.js";

// The demo server (serve.mjs, edge-fleet.mjs) runs ten isolates in workerd and drives them; the
// page draws what origin A's log received from each and each isolate's own breaker moves.
const FLEETS = [
  { group: "shared", svg: "#edge-with", total: "#edge-with-total" },
  { group: "plain", svg: "#edge-without", total: "#edge-without-total" },
];

/** Says whether the lane can run here, and why not when it cannot. */
export function edgeSetup() {
  const note = $("#edge-note");
  let off = null;
  if (backend.serviceWorker) {
    off = ["static", "This lane needs ./scripts/demo.sh: its isolates are workerd processes run by the demo's own "
      + "server on 127.0.0.1, and this static copy has none (its backend is a service worker in this browser). "
      + "Nothing is drawn here rather than numbers that were not measured."];
  } else if (!backend.edge || backend.edge.error) {
    off = ["workerd", `workerd is not running, so this lane is off (the others work): ${backend.edge?.error
      ?? "this server did not start it"}.`];
  }
  if (off) {
    note.dataset.off = off[0];
    note.textContent = off[1];
    note.className = "error";
    $("#edge .fleets").hidden = true;
    return;
  }
  note.textContent = `${backend.edge.isolates} isolates with the object and ${backend.edge.isolates} without, ready in workerd.`;
  $("#edge-button").disabled = false;
}

/** Requests of `log` within [from, to). */
const within = (log, from, to) => log.filter((e) => e.t >= from && e.t < to).length;

/** The open spans of one isolate's breaker: [opened, closed] (closed: `end` while still open). */
function openSpans(moves, end) {
  const spans = [];
  let openedAt = null;
  for (const m of moves) {
    if (m.to === "open" && openedAt === null) openedAt = m.at;
    if (m.to === "closed" && openedAt !== null) { spans.push([openedAt, m.at]); openedAt = null; }
  }
  if (openedAt !== null) spans.push([openedAt, end]);
  return spans;
}

/** One fleet's chart: a row per isolate, a tick per request origin A received, its breaker's open spans. */
function drawFleet(svg, run, logs, reports, t0, t1) {
  const W = 560, left = 64, right = 506, rowH = 22, top = 18;
  const x = (t) => left + ((Math.min(Math.max(t, t0), t1) - t0) / (t1 - t0)) * (right - left);
  const parts = [
    node("rect", { x: x(run.from), y: top - 14, width: x(run.from + run.ms) - x(run.from), height: 5 * rowH + 14, fill: "#f3f4f6" }),
    node("text", { x: (x(run.from) + x(run.from + run.ms)) / 2, y: top - 4, "font-size": 10, "text-anchor": "middle", fill: "#666" },
      `origin A down (${run.ms / 1000} s)`),
    node("text", { x: W - 2, y: top - 4, "font-size": 10, "text-anchor": "end", fill: "#666" }, "requests"),
  ];
  logs.forEach((log, i) => {
    const y = top + i * rowH;
    parts.push(node("text", { x: 2, y: y + 14, "font-size": 11 }, `isolate ${i + 1}`));
    parts.push(node("line", { x1: left, x2: right, y1: y + 10, y2: y + 10, stroke: "#e1e4e8" }));
    for (const [a, b] of openSpans(reports?.[i]?.moves ?? [], Math.min(Date.now(), t1))) {
      parts.push(node("rect", { x: x(a), y: y + 2, width: Math.max(1, x(b) - x(a)), height: 16, fill: "#d9534f", "fill-opacity": 0.16 }));
    }
    for (const e of log) {
      parts.push(node("line", { x1: x(e.t), x2: x(e.t), y1: y + 4, y2: y + 16, "stroke-width": 1.5,
        stroke: e.status === 200 ? "#2e7d32" : "#d9534f" }));
    }
    parts.push(node("text", { x: W - 2, y: y + 14, "font-size": 12, "text-anchor": "end", "font-weight": "bold" },
      String(within(log, run.from, run.from + run.ms))));
  });
  const axisY = top + 5 * rowH + 12;
  // Seconds since origin A went down.
  for (let s = Math.ceil((t0 - run.from) / 1000); run.from + s * 1000 <= t1; s++) {
    parts.push(node("text", { x: x(run.from + s * 1000), y: axisY, "font-size": 10, "text-anchor": "middle", fill: "#666" },
      `${s > 0 ? "+" : ""}${s} s`));
  }
  svg.replaceChildren(...parts);
}

/** Breaks origin A for the fleets (the server drives them) and follows the run until it is over. */
export async function edgeRun() {
  const button = $("#edge-button"), note = $("#edge-note"), out = $("#edge-summary");
  button.disabled = true;
  delete out.dataset.done;
  try {
    const res = await fetch("edge/run", { method: "POST" });
    const run = await res.json();
    if (!res.ok) { note.textContent = run.error; return; }
    const t0 = run.from - 1000, t1 = run.until;
    const ids = (group) => run.urls[group].map((u) => new URL(u).searchParams.get("id"));
    const poll = async () => {
      const [report, ...logs] = await Promise.all([
        fetch("edge/report").then((r) => r.json()),
        ...FLEETS.map(({ group }) => Promise.all(ids(group).map(async (id) => (await fetch(`${ORIGINS.a}/log?id=${id}`)).json()))),
      ]);
      FLEETS.forEach(({ group, svg, total }, k) => {
        drawFleet($(svg), run, logs[k], report?.[group], t0, t1);
        $(total).textContent = `${logs[k].reduce((n, log) => n + within(log, run.from, run.from + run.ms), 0)} requests in the outage`;
      });
      return { report, logs };
    };
    note.textContent = "running: origin A goes down in 1 s…";
    while (Date.now() < t1) {
      await poll();
      if (Date.now() >= run.from) note.textContent = Date.now() < run.from + run.ms ? "origin A is down…" : "origin A is back…";
      await sleep(250);
    }
    await sleep(300); // the last calls' answers
    const { report, logs } = await poll();
    const counts = logs.map((fleet) => fleet.map((log) => within(log, run.from, run.from + run.ms)));
    const [withCount, withoutCount] = counts.map((c) => c.reduce((a, b) => a + b, 0));
    const spread = (group) => {
      const opened = report[group].map((r) => r.moves.find((m) => m.to === "open")?.at).filter((t) => t !== undefined);
      return opened.length ? `${opened.length} opened within ${Math.max(...opened) - Math.min(...opened)} ms of each other` : "none opened";
    };
    const closed = (group) => report[group].filter((r) => r.state === "closed").length;
    const share = withoutCount / run.n;
    out.textContent = `During the ${run.ms / 1000} s outage origin A received ${withCount} requests from the ${run.n} isolates `
      + `sharing the object and ${withoutCount} from the ${run.n} without it (${(withoutCount / Math.max(1, withCount)).toFixed(1)}×); `
      + `one isolate alone sent ${share.toFixed(1)} on average. Breakers with the object: ${spread("shared")}, `
      + `${closed("shared")} closed after; without: ${spread("plain")}, ${closed("plain")} closed after.`;
    Object.assign(out.dataset, { withCount: String(withCount), withoutCount: String(withoutCount),
      withClosed: String(closed("shared")), withoutClosed: String(closed("plain")),
      withOpened: String(report.shared.filter((r) => r.moves.some((m) => m.to === "open")).length),
      withoutOpened: String(report.plain.filter((r) => r.moves.some((m) => m.to === "open")).length), done: "1" });
    note.textContent = "done: run it again at will.";
  } finally {
    button.disabled = false;
  }
}
