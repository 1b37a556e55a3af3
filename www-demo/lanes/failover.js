// The failover lane: a backup origin while the primary is down, against stub origins in the page
// (nothing leaves it).
import { ResilientClient } from "resilient-fetch";
import { $, el, lane, sleep } from "./page.js";

const PRIMARY = "https://primary.invalid";
const BACKUP = "https://backup.invalid";
const CALLS = 60;

/**
 * A stub of two origins: each request is answered by the origin its URL names, with that origin's
 * name as the body, after 5 ms; the primary answers 503 while `down()` says so. `sent` counts the
 * requests each origin got.
 */
function origins(down) {
  const sent = { primary: 0, backup: 0 };
  const fetch = (input, init) => new Promise((resolve, reject) => {
    const name = new Request(input, init).url.startsWith(PRIMARY) ? "primary" : "backup";
    sent[name]++;
    const status = name === "primary" && down() ? 503 : 200;
    const timer = setTimeout(() => resolve(new Response(name, { status })), 5);
    init.signal.addEventListener("abort", () => { clearTimeout(timer); reject(init.signal.reason); });
  });
  return { fetch, sent };
}

/**
 * 60 GETs to the primary, 25 ms apart; it answers 503 from the 10th to the 35th call. Without
 * failover the caller sees the 503s once retries are spent; with `failover`, a retry goes to the
 * backup, the primary's breaker opens and calls go to the backup at once, and once the primary is
 * back and its cooldown (300 ms) has passed, a probe finds it healthy and calls return to it.
 */
async function failoverRun(withFailover) {
  let n = 0;
  const stub = origins(() => n >= 10 && n < 35);
  const client = new ResilientClient({
    fetch: stub.fetch,
    retry: { baseDelayMs: 5 },
    breaker: { mode: "consecutive", failureThreshold: 2, cooldownMs: 300 },
    ...(withFailover ? { failover: { [PRIMARY]: [BACKUP] } } : {}),
  });
  const answers = [];
  try {
    for (; n < CALLS; n++) {
      answers.push(await client.fetch(`${PRIMARY}/items`)
        .then(async (r) => (r.ok ? r.text() : `error ${r.status}`), (e) => `error ${e.name}`));
      await sleep(25);
    }
  } finally {
    client.free();
  }
  return { answers, sent: stub.sent, errors: answers.filter((a) => a.startsWith("error")).length };
}

/** Each call of a run as a cell: which origin answered it, or an error. */
function strip(answers) {
  return el("div", { class: "failover-strip" }, ...answers.map((a) => el("span", {
    class: a.startsWith("error") ? "fail" : a === "backup" ? "backup" : "ok", title: a,
  })));
}

export async function compareFailover() {
  await lane($("#failover-button"), async () => {
    const plain = await failoverRun(false);
    const over = await failoverRun(true);
    $("#failover-strips").replaceChildren(
      el("p", {}, "without failover"), strip(plain.answers),
      el("p", {}, "with failover"), strip(over.answers),
    );
    const backup = over.answers.filter((a) => a === "backup").length;
    const back = over.answers.slice(40).includes("primary");
    $("#failover-summary").textContent = `Primary down for 25 of ${CALLS} calls. Without failover: ${plain.errors} `
      + `errors reached the caller. With failover: ${over.errors} errors; the backup answered ${backup} calls `
      + `(${over.sent.backup} requests), and ${back ? "calls came back to the primary once its breaker closed" : "calls stayed on the backup"}.`;
    Object.assign($("#failover-summary").dataset, {
      plainErrors: String(plain.errors), errors: String(over.errors), back: String(back), backup: String(backup),
    });
  });
}
