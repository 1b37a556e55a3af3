//! What follows an attempt, decided from facts alone: no registry, no clock, no I/O. The
//! loop ([`super::run`]) reads the facts, asks [`decide`], and applies what it returns,
//! budget tokens included (as tower's retry `Policy` answers "retry, and at what cost").

use super::MIN_ATTEMPT_MS;
use crate::backoff;
use crate::budget::RetryBudget;
use crate::classify::{AttemptOutcome, Verdict};
use crate::events::{GiveUpReason, RetryReason};
use crate::policy::Policy;

/// What the decision needs to know, read by the loop just before.
#[derive(Clone, Copy, Debug)]
pub struct Facts<'o> {
    /// What the attempt's outcome means for retrying ([`crate::classify::classify`]).
    pub verdict: Verdict,
    /// The attempt's outcome.
    pub outcome: &'o AttemptOutcome,
    /// Its `Retry-After`, parsed, in ms from when it ended (`None`: none, or unreadable).
    pub retry_after_ms: Option<f64>,
    /// The attempt's number, from 1.
    pub attempt: u32,
    /// The last backoff wait (for decorrelated jitter; `baseDelayMs` before the first).
    pub last_delay_ms: f64,
    /// Budget tokens the retry that led to this attempt cost (`None`: the first attempt,
    /// or no budget).
    pub spent: Option<u32>,
    /// When the attempt ended (monotonic ms).
    pub now: f64,
    /// When the whole call must be over (monotonic ms).
    pub deadline: f64,
    /// Until when the origin's breaker is open (`None`: not open).
    pub open_until: Option<f64>,
    /// Tokens left in the origin's budget, under the policy's capacity.
    pub tokens: u32,
    /// Whether the attempt failed to reach its origin while the runtime was offline.
    pub offline: bool,
    /// Whether an outbox keeps the call if it gets no definite answer (then an offline
    /// failure is retried as any is, for no tokens, and not waited on).
    pub kept: bool,
}

/// What to do after an attempt.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Next {
    /// The caller aborted, or its own setup failed the attempt: hand the output back, no event.
    Stop,
    /// An answer not worth retrying that is not a failure; give `refund` tokens back.
    Success {
        /// Tokens to give back (`None` without a budget).
        refund: Option<u32>,
    },
    /// A failure that will not be retried.
    GiveUp(GiveUpReason),
    /// Retry after `delay_ms`, paying `cost` tokens now (given back if it is not sent).
    Retry {
        /// The wait before the next attempt.
        delay_ms: f64,
        /// What made the attempt worth retrying.
        reason: RetryReason,
        /// Whether the wait came from `Retry-After`.
        retry_after: bool,
        /// Tokens the retry costs (`None` without a budget).
        cost: Option<u32>,
    },
    /// Retry once the network is back (or give up at the deadline): the attempt failed while
    /// the runtime was offline. No backoff and no budget tokens: the origin was not reached.
    Offline {
        /// What made the attempt worth retrying.
        reason: RetryReason,
    },
}

/// Decides what follows an attempt. `random` (for the jitter) is asked only when needed. A retry needs a safe request,
/// attempts left, an acceptable `Retry-After`, a wait that ends at least
/// [`MIN_ATTEMPT_MS`] before the deadline, a breaker that will not still be open when the
/// wait ends, and budget tokens, in that order.
pub fn decide(policy: &Policy, facts: &Facts, random: &dyn Fn() -> f64) -> Next {
    let budget = policy.retry_budget.as_ref();
    let (reason, retry) = match (facts.verdict, policy.retry.as_ref()) {
        (Verdict::Aborted, _) => return Next::Stop,
        (Verdict::Success, _) => {
            let refund = budget.map(|b| facts.spent.unwrap_or(b.no_retry_increment));
            return Next::Success { refund };
        }
        (Verdict::GiveUp(reason), _) => return Next::GiveUp(reason),
        (Verdict::Retry(reason), Some(retry)) => (reason, retry),
        // `classify` only says Retry when there is a retry policy.
        (Verdict::Retry(_), None) => return Next::GiveUp(GiveUpReason::NotRetryable),
    };
    if facts.attempt >= retry.max_attempts {
        return Next::GiveUp(GiveUpReason::MaxAttempts);
    }
    if facts.offline && !facts.kept {
        return Next::Offline { reason };
    }
    let header = facts.retry_after_ms;
    // Whether an attempt could still start after waiting `wait` ms.
    let in_time = |wait: f64| facts.deadline - (facts.now + wait) >= MIN_ATTEMPT_MS;
    let delay_ms = match header {
        Some(wait) if wait > f64::from(retry.max_retry_after_ms) || !in_time(wait) => {
            return Next::GiveUp(GiveUpReason::RetryAfterTooLong);
        }
        Some(wait) => wait,
        None => backoff::delay(
            retry.jitter,
            facts.attempt.saturating_sub(1),
            f64::from(retry.base_delay_ms),
            f64::from(retry.max_delay_ms),
            facts.last_delay_ms,
            random(),
        ),
    };
    if !in_time(delay_ms) {
        return Next::GiveUp(GiveUpReason::Deadline);
    }
    // Still open when the wait ends (e.g. this very attempt just opened it and the cooldown
    // is longer than the wait): the retry would be refused, so do not wait for it.
    let open_then = facts
        .open_until
        .is_some_and(|until| facts.now + delay_ms < until);
    if policy.breaker.is_some() && open_then {
        return Next::GiveUp(GiveUpReason::BreakerOpen);
    }
    // A retry the caller asked for costs what the built-in one after that outcome would.
    let priced = match (reason, facts.outcome) {
        (RetryReason::ShouldRetry, AttemptOutcome::Response { .. }) => RetryReason::Status,
        (RetryReason::ShouldRetry, _) => RetryReason::Network,
        (reason, _) => reason,
    };
    // A retry of a failure that never reached the origin (offline) costs nothing.
    let cost = budget
        .filter(|_| !facts.offline)
        .map(|b| RetryBudget::cost(b, priced));
    if cost.is_some_and(|cost| facts.tokens < cost) {
        return Next::GiveUp(GiveUpReason::Budget);
    }
    Next::Retry {
        delay_ms,
        reason,
        retry_after: header.is_some(),
        cost,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::PolicyInput;

    fn policy(v: serde_json::Value) -> Policy {
        let input: PolicyInput = serde_json::from_value(v).expect("json");
        Policy::from_input(&input).expect("valid")
    }

    fn facts<'o>(verdict: Verdict, outcome: &'o AttemptOutcome) -> Facts<'o> {
        Facts {
            verdict,
            outcome,
            retry_after_ms: None,
            attempt: 1,
            last_delay_ms: 100.0,
            spent: None,
            now: 0.0,
            deadline: 30_000.0,
            open_until: None,
            tokens: 500,
            offline: false,
            kept: false,
        }
    }

    const RESPONSE_503: AttemptOutcome = AttemptOutcome::Response {
        status: 503,
        retry_after: None,
        quota: None,
    };
    fn never() -> f64 {
        panic!("not needed for this decision")
    }

    #[test]
    fn a_success_refunds_what_its_retry_cost_or_the_increment() {
        let p = policy(serde_json::json!({}));
        let ok = AttemptOutcome::Response {
            status: 200,
            retry_after: None,
            quota: None,
        };
        let f = facts(Verdict::Success, &ok);
        assert_eq!(decide(&p, &f, &never), Next::Success { refund: Some(1) });
        let f = Facts {
            spent: Some(10),
            ..f
        };
        assert_eq!(decide(&p, &f, &never), Next::Success { refund: Some(10) });
        let no_budget = policy(serde_json::json!({"retryBudget": false}));
        assert_eq!(
            decide(&no_budget, &f, &never),
            Next::Success { refund: None }
        );
    }

    #[test]
    fn a_retry_costs_by_its_reason_and_needs_the_tokens() {
        let p = policy(serde_json::json!({"retry": {"jitter": "none"}}));
        let f = facts(Verdict::Retry(RetryReason::Status), &RESPONSE_503);
        assert_eq!(
            decide(&p, &f, &|| 0.5),
            Next::Retry {
                delay_ms: 100.0,
                reason: RetryReason::Status,
                retry_after: false,
                cost: Some(5)
            }
        );
        let timeout = AttemptOutcome::Timeout;
        let f = facts(Verdict::Retry(RetryReason::Timeout), &timeout);
        assert!(matches!(
            decide(&p, &f, &|| 0.5),
            Next::Retry { cost: Some(10), .. }
        ));
        let poor = Facts { tokens: 9, ..f };
        assert_eq!(
            decide(&p, &poor, &|| 0.5),
            Next::GiveUp(GiveUpReason::Budget)
        );
    }

    #[test]
    fn a_breaker_still_open_when_the_wait_ends_gives_up_at_once() {
        let p = policy(serde_json::json!({"retry": {"jitter": "none"}}));
        let f = Facts {
            open_until: Some(100.5),
            ..facts(Verdict::Retry(RetryReason::Status), &RESPONSE_503)
        };
        assert_eq!(
            decide(&p, &f, &|| 0.5),
            Next::GiveUp(GiveUpReason::BreakerOpen)
        );
        let f = Facts {
            open_until: Some(100.0),
            ..f
        };
        assert!(matches!(decide(&p, &f, &|| 0.5), Next::Retry { .. }));
    }

    #[test]
    fn retry_after_is_the_wait_and_no_random_is_drawn() {
        let p = policy(serde_json::json!({}));
        let later = AttemptOutcome::Response {
            status: 503,
            retry_after: Some("2".into()),
            quota: None,
        };
        let f = Facts {
            retry_after_ms: Some(2000.0),
            ..facts(Verdict::Retry(RetryReason::Status), &later)
        };
        assert_eq!(
            decide(&p, &f, &never),
            Next::Retry {
                delay_ms: 2000.0,
                reason: RetryReason::Status,
                retry_after: true,
                cost: Some(5)
            }
        );
        let near = Facts {
            deadline: 1000.0,
            ..f
        };
        assert_eq!(
            decide(&p, &near, &never),
            Next::GiveUp(GiveUpReason::RetryAfterTooLong)
        );
    }
}
