//! The validated policy: the top-level [`Policy`], its own fields' defaults, and every
//! default gathered in [`defaults`] (each section's written once, in its own file).

use crate::coalesce::Coalesce;
use crate::failover::FailoverPolicy;
use crate::hedge::HedgePolicy;
use crate::outbox::OutboxPolicy;
use crate::pacing::RateLimitPolicy;
use crate::policy::sections::breaker::BreakerPolicy;
use crate::policy::sections::bulkhead::BulkheadPolicy;
use crate::policy::sections::idempotency::IdempotencyKey;
use crate::policy::sections::retry::RetryPolicy;
use crate::policy::sections::retry_budget::BudgetPolicy;
use crate::resume::ResumePolicy;
use crate::sse::EventsPolicy;
use crate::throttle::ThrottlePolicy;

/// Every default of the policy, with the JS field it fills: the policy's own fields' here,
/// each section's written once in its section (`sections/<section>.rs` for the mission's,
/// `src/<feature>/` for a capability's) and gathered here.
pub mod defaults {
    /// Per-attempt timeout in ms (JS `timeoutMs`).
    pub const TIMEOUT_MS: u32 = 10_000;
    /// Whole-call deadline in ms, attempts, waits and reading the body included (JS `totalTimeoutMs`).
    pub const TOTAL_TIMEOUT_MS: u32 = 30_000;
    /// Longest wait for the next chunk of a response body in ms (JS `bodyTimeoutMs`).
    pub const BODY_TIMEOUT_MS: u32 = 10_000;

    /// Origins whose state is kept (JS `maxOrigins`).
    pub const MAX_ORIGINS: u32 = 1000;

    pub use crate::coalesce::defaults::*;
    pub use crate::hedge::defaults::*;
    pub use crate::outbox::defaults::*;
    pub use crate::pacing::defaults::*;
    pub use crate::policy::sections::breaker::defaults::*;
    pub use crate::policy::sections::bulkhead::defaults::*;
    pub use crate::policy::sections::idempotency::defaults::*;
    pub use crate::policy::sections::retry::defaults::*;
    pub use crate::policy::sections::retry_budget::defaults::*;
    pub use crate::resume::defaults::*;
    pub use crate::sse::defaults::*;
    pub use crate::stale::defaults::*;
    pub use crate::throttle::defaults::*;
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
    /// Pacing by rate-limit headers and origin-wide `Retry-After`; `None` turns it off (always,
    /// without pacing: [`crate::pacing`]'s stand-in cannot be made).
    pub rate_limit: Option<RateLimitPolicy>,
    /// Adaptive client-side throttling; `None` (the default) turns it off (always `None`
    /// without `throttle`: [`ThrottlePolicy`] is uninhabited there).
    pub throttle: Option<ThrottlePolicy>,
    /// Which idempotency key to send.
    pub idempotency_key: IdempotencyKey,
    /// Name of the idempotency key header.
    pub idempotency_header: String,
    /// How many origins the registry keeps.
    pub max_origins: u32,
    /// The name of the peers its origins' health is shared with (JS `share`), if any.
    pub share: Option<crate::share::ShareName>,
    /// Whether an identical GET or HEAD in flight on the client is joined, not sent again
    /// (always off, and nothing, in a build without `coalesce`).
    pub coalesce: Coalesce,
    /// Hedged reads; `None` sends one attempt at a time (always without `hedge`).
    pub hedge: Option<HedgePolicy>,
    /// The outbox; `None` (the default) keeps nothing (always, in a build without `outbox`).
    pub outbox: Option<OutboxPolicy>,
    /// Stale answers served when the origin fails; `None` (the default) keeps nothing
    /// (always, in a build without `stale`).
    pub stale: Option<crate::stale::StalePolicy>,
    /// Each origin's alternates, tried when its breaker is open or an attempt to it fails;
    /// `None` (the default) sends every attempt to the call's own origin (always, in a build
    /// without `failover`).
    pub failover: Option<FailoverPolicy>,
    /// Resumed downloads; `None` (the default) lets a broken body error (always, in a build
    /// without `resume`).
    pub resume: Option<ResumePolicy>,
    /// How `client.events()` streams reconnect (`events`); `None` (`events: false`): never
    /// (always, and nothing, in a build without `sse`). Plain calls ignore it.
    pub events: Option<EventsPolicy>,
}

impl Policy {
    /// The longest `Retry-After` the client honours, in ms (`retry.maxRetryAfterMs`, its
    /// default without retries): it also bounds an origin-wide hold, its own or a peer's,
    /// and how far ahead a quota's reset is believed ([`crate::pacing`]).
    pub fn max_retry_after_ms(&self) -> u32 {
        self.retry
            .as_ref()
            .map_or(defaults::MAX_RETRY_AFTER_MS, |r| r.max_retry_after_ms)
    }
}

impl Policy {
    /// Whether attempts are paced by the origin's rate-limit headers and holds (`rateLimit`;
    /// never without pacing).
    pub fn paced(&self) -> bool {
        self.rate_limit.is_some()
    }

    /// The longest the origin's pacing may make a call wait before an attempt, in ms
    /// (`rateLimit.maxWaitMs`; 0 without pacing).
    pub fn max_wait_ms(&self) -> u32 {
        self.rate_limit
            .as_ref()
            .map_or(0, RateLimitPolicy::max_wait)
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
            rate_limit: crate::pacing::default_policy(),
            throttle: crate::throttle::default_policy(),
            idempotency_key: defaults::IDEMPOTENCY_KEY,
            idempotency_header: defaults::IDEMPOTENCY_HEADER.to_owned(),
            max_origins: defaults::MAX_ORIGINS,
            share: None,
            coalesce: crate::coalesce::DEFAULT,
            hedge: crate::hedge::initial(),
            outbox: OutboxPolicy::by_default(),
            stale: crate::stale::initial(),
            failover: crate::failover::initial(),
            resume: crate::resume::initial(),
            events: crate::sse::initial(),
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
                window: Window::Time(30_000),
                slow: None,
            }
        );
        assert_eq!(
            b.max_cooldown_ms, b.cooldown_ms,
            "a cooldown grows only when asked"
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
