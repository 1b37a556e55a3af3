// The policy form: read, shown, and checked with the library itself.
import { ResilientClient } from "resilient-fetch";
import { $, el } from "./page.js";

// ---------------------------------------------------------------- policy
export function readPolicy() {
  const f = new FormData($("#policy-form"));
  const n = (k) => Number(f.get(k));
  return {
    timeoutMs: n("timeoutMs"),
    totalTimeoutMs: n("totalTimeoutMs"),
    retry: { maxAttempts: n("maxAttempts"), baseDelayMs: n("baseDelayMs"), maxDelayMs: n("maxDelayMs"), jitter: f.get("jitter") },
    breaker: { failureThreshold: n("failureThreshold"), cooldownMs: n("cooldownMs") },
    retryBudget: f.get("budget") === "on",
    idempotencyKey: f.get("idempotency") === "on",
  };
}

/** The library's error for `policy`, or null when it takes it. */
function policyError(policy) {
  try {
    new ResilientClient(policy).free();
    return null;
  } catch (e) {
    return `${e.name}: ${e.message}`;
  }
}

/**
 * Shows the policy and checks it with the library itself (invalid values name the field). The
 * library stops at the first bad field, so each field is also checked alone: every bad one is
 * listed (a rule between two fields, such as maxDelayMs ≥ baseDelayMs, shows with the whole).
 */
export function showPolicy() {
  const policy = readPolicy();
  $("#policy-json").textContent = JSON.stringify(policy, null, 1);
  const box = $("#policy-error");
  if (policyError(policy) === null) {
    box.hidden = true;
    return policy;
  }
  const alone = Object.entries(policy).flatMap(([k, v]) => (v !== null && typeof v === "object"
    ? Object.entries(v).map(([k2, v2]) => ({ [k]: { [k2]: v2 } }))
    : [{ [k]: v }]));
  const errors = [...new Set(alone.map(policyError).filter((e) => e !== null))];
  if (errors.length === 0) errors.push(policyError(policy));
  box.hidden = false;
  box.replaceChildren(...errors.map((e) => el("span", { class: "policy-error" }, e, el("br"))));
  box.dataset.count = String(errors.length);
  return null;
}
