// The policy argument, read once into a plain copy the wasm reads.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files).

// ---- the policy argument: read once, in JS (getters and proxy traps run here,
// where what they throw is caught and rejects the call, as fetch does with its
// init), so the wasm reads a plain copy that cannot throw, recurse without end or
// hold anything but data; the function fields are handed over beside it.

// Policy fields are at most 3 levels deep (retry.retryOn[i]); deeper data is an error.
const MAX_DEPTH = 4;
const KINDS = "a number, string, boolean, array or plain object";

/**
 * Returns [plain copy without its functions, then the FUNCTIONS and the HELD, in their order]: each function field is undefined when absent, null when given as
 * null. Throws a TypeError naming the field for what no policy field takes: functions
 * (but those), symbols, bigints, cycles and deeper nesting.
 */
function readPolicy(policy) {
  if (typeof policy !== "object" || Array.isArray(policy)) throw new TypeError("policy must be an object");
  const functions = {};
  const plain = copyObject(policy, "", 1, [], functions);
  return [plain, ...FUNCTIONS.map((path) => functions[path]), ...HELD.map((path) => functions[path])];
}

// The policy fields that hold functions, taken out of the copy (in the schema's order).
const FUNCTIONS = ["retry.shouldRetry", "breaker.isFailure", "breaker.key", "outbox.onReplay", "onEvent", "fetch"];
// The policy fields that hold objects the client keeps as they are (in the schema's order).
const HELD = ["share.durableObject", "outbox.store", "stale.store"];

function copyObject(object, path, depth, ancestors, functions) {
  ancestors.push(object);
  const copy = {};
  for (const key of Object.keys(object)) {
    const at = path ? `${path}.${key}` : key;
    const value = object[key];
    if (FUNCTIONS.includes(at)) {
      if (value !== undefined && value !== null && typeof value !== "function") {
        throw new TypeError(`policy.${at} must be a function`);
      }
      functions[at] = value;
    } else if (HELD.includes(at)) {
      const methods = at === "outbox.store" ? ["put", "delete", "list"] : at === "stale.store" ? ["get", "put", "delete"] : ["idFromName", "get"];
      const what = methods.length > 2 ? `an object with ${methods[0]}, ${methods[1]} and ${methods[2]} methods`
        : "a Durable Object namespace (OriginHealth's binding)";
      if (value !== undefined && value !== null && !methods.every((m) => typeof value?.[m] === "function")) {
        throw new TypeError(`policy.${at} must be ${what}`);
      }
      functions[at] = value;
    } else {
      copy[key] = copyValue(value, at, depth, ancestors, functions);
    }
  }
  ancestors.pop();
  return copy;
}

function copyValue(value, path, depth, ancestors, functions) {
  switch (typeof value) {
    case "undefined":
    case "boolean":
    case "number":
    case "string":
      return value;
    case "object":
      if (value === null) return null;
      if (ancestors.includes(value)) throw new TypeError(`${path} must be ${KINDS} (got a reference back to itself)`);
      if (depth >= MAX_DEPTH) throw new TypeError(`${path} is nested deeper than any policy field`);
      if (Array.isArray(value)) {
        ancestors.push(value);
        const copy = Array.from(value, (item, i) => copyValue(item, `${path}[${i}]`, depth + 1, ancestors, functions));
        ancestors.pop();
        return copy;
      }
      return copyObject(value, path, depth + 1, ancestors, functions);
    default:
      throw new TypeError(`${path} must be ${KINDS} (got a ${typeof value})`);
  }
}

export { readPolicy };
