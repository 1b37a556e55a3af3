// resilient-fetch/otel: what the spans say of a call's request (its method and URL, as fetch
// reads them), and what they must never say (credentials, redacted).
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins js/otel/ into pkg-template/otel.js).
import { METHOD, METHOD_ORIGINAL, URL_FULL, ADDRESS, PORT, STANDARD_METHODS, KNOWN, SECRET_PARAMS, SECRET_HEADERS } from "./names.js";

/**
 * What the spans say of a call's request: the method and URL as fetch reads them, or null
 * for a URL that is no server's (data:, blob:) or arguments fetch will refuse (the call then
 * rejects as it would uninstrumented). The URL keeps no query (unless `keepQuery`, with the
 * signatures OpenTelemetry lists redacted), no fragment and no credentials.
 */
function targetOf(input, init, keepQuery) {
  const isRequest = typeof input === "object" && input !== null && Object.prototype.toString.call(input) === "[object Request]";
  const given = init?.method ?? (isRequest ? input.method : undefined) ?? "GET";
  if (typeof given !== "string") return null;
  const upper = given.toUpperCase();
  const method = STANDARD_METHODS.includes(upper) ? upper : KNOWN.includes(given) ? given : "_OTHER";
  const base = typeof location === "object" && location !== null ? String(location.href) : undefined;
  let url;
  try {
    url = new URL(isRequest ? input.url : String(input), base);
  } catch {
    return null;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  const credentials = url.username !== "" || url.password !== "" ? "REDACTED:REDACTED@" : "";
  let query = "";
  if (keepQuery && url.search !== "") {
    const params = new URLSearchParams(url.search);
    for (const name of SECRET_PARAMS) if (params.has(name)) params.set(name, "REDACTED");
    query = "?" + params.toString();
  }
  const full = `${url.protocol}//${credentials}${url.host}${url.pathname}${query}`;
  const sent = STANDARD_METHODS.includes(upper) ? upper : given;
  const attributes = {
    [METHOD]: method,
    [URL_FULL]: full,
    [ADDRESS]: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    [PORT]: url.port !== "" ? Number(url.port) : url.protocol === "https:" ? 443 : 80,
  };
  // fetch sends the normalized methods upper-cased, any other as given.
  if (method === "_OTHER") attributes[METHOD_ORIGINAL] = given;
  return {
    origin: url.origin, href: url.href, path: url.pathname + query, sent, attributes, spanMethod: method === "_OTHER" ? "HTTP" : method,
    secrets: secretsOf(url, input, init, isRequest),
  };
}

/**
 * The credentials of a call: its URL's userinfo, and the values of its Authorization, Cookie and
 * Proxy-Authorization headers (from init, else the Request), as fetch would send them.
 */
function secretsOf(url, input, init, isRequest) {
  const out = [];
  for (const part of [url.username, url.password]) {
    if (part !== "") out.push(part, safely(() => decodeURIComponent(part)));
  }
  const headers = init?.headers !== undefined ? init.headers : isRequest ? input.headers : undefined;
  const entries = safely(() => typeof headers?.[Symbol.iterator] === "function" ? [...headers]
    : typeof headers === "object" && headers !== null ? Object.entries(headers) : []) ?? [];
  for (const entry of entries) {
    const [name, value] = safely(() => [String(entry[0]).toLowerCase(), String(entry[1])]) ?? [];
    if (!SECRET_HEADERS.includes(name)) continue;
    // The value, and its words and cookie values: a platform's message may quote the value
    // with a control character replaced, or one cookie of several.
    out.push(value);
    for (const word of value.split(/[\s\x00-\x1f;,]+/)) out.push(word, word.slice(word.indexOf("=") + 1));
  }
  // A value this short stands in too many words to be cut out of a message; in a URL's
  // userinfo it is cut out anyway. The longest first, so none is left half cut.
  return [...new Set(out)].filter((v) => typeof v === "string" && v.length >= 3).sort((a, b) => b.length - a.length);
}

/**
 * `text` without credentials: every URL's userinfo as REDACTED:REDACTED (up to the last `@`
 * before its path, as the URL parser reads it), and each of `secrets` as REDACTED.
 */
function redact(text, secrets = []) {
  let out = text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/?#\s]*@/gi, "$1REDACTED:REDACTED@");
  for (const secret of secrets) out = out.split(secret).join("REDACTED");
  return out;
}

/** error.type of a call that failed: the error's name (TimeoutError, CircuitOpenError, AbortError...), else _OTHER. */
function errorType(error) {
  const name = typeof error === "object" && error !== null ? safely(() => error.name) : undefined;
  return typeof name === "string" && /^[A-Za-z][A-Za-z0-9_]{0,63}$/.test(name) ? name : "_OTHER";
}

function safely(f) {
  try {
    return f();
  } catch {
    return undefined;
  }
}

/**
 * The attributes of an attempt sent to `origin`, an alternate origin (`failover`): the call's, with
 * url.full, server.address and server.port naming that origin (the same path and query).
 */
function atOrigin(target, origin) {
  const url = safely(() => new URL(origin));
  if (url === undefined) return { ...target.attributes };
  return {
    ...target.attributes,
    [URL_FULL]: `${url.protocol}//${url.host}${target.path}`,
    [ADDRESS]: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    [PORT]: url.port !== "" ? Number(url.port) : url.protocol === "https:" ? 443 : 80,
  };
}

export { targetOf, atOrigin, redact, errorType, safely };
