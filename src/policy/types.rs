//! The validated policy: its types, and every default written once.

use crate::policy::sections::breaker::BreakerPolicy;
use crate::policy::sections::bulkhead::BulkheadPolicy;
use crate::policy::sections::rate_limit::RateLimitPolicy;
use crate::policy::sections::retry::RetryPolicy;
use crate::policy::sections::retry_budget::BudgetPolicy;
use crate::policy::sections::throttle::ThrottlePolicy;

/// Every default of the policy, written once, with the JS field it fills.
pub mod defaults {
    use super::IdempotencyKey;

    /// Per-attempt timeout in ms (JS `timeoutMs`).
    pub const TIMEOUT_MS: u32 = 10_000;
    /// Whole-call deadline in ms, attempts, waits and reading the body included (JS `totalTimeoutMs`).
    pub const TOTAL_TIMEOUT_MS: u32 = 30_000;
    /// Longest wait for the next chunk of a response body in ms (JS `bodyTimeoutMs`).
    pub const BODY_TIMEOUT_MS: u32 = 10_000;

    /// Automatic keys for POST and PATCH, to the page's own origin only in browsers (JS `idempotencyKey`).
    pub const IDEMPOTENCY_KEY: IdempotencyKey = IdempotencyKey::Auto;
    /// Header that carries the key (JS `idempotencyHeader`).
    pub const IDEMPOTENCY_HEADER: &str = "Idempotency-Key";
    /// Origins whose state is kept (JS `maxOrigins`).
    pub const MAX_ORIGINS: u32 = 1000;
    /// Hedged reads are off unless the policy sets `hedge`.
    pub const HEDGE_ENABLED: bool = false;
    /// Hedges after the first attempt at most (JS `hedge.maxHedges`).
    pub const MAX_HEDGES: u32 = 1;
    /// The shortest hedge delay `"auto"` uses, in ms (JS `hedge.minDelayMs`).
    pub const HEDGE_MIN_DELAY_MS: u32 = 10;
    /// The longest hedge delay `"auto"` uses, and its delay until it has learnt the
    /// origin's latency, in ms (JS `hedge.maxDelayMs`; Polly's default hedging delay).
    pub const HEDGE_MAX_DELAY_MS: u32 = 2000;

    /// Identical GETs and HEADs in flight on one client are sent once (JS `coalesce`).
    pub const COALESCE: bool = false;

    /// Keyed writes without a definite answer are kept and delivered later (JS `outbox`).
    pub const OUTBOX_ENABLED: bool = false;
    /// The outbox's name: clients of one name share its entries (JS `outbox.name`).
    pub const OUTBOX_NAME: &str = "default";
    /// Entries kept at most, dead letters included (JS `outbox.maxEntries`).
    pub const OUTBOX_MAX_ENTRIES: u32 = 1000;
    /// How long an entry is replayed before it is a dead letter, in ms: a day, the
    /// shortest time servers such as Stripe's keep a key (JS `outbox.maxAgeMs`).
    pub const OUTBOX_MAX_AGE_MS: u32 = 86_400_000;
    /// The largest body kept, in bytes (JS `outbox.maxBodyBytes`).
    pub const OUTBOX_MAX_BODY_BYTES: u32 = 1_048_576;
    pub use crate::policy::sections::breaker::defaults::*;
    pub use crate::policy::sections::bulkhead::defaults::*;
    pub use crate::policy::sections::rate_limit::defaults::*;
    pub use crate::policy::sections::retry::defaults::*;
    pub use crate::policy::sections::retry_budget::defaults::*;
    pub use crate::policy::sections::throttle::defaults::*;
}

/// A validated policy: every field concrete, every value in range.
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    /// Per-attempt timeout in ms.
    pub timeout_ms: u32,
    /// Whole-call deadline in ms.
    pub total_timeout_ms: u32,
    /// Longest wait for a body chunk in ms; `None` (`bodyTimeoutMs: false`) leaves the body
    /// unbounded by this and by the deadline (streams).
    pub body_timeout_ms: Option<u32>,
    /// Retry settings; `None` makes one attempt only.
    pub retry: Option<RetryPolicy>,
    /// Circuit breaker settings; `None` turns the breaker off.
    pub breaker: Option<BreakerPolicy>,
    /// Retry budget settings; `None` turns the budget off.
    pub retry_budget: Option<BudgetPolicy>,
    /// Bulkhead settings; `None` turns the bulkhead off.
    pub bulkhead: Option<BulkheadPolicy>,
    /// Pacing by rate-limit headers and origin-wide `Retry-After`; `None` turns it off.
    pub rate_limit: Option<RateLimitPolicy>,
    /// Adaptive client-side throttling; `None` (the default) turns it off.
    pub throttle: Option<ThrottlePolicy>,
    /// Which idempotency key to send.
    pub idempotency_key: IdempotencyKey,
    /// Name of the idempotency key header.
    pub idempotency_header: String,
    /// How many origins the registry keeps.
    pub max_origins: u32,
    /// The name of the peers its origins' health is shared with (JS `share`), if any.
    pub share: Option<String>,
    /// Whether an identical GET or HEAD in flight on the client is joined, not sent again.
    pub coalesce: bool,
    /// Hedged reads; `None` sends one attempt at a time.
    pub hedge: Option<HedgePolicy>,
    /// The outbox; `None` (the default) keeps nothing.
    pub outbox: Option<OutboxPolicy>,
}

/// Outbox settings (see [`crate::outbox`]).
#[derive(Clone, Debug, PartialEq)]
pub struct OutboxPolicy {
    /// Its name (1 to 64 characters): the store and the replay lock are per name.
    pub name: String,
    /// Entries kept at most (1..=100000).
    pub max_entries: u32,
    /// How long an entry is replayed before it is a dead letter, in ms.
    pub max_age_ms: u32,
    /// The largest body kept, in bytes (0..=67108864).
    pub max_body_bytes: u32,
}

/// When a hedge goes: after a fixed delay, or the origin's recent p95 of attempt latency.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HedgeDelay {
    /// `"auto"`: the origin's p95, within `[min_delay_ms, max_delay_ms]`.
    Auto,
    /// This many ms.
    Fixed(u32),
}

/// Hedging settings (GET, HEAD and OPTIONS without a body only).
#[derive(Clone, Debug, PartialEq)]
pub struct HedgePolicy {
    /// When a hedge goes.
    pub delay: HedgeDelay,
    /// Hedges after the first attempt at most (1..=3).
    pub max_hedges: u32,
    /// The shortest `"auto"` delay, in ms.
    pub min_delay_ms: u32,
    /// The longest `"auto"` delay (and its delay before it has learnt), in ms.
    pub max_delay_ms: u32,
}

/// Which idempotency key a call sends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IdempotencyKey {
    /// No key (`false`).
    Off,
    /// The default: a fresh UUID for POST and PATCH, where CORS lets it go (in a browser,
    /// to the page's own origin only).
    Auto,
    /// A fresh UUID for POST and PATCH, cross-origin too (`true`, given explicitly).
    On,
    /// This key, for any method (a string).
    Fixed(String),
}

impl Policy {
    /// The longest `Retry-After` the client honours, in ms (`retry.maxRetryAfterMs`, its
    /// default without retries): it also bounds an origin-wide hold, its own or a peer's.
    pub fn max_retry_after_ms(&self) -> u32 {
        self.retry
            .as_ref()
            .map_or(defaults::MAX_RETRY_AFTER_MS, |r| r.max_retry_after_ms)
    }
}

impl Policy {
    /// The outbox settings `outbox: true` gives.
    pub fn default_outbox() -> Option<OutboxPolicy> {
        Some(OutboxPolicy {
            name: defaults::OUTBOX_NAME.to_owned(),
            max_entries: defaults::OUTBOX_MAX_ENTRIES,
            max_age_ms: defaults::OUTBOX_MAX_AGE_MS,
            max_body_bytes: defaults::OUTBOX_MAX_BODY_BYTES,
        })
    }
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            timeout_ms: defaults::TIMEOUT_MS,
            total_timeout_ms: defaults::TOTAL_TIMEOUT_MS,
            body_timeout_ms: Some(defaults::BODY_TIMEOUT_MS),
            retry: defaults::RETRY_ENABLED.then(RetryPolicy::default),
            breaker: defaults::BREAKER_ENABLED.then(BreakerPolicy::default),
            retry_budget: defaults::RETRY_BUDGET_ENABLED.then(BudgetPolicy::default),
            bulkhead: defaults::BULKHEAD_ENABLED.then(BulkheadPolicy::default),
            rate_limit: defaults::RATE_LIMIT_ENABLED.then(RateLimitPolicy::default),
            throttle: defaults::THROTTLE_ENABLED.then(ThrottlePolicy::default),
            idempotency_key: defaults::IDEMPOTENCY_KEY,
            idempotency_header: defaults::IDEMPOTENCY_HEADER.to_owned(),
            max_origins: defaults::MAX_ORIGINS,
            share: None,
            coalesce: defaults::COALESCE,
            hedge: defaults::HEDGE_ENABLED.then_some(HedgePolicy {
                delay: HedgeDelay::Auto,
                max_hedges: defaults::MAX_HEDGES,
                min_delay_ms: defaults::HEDGE_MIN_DELAY_MS,
                max_delay_ms: defaults::HEDGE_MAX_DELAY_MS,
            }),
            outbox: Policy::default_outbox().filter(|_| defaults::OUTBOX_ENABLED),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;
    use crate::backoff::Jitter;

    use crate::policy::*;
    use serde_json::json;

    #[test]
    fn empty_and_null_policies_are_the_defaults() {
        assert_eq!(parse(json!({})), Ok(Policy::default()));
        assert_eq!(parse(json!(null)), Ok(Policy::default()));
        assert_eq!(
            Policy::from_input(&PolicyInput::default()),
            Ok(Policy::default())
        );
    }

    #[test]
    fn defaults_are_the_documented_values() {
        let p = Policy::default();
        assert_eq!((p.timeout_ms, p.total_timeout_ms), (10_000, 30_000));
        assert_eq!(p.body_timeout_ms, Some(10_000));
        let r = p.retry.expect("retry on by default");
        assert_eq!(
            (r.max_attempts, r.base_delay_ms, r.max_delay_ms),
            (3, 100, 10_000)
        );
        assert_eq!(r.jitter, Jitter::Full);
        assert_eq!(r.retry_on, vec![408, 429, 500, 502, 503, 504]);
        assert_eq!(r.max_retry_after_ms, 30_000);
        let b = p.breaker.expect("breaker on by default");
        assert_eq!(b.mode(), BreakerMode::FailureRate);
        assert_eq!((b.cooldown_ms, b.half_open_max_calls), (5_000, 1));
        assert_eq!(
            b.trip,
            TripRule::FailureRate {
                threshold: 0.5,
                minimum_calls: 10,
                window: Window::Time(30_000)
            }
        );
        // The consecutive mode's and the count window's defaults, when asked for.
        assert_eq!(
            (defaults::FAILURE_THRESHOLD, defaults::WINDOW_SIZE),
            (5, 20)
        );
        let g = p.retry_budget.expect("budget on by default");
        assert_eq!(
            (
                g.capacity,
                g.retry_cost,
                g.timeout_retry_cost,
                g.no_retry_increment
            ),
            (500, 5, 10, 1)
        );
        assert_eq!(p.bulkhead, None);
        assert_eq!(
            BulkheadPolicy::default(),
            BulkheadPolicy {
                max_concurrent: 10,
                max_queue: 0
            }
        );
        assert_eq!(p.idempotency_key, IdempotencyKey::Auto);
        assert_eq!(p.idempotency_header, "Idempotency-Key");
        assert_eq!(p.max_origins, 1000);
    }

    #[test]
    fn true_means_defaults_and_false_means_off() {
        let p =
            parse(json!({"retry": true, "breaker": false, "retryBudget": false, "bulkhead": true}))
                .expect("valid");
        assert_eq!(p.retry, Some(RetryPolicy::default()));
        assert_eq!(p.breaker, None);
        assert_eq!(p.retry_budget, None);
        assert_eq!(p.bulkhead, Some(BulkheadPolicy::default()));
    }
}
