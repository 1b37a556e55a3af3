// A policy argument, read once, in JS: its getters and proxy traps run here,
// where what they throw is caught and rejects the call (as fetch does with its
// init), and the wasm decodes a plain copy (serde-wasm-bindgen) that cannot
// throw, recurse without end or hold anything but data.
// Keep the single `export { ... }` line last: the build turns it into
// `module.exports` for the CommonJS copy.

// Policy fields are at most 3 levels deep (retry.retryOn[i]); deeper data is an error.
const MAX_DEPTH = 4;
const KINDS = "a number, string, boolean, array or plain object";

/**
 * Returns [plain copy without onEvent, onEvent or undefined]. Throws a
 * TypeError naming the field for what no policy field takes: functions (but
 * onEvent), symbols, bigints, cycles and deeper nesting.
 */
function readPolicy(policy) {
  if (typeof policy !== "object" || Array.isArray(policy)) throw new TypeError("policy must be an object");
  const onEvent = policy.onEvent;
  if (onEvent !== undefined && onEvent !== null && typeof onEvent !== "function") {
    throw new TypeError("policy.onEvent must be a function");
  }
  return [copyObject(policy, "", 1, [], "onEvent"), onEvent ?? undefined];
}

function copyObject(object, path, depth, ancestors, skip) {
  ancestors.push(object);
  const copy = {};
  for (const key of Object.keys(object)) {
    if (key !== skip) copy[key] = copyValue(object[key], path ? `${path}.${key}` : key, depth, ancestors);
  }
  ancestors.pop();
  return copy;
}

function copyValue(value, path, depth, ancestors) {
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
        const copy = Array.from(value, (item, i) => copyValue(item, `${path}[${i}]`, depth + 1, ancestors));
        ancestors.pop();
        return copy;
      }
      return copyObject(value, path, depth + 1, ancestors, null);
    default:
      throw new TypeError(`${path} must be ${KINDS} (got a ${typeof value})`);
  }
}

export { readPolicy };
