//! The retry budget of one origin, in the style of the AWS SDKs' standard retry quota.
//!
//! Why a budget and not only `maxAttempts`: when an origin is down, every call retrying up
//! to its limit multiplies the load on it. A shared bucket of tokens that retries spend and
//! successes refill lets retries smooth over a few failures but dries up in an outage, so
//! calls fail fast instead of piling on.
//!
//! The capacity comes from the policy at each use (calls with different policies may
//! share an origin); the budget keeps the last one, for its stats. The bucket starts full.

use crate::events::RetryReason;
use crate::policy::{BudgetPolicy, Policy, defaults};
use crate::stage::{Admitted, Ask, Cx, Heard, Refusal, Stage};

/// Tokens for retries: never above the capacity, never below 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryBudget {
    /// Tokens below capacity. Kept instead of the tokens themselves so that the bucket
    /// starts full whatever the capacity, and a smaller capacity just caps it.
    spent: u32,
    /// The capacity last used on it.
    capacity: u32,
}

impl Default for RetryBudget {
    fn default() -> Self {
        RetryBudget {
            spent: 0,
            capacity: defaults::BUDGET_CAPACITY,
        }
    }
}

impl RetryBudget {
    /// A full budget.
    pub fn new() -> Self {
        Self::default()
    }

    /// Tokens left, counted against the capacity last used on it.
    pub fn tokens_now(&self) -> u32 {
        self.tokens(self.capacity)
    }

    /// What a retry for `reason` costs under `policy`.
    pub fn cost(policy: &BudgetPolicy, reason: RetryReason) -> u32 {
        match reason {
            RetryReason::Status => policy.retry_cost,
            RetryReason::Network | RetryReason::Timeout | RetryReason::ShouldRetry => {
                policy.timeout_retry_cost
            }
        }
    }

    /// Tokens left, for a bucket of `capacity`.
    pub fn tokens(&self, capacity: u32) -> u32 {
        capacity.saturating_sub(self.spent)
    }

    /// Takes `cost` tokens for a retry; false (and nothing taken) when too few are left.
    pub fn try_withdraw(&mut self, cost: u32, capacity: u32) -> bool {
        self.capacity = capacity;
        if self.tokens(capacity) < cost {
            return false;
        }
        // Below capacity after this: spent + cost ≤ capacity.
        self.spent = capacity.saturating_sub(self.tokens(capacity) - cost);
        true
    }

    /// Gives back `refund` tokens after a success, up to the capacity.
    pub fn on_success(&mut self, refund: u32, capacity: u32) {
        self.capacity = capacity;
        self.spent = self.spent.min(capacity).saturating_sub(refund);
    }
}

/// The budget as an origin stage: a hedge goes only with half the budget and a retry's cost
/// in it, and takes that cost (a retry's tokens are withdrawn when it is decided, not here).
impl Stage for RetryBudget {
    type Rules = ();

    fn rules(_: &Policy) {}

    #[inline(always)]
    fn check(&mut self, ask: Ask, cx: &mut Cx<'_>, _: &mut Admitted) -> Result<(), Refusal> {
        if let (Ask::Hedge, Some(b)) = (ask, &cx.policy.retry_budget) {
            let tokens = self.tokens(b.capacity);
            if !(crate::hedge::budget_allows(tokens, b.capacity) && tokens >= b.retry_cost) {
                return Err(Refusal::Quiet);
            }
        }
        Ok(())
    }

    #[inline(always)]
    fn take(&mut self, ask: Ask, cx: &mut Cx<'_>, _: &mut Admitted) {
        if let (Ask::Hedge, Some(b)) = (ask, &cx.policy.retry_budget) {
            // Cannot fail: checked above, and nothing ran in between.
            let _ = self.try_withdraw(b.retry_cost, b.capacity);
        }
    }

    #[inline(always)]
    fn heard(&mut self, _: &mut Heard<'_>, _: &()) {}

    fn reset(&mut self) {
        *self = RetryBudget::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn starts_full() {
        assert_eq!(RetryBudget::new().tokens(500), 500);
        assert_eq!(RetryBudget::new().tokens(7), 7);
    }

    #[test]
    fn withdrawals_take_tokens_until_too_few_are_left() {
        let mut b = RetryBudget::new();
        assert!(b.try_withdraw(5, 12));
        assert!(b.try_withdraw(5, 12));
        assert_eq!(b.tokens(12), 2);
        assert!(!b.try_withdraw(5, 12));
        assert_eq!(b.tokens(12), 2, "a refused withdrawal takes nothing");
        assert!(b.try_withdraw(2, 12));
        assert_eq!(b.tokens(12), 0);
        assert!(b.try_withdraw(0, 12), "a free retry is always allowed");
    }

    #[test]
    fn successes_refill_up_to_capacity() {
        let mut b = RetryBudget::new();
        assert!(b.try_withdraw(10, 20));
        b.on_success(4, 20);
        assert_eq!(b.tokens(20), 14);
        b.on_success(100, 20);
        assert_eq!(b.tokens(20), 20);
    }

    #[test]
    fn a_smaller_capacity_caps_the_tokens() {
        let mut b = RetryBudget::new();
        assert!(b.try_withdraw(5, 100));
        assert_eq!(b.tokens(50), 45);
        assert_eq!(b.tokens(3), 0);
        b.on_success(1, 3);
        assert_eq!(b.tokens(3), 1);
    }

    proptest! {
        #[test]
        fn tokens_stay_within_zero_and_capacity(
            ops in prop::collection::vec((any::<bool>(), 0u32..2000, 1u32..1000), 0..200),
        ) {
            let mut b = RetryBudget::new();
            for (withdraw, amount, capacity) in ops {
                let before = b.tokens(capacity);
                if withdraw {
                    let ok = b.try_withdraw(amount, capacity);
                    prop_assert_eq!(ok, amount <= before);
                    if ok {
                        prop_assert_eq!(b.tokens(capacity), before - amount);
                    }
                } else {
                    b.on_success(amount, capacity);
                    prop_assert_eq!(b.tokens(capacity), before.saturating_add(amount).min(capacity));
                }
                prop_assert!(b.tokens(capacity) <= capacity);
            }
        }
    }
}
