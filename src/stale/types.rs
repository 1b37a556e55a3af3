//! The TypeScript declarations of the `stale` option, merged into `Policy` (the full build's,
//! or the lean build's `false` only). tests/core_ts_defaults.rs reads this file with the others.

use wasm_bindgen::prelude::*;

/// The options of stale answers (feature `stale`): merged into `Policy` in the builds that have it.
#[cfg(feature = "stale")]
#[wasm_bindgen(typescript_custom_section)]
const STALE_TYPES: &str = r#"
export interface Policy {
  /**
   * Stale answers (RFC 5861 stale-if-error): a GET's or HEAD's answer a store may keep is kept; when
   * a later call for it fails (network error, timeout, open breaker, throttled, rate limit, deadline,
   * or a retryable status after its retries), a kept answer within its window is served instead, with
   * `Age` and the header `resilient-fetch-stale` (why: a StaleReason), a `stale` event and counter.
   * With the breaker open it is served without sending. docs/fallback.md.
   * @default false (off)
   */
  stale?: boolean | StalePolicy;
}

export interface StalePolicy {
  /** ms past its freshness an answer without its own stale-if-error is served (0..=capMs). @default 300000 (five minutes) */
  maxStaleMs?: number;
  /** ms past its freshness any answer is served at most, its own stale-if-error included (0..=2147483647). @default 86400000 (a day) */
  capMs?: number;
  /** The largest body kept, in bytes (0..=maxBytes, ..=67108864). @default 1048576 */
  maxBodyBytes?: number;
  /** Client only. Answers the in-memory store keeps at most (1..=100000). @default 500 */
  maxEntries?: number;
  /** Client only. Bytes of bodies the in-memory store keeps at most (1..=1073741824). @default 16777216 */
  maxBytes?: number;
  /**
   * Client only. true: the store serves one user, so answers to requests with Authorization or Cookie,
   * and answers marked private, are kept too. false: as the runtime's store is (a page's or a browser
   * worker's is private; a Worker's cache, a server's memory and a given store are shared).
   * @default false
   */
  private?: boolean;
  /** Client only. Where answers are kept. Default: the Cache API ("resilient-fetch") where the runtime has one, memory elsewhere. */
  store?: StaleStore;
}

/** A store of kept answers: each call is bounded (1 s at most, never past the call's deadline); a failure costs only the fallback. */
export interface StaleStore {
  get(key: string): Promise<Response | undefined> | Response | undefined;
  put(key: string, response: Response): Promise<void> | void;
  delete(key: string): Promise<unknown> | unknown;
}
"#;

/// `stale` in a build without `stale`: `false` (off) only.
#[cfg(not(feature = "stale"))]
#[wasm_bindgen(typescript_custom_section)]
const NO_STALE_TYPES: &str = r#"
export interface Policy {
  /** Not in this build: stale answers are in resilient-fetch/full. `false` (off) is accepted. */
  stale?: false;
}
"#;
