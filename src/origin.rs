//! One origin's state: its breaker, retry budget, bulkhead, pacing, throttle, latency sample
//! and counters, as the registry keeps it per origin (`registry.rs` bounds and finds them;
//! `share.rs` says what peers learn of them).

use crate::breaker::Breaker;
use crate::budget::RetryBudget;
use crate::bulkhead::Bulkhead;
use crate::pacing::Pacer;
use crate::throttle::Throttle;

/// Counters of one origin.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OriginStats {
    /// Attempts sent.
    pub attempts: u64,
    /// Attempts that ended with a non-failure response.
    pub successes: u64,
    /// Attempts that failed (network error, timeout, 408, 429, 5xx).
    pub failures: u64,
    /// Attempts that were retries.
    pub retries: u64,
    /// Attempts the breaker refused.
    pub short_circuits: u64,
    /// Attempts that timed out (also counted in `failures`, unless the attempt's limit was
    /// what was left of the call's total deadline: such a timeout says nothing about the origin).
    pub timeouts: u64,
    /// Attempts on the wire now.
    pub in_flight: u32,
    /// Attempts not sent because the origin's rate-limit wait was too long for their call.
    pub rate_limited: u64,
    /// Attempts adaptive throttling refused locally.
    pub throttled: u64,
    /// Hedges sent (attempts beside one still in flight).
    pub hedges: u64,
    /// Calls a hedge answered first.
    pub hedge_wins: u64,
}

/// Everything kept for one origin.
#[derive(Debug, Default)]
pub struct OriginState {
    /// Its circuit breaker.
    pub breaker: Breaker,
    /// Its retry budget.
    pub budget: RetryBudget,
    /// Its bulkhead (shared with the permits out).
    pub bulkhead: Bulkhead,
    /// Its counters.
    pub stats: OriginStats,
    /// When it may be sent to (rate-limit quota, `Retry-After` holds).
    pub pacer: Pacer,
    /// Its adaptive throttle's counts.
    pub throttle: Throttle,
    /// Its recent attempt latencies (kept only while it is hedged).
    pub latency: crate::hedge::Latency,
    /// Calls waiting to retry on this origin (a backoff wait): they use it as much as an
    /// attempt in flight does, so their breaker history is not evicted under them.
    pub waiting: u32,
    /// Successes not yet told to the peers (`share`): told with the next failure.
    pub untold: u32,
}

impl OriginState {
    /// Whether no call uses the origin now: no attempt in flight, no call waiting to retry,
    /// no bulkhead slot held and no call queued for one.
    pub fn is_idle(&self) -> bool {
        self.stats.in_flight == 0
            && self.waiting == 0
            && self.bulkhead.active() == 0
            && self.bulkhead.queued() == 0
    }
}
