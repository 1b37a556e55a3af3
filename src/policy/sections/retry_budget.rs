//! `retryBudget`: the tokens retries spend, per origin, so that retries stay a small share of the
//! calls when an origin fails (see [`crate::budget`]).

use crate::policy::messages::int_range;
use crate::policy::reader::{Check, Rows};
use crate::policy::value::{Map, Value};

/// The `retryBudget` defaults, each written once ([`crate::policy::defaults`] holds them all).
pub mod defaults {
    /// The retry budget is on unless the policy says `retryBudget: false`.
    pub const RETRY_BUDGET_ENABLED: bool = true;
    /// Tokens in a full budget (JS `retryBudget.capacity`).
    pub const BUDGET_CAPACITY: u32 = 500;
    /// Tokens a retry after an error status costs (JS `retryBudget.retryCost`).
    pub const RETRY_COST: u32 = 5;
    /// Tokens a retry after a network error or timeout costs (JS `retryBudget.timeoutRetryCost`).
    pub const TIMEOUT_RETRY_COST: u32 = 10;
    /// Tokens a first-attempt success gives back (JS `retryBudget.noRetryIncrement`).
    pub const NO_RETRY_INCREMENT: u32 = 1;
}

/// Retry budget settings (tokens).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BudgetPolicy {
    /// Tokens in a full budget.
    pub capacity: u32,
    /// Cost of a retry after an error status.
    pub retry_cost: u32,
    /// Cost of a retry after a network error or timeout.
    pub timeout_retry_cost: u32,
    /// Tokens a first-attempt success gives back.
    pub no_retry_increment: u32,
}

impl Default for BudgetPolicy {
    fn default() -> Self {
        BudgetPolicy {
            capacity: defaults::BUDGET_CAPACITY,
            retry_cost: defaults::RETRY_COST,
            timeout_retry_cost: defaults::TIMEOUT_RETRY_COST,
            no_retry_increment: defaults::NO_RETRY_INCREMENT,
        }
    }
}

pub(in crate::policy) fn budget_policy<R: Rows>(c: &mut Check<R>, map: &Map) -> BudgetPolicy {
    let o = c.object(map, "retryBudget");
    let capacity = c.int(&o, "capacity");
    let mut share = |key: &str| -> u32 {
        let n = c.int(&o, key);
        if n > capacity {
            c.fail(
                o.path(key),
                &int_range("", 0, "retryBudget.capacity", capacity),
                &Value::Number(n.into()),
                true,
            );
        }
        n
    };
    BudgetPolicy {
        capacity,
        retry_cost: share("retryCost"),
        timeout_retry_cost: share("timeoutRetryCost"),
        no_retry_increment: share("noRetryIncrement"),
    }
}

#[cfg(test)]
mod tests {
    use crate::policy::test_support::*;
    use serde_json::json;

    #[test]
    fn budget_costs_are_bounded_by_capacity() {
        let e = err(json!({"retryBudget": {"capacity": 4}}));
        assert_eq!(
            e.message,
            "retryBudget.retryCost must be an integer from 0 to retryBudget.capacity (4) (got 5)"
        );
        let e =
            err(json!({"retryBudget": {"capacity": 10, "retryCost": 1, "timeoutRetryCost": 11}}));
        assert_eq!(e.path, "retryBudget.timeoutRetryCost");
        let e = err(json!({"retryBudget": {"noRetryIncrement": 501}}));
        assert_eq!(e.path, "retryBudget.noRetryIncrement");
        assert!(
            parse(json!({"retryBudget": {"capacity": 10, "retryCost": 10, "timeoutRetryCost": 0}}))
                .is_ok()
        );
    }
}
