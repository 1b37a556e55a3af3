// Cloudflare Workers (workerd, wrangler): the worker entry (the wasm imported as a compiled
// module, as Workers require), and the Durable Objects that share origin health and keep
// the outbox across isolates (edge.js; it imports cloudflare:workers, which only Workers have).
export * from "./worker.js";
export { default } from "./worker.js";
export { OriginHealth, DurableOutbox, durableOutbox } from "./edge.js";
