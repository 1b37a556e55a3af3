// Where automatic keys may go under CORS.
// Keep the single `export { ... }` line last (scripts/join-js.mjs joins the concern files).

// ---- where keys may go. In a browser page or worker a header that is not
// CORS-safelisted makes a cross-origin request need a preflight the server may
// refuse: automatic keys go to the page's own origin only. Server runtimes
// (Node, Deno, Workers) have no CORS.
let PAGE_ORIGIN;

/** Whether a request to `origin` is cross-origin under CORS (false outside browsers). */
function crossOrigin(origin) {
  if (PAGE_ORIGIN === undefined) {
    const location = globalThis.location;
    const browser = typeof globalThis.Deno === "undefined" && typeof location === "object" && location !== null &&
      (typeof globalThis.document === "object" || typeof globalThis.importScripts === "function" ||
        typeof globalThis.WorkerGlobalScope === "function");
    PAGE_ORIGIN = browser ? String(location.origin) : null;
  }
  return PAGE_ORIGIN !== null && origin !== PAGE_ORIGIN;
}

export { crossOrigin };
