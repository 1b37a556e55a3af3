// Cloudflare Workers (workerd, wrangler), the lean build: the worker entry (the wasm imported
// as a compiled module, as Workers require). The Durable Objects that share origin health and
// keep the outbox across isolates are in resilient-fetch/full, with those capabilities.
export * from "./worker.js";
export { default } from "./worker.js";
