// The outbox's replays, one replayer per name, and what client.outbox may do.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files).
import { discardBody } from "../../js/hooks.js";
import { CLOSED, ask, later, TURNS, inTurn, judgeAge } from "./outbox.js";
import { call, stored, entries, find } from "./outbox-store.js";
import { JUDGED_DELIVERED, JUDGED_WAIT, JUDGED_REFUSED, JUDGED_EXPIRED, JUDGED_SEND, JUDGED_UNSENDABLE, REPLAY_STATUS_NO_ANSWER, REPLAY_STATUS_UNSENDABLE, TOLD_REPLAYED, TOLD_DELIVERED, TOLD_DEAD_LETTERED, TOLD_ROUND_ENDED, TOLD_NEXT_REPLAY, DEAD_N_EXPIRED, DEAD_N_INVALID } from "../../js/errors.js";

function exclusive(box, wait, work) {
  const { name } = box;
  if (TURNS.has(name) && !wait) return Promise.resolve(-1);
  const locks = globalThis.navigator?.locks;
  return inTurn(TURNS, name, () => (typeof locks?.request === "function"
    ? locks.request(`resilient-fetch-outbox/${name}`, wait ? {} : { ifAvailable: true }, (lock) => (lock ? work() : -1))
    : work()));
}

/**
 * Replays the waiting entries: resolves with `{ delivered, deadLettered, waiting }`. With
 * `wait` false, resolves with undefined at once when another replayer is at work (and tries
 * again on the timer).
 */
function outboxFlush(box, wait) {
  if (box.closed) return Promise.reject(CLOSED);
  return exclusive(box, wait, () => replayAll(box)).then((tally) => {
    if (tally !== -1) return tally;
    later(box, ask(box, "tell", TOLD_NEXT_REPLAY, "", "", 0));
    return undefined;
  });
}

/**
 * One replay: every origin's queue at once, each oldest first, stopping at an entry that must
 * wait. An entry the store could not read waits (the others go on); a list() that fails fails
 * the replay.
 */
async function replayAll(box) {
  const tally = { delivered: 0, deadLettered: 0, waiting: 0 };
  let ended = false;
  try {
    const [all, unreadable] = await stored(box).catch((e) => {
      throw new Error(`the outbox store's list() failed, nothing was replayed: ${e?.message ?? e}`, { cause: e });
    });
    tally.waiting += unreadable;
    await Promise.all(queues(all).map((queue) => replayQueue(box, queue, tally)));
    ended = true;
  } finally {
    // The next replay: soon after a failure, later while entries wait, none when all are done.
    if (!box.closed) later(box, ask(box, "tell", ended ? TOLD_ROUND_ENDED : TOLD_NEXT_REPLAY, "", "", tally.waiting));
  }
  return tally;
}

/** One origin's queue. */
async function replayQueue(box, queue, tally) {
  const { store } = box;
  for (let i = 0; i < queue.length; i++) {
    const entry = queue[i];
    const { id, origin } = entry;
    // Expired or to send; then delivered, wait, refused, or cannot be sent (JUDGED_).
    let verdict = judgeAge(box, entry);
    let status = REPLAY_STATUS_NO_ANSWER;
    if (verdict === JUDGED_SEND) {
      entry.attempts = (Number(entry.attempts) || 0) + 1;
      ask(box, "tell", TOLD_REPLAYED, origin, id, entry.attempts);
      status = await send(box, entry);
      verdict = status === REPLAY_STATUS_UNSENDABLE ? JUDGED_UNSENDABLE : ask(box, "judge", 0, status);
    }
    try {
      if (verdict === JUDGED_DELIVERED) {
        await call(store, "delete", id);
        tally.delivered++;
        ask(box, "tell", TOLD_DELIVERED, origin, id, status);
        continue;
      }
      if (verdict !== JUDGED_WAIT) {
        const [reason, n] = verdict === JUDGED_REFUSED ? ["status", status]
          : verdict === JUDGED_EXPIRED ? ["expired", DEAD_N_EXPIRED] : ["invalid", DEAD_N_INVALID];
        entry.deadLetter = { reason, at: Date.now(), ...(verdict === JUDGED_REFUSED ? { status } : {}) };
        await call(store, "put", entry);
        tally.deadLettered++;
        ask(box, "tell", TOLD_DEAD_LETTERED, origin, id, n);
        continue;
      }
      await call(store, "put", entry);
    } catch (e) {
      if (e === CLOSED) throw e;
      /* the store failed: the entry (still) waits */
    }
    tally.waiting += queue.length - i;
    return;
  }
}

/**
 * The waiting entries, one queue per origin (origins in the order of their oldest entry),
 * each oldest first: by the first attempt's time, then id.
 */
function queues(all) {
  const byOrigin = new Map();
  const at = (e) => Number(e.firstAttemptAt) || 0;
  const live = all.filter((e) => e.deadLetter == null)
    .sort((a, b) => at(a) - at(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (const e of live) {
    if (!byOrigin.has(e.origin)) byOrigin.set(e.origin, []);
    byOrigin.get(e.origin).push(e);
  }
  return [...byOrigin.values()];
}

/**
 * Sends an entry again (through `onReplay`, if given): its answer's status, REPLAY_STATUS_NO_ANSWER
 * (or `onReplay` failed: it waits), REPLAY_STATUS_UNSENDABLE if the stored request cannot be sent at all.
 */
async function send(box, entry) {
  let request;
  try {
    const { url, method, headers, body, credentials, redirect } = entry;
    request = new Request(url, { method, headers, body, credentials, redirect });
  } catch {
    return REPLAY_STATUS_UNSENDABLE;
  }
  try {
    if (typeof box.onReplay === "function") {
      // Bounded as a store call is: a hook that never answers must not hold the name's turn.
      request = await call(box, "onReplay", request);
      if (!(request instanceof Request)) return REPLAY_STATUS_UNSENDABLE;
    }
    const response = await ask(box, "send", request);
    discardBody(response);
    return response.status;
  } catch (e) {
    if (e === CLOSED) throw e;
    return REPLAY_STATUS_NO_ANSWER;
  }
}

/** The waiting entries (`dead` false) or the dead letters, as stored. */
async function outboxList(box, dead) {
  return (await entries(box)).filter((e) => (e.deadLetter != null) === dead);
}

/** Removes entry `id` (in the name's turn): false if there is none. */
function outboxDiscard(box, id) {
  return exclusive(box, true, async () => {
    if (!(await find(box, id))) return false;
    await call(box.store, "delete", id);
    return true;
  });
}

/** Makes entry `id` wait again (its age from now), in the name's turn, then replays: false if there is none. */
async function outboxRetry(box, id) {
  const found = await exclusive(box, true, async () => {
    const entry = await find(box, id);
    if (!entry) return false;
    delete entry.deadLetter;
    entry.firstAttemptAt = Date.now();
    await call(box.store, "put", entry);
    return true;
  });
  if (found) await outboxFlush(box, true);
  return found;
}

export { outboxFlush, outboxList, outboxDiscard, outboxRetry };
