//! The shell's part of hedged reads (wasm only): the TypeScript declarations of the `hedge`
//! option, merged into `Policy` (the full build's, or the lean build's `false` only). Every
//! other declaration is in `src/wasm/types.rs`.

use wasm_bindgen::prelude::*;

/// The options of hedged reads (feature `hedge`): merged into `Policy` in the builds that have it.
#[cfg(feature = "hedge")]
#[wasm_bindgen(typescript_custom_section)]
const HEDGE_TYPES: &str = r#"
export interface Policy {
  /**
   * Hedged reads (GET, HEAD and OPTIONS without a body): if an attempt has not answered after the
   * hedge delay, one more is sent without cancelling it; the first definite answer wins and the
   * others are aborted. Paid from the retry budget (none below half of it); counts as attempts; takes
   * a free bulkhead slot of its own (none goes without one).
   * @default false (off)
   */
  hedge?: boolean | HedgePolicy;
}

export interface HedgePolicy {
  /** ms before a hedge (0..=2147483647), or "auto": the origin's recent p95 attempt latency within [minDelayMs, maxDelayMs]. @default "auto" */
  delayMs?: number | "auto";
  /** Hedges after the first attempt at most (1..=3). @default 1 */
  maxHedges?: number;
  /** The shortest "auto" delay in ms (0..=2147483647). @default 10 */
  minDelayMs?: number;
  /** The longest "auto" delay in ms, also its delay until the origin's latency is learnt (>= minDelayMs, ..=2147483647). @default 2000 */
  maxDelayMs?: number;
}
"#;

/// `hedge` in a build without `hedge`: `false` (off) only.
#[cfg(not(feature = "hedge"))]
#[wasm_bindgen(typescript_custom_section)]
const NO_HEDGE_TYPES: &str = r#"
export interface Policy {
  /** Not in this build: hedged reads is in resilient-fetch/full. `false` (off) is accepted. */
  hedge?: false;
}
"#;
