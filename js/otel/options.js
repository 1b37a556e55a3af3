// resilient-fetch/otel: instrument()'s options and the policy fields it reads, checked.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins js/otel/ into pkg-template/otel.js).

/** policy[name]: a function, or undefined (also for null); a TypeError naming the field otherwise. */
function functionField(policy, name) {
  const value = policy[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "function") throw new TypeError(`policy.${name} must be a function`);
  return value;
}

/** The options, checked: a TypeError names the field and what it takes. */
function readOptions(options) {
  if (options === null || typeof options !== "object") throw new TypeError("instrument(): options must be an object");
  const { tracerProvider, meterProvider, propagate = false, keepQuery = false, name } = options;
  if (tracerProvider !== undefined && typeof tracerProvider?.getTracer !== "function") {
    throw new TypeError("instrument(): options.tracerProvider must be a TracerProvider (with getTracer), or undefined for the global one");
  }
  if (meterProvider !== undefined && typeof meterProvider?.getMeter !== "function") {
    throw new TypeError("instrument(): options.meterProvider must be a MeterProvider (with getMeter), or undefined for the global one");
  }
  if (typeof propagate !== "boolean" && typeof propagate !== "function") {
    throw new TypeError("instrument(): options.propagate must be a boolean or a function (url) => boolean");
  }
  if (typeof keepQuery !== "boolean") throw new TypeError("instrument(): options.keepQuery must be a boolean");
  if (name !== undefined && (typeof name !== "string" || name.length < 1 || name.length > 64)) {
    throw new TypeError("instrument(): options.name must be a string of 1 to 64 characters");
  }
  return { tracerProvider, meterProvider, propagate, keepQuery, name };
}

export { functionField, readOptions };
