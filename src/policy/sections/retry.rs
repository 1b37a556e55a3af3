//! `retry`: how often and how long apart a call is tried again, and after which statuses.

use crate::backoff::Jitter;
use crate::policy::field::MAX_MS;
use crate::policy::messages::{int_range, push_u64};
use crate::policy::reader::{Check, Rows, as_int};
use crate::policy::value::{Map, Value};

/// The `retry` defaults, each written once ([`crate::policy::defaults`] holds them all).
pub mod defaults {
    use crate::backoff::Jitter;
    /// Retries are on unless the policy says `retry: false`.
    pub const RETRY_ENABLED: bool = true;
    /// Attempts per call, the first one included (JS `retry.maxAttempts`).
    pub const MAX_ATTEMPTS: u32 = 3;
    /// Backoff window of the first retry in ms (JS `retry.baseDelayMs`).
    pub const BASE_DELAY_MS: u32 = 100;
    /// Largest backoff window in ms (JS `retry.maxDelayMs`).
    pub const MAX_DELAY_MS: u32 = 10_000;
    /// How the wait is drawn from the window (JS `retry.jitter`).
    pub const JITTER: Jitter = Jitter::Full;
    /// Response statuses worth retrying (JS `retry.retryOn`).
    pub const RETRY_ON: [u16; 6] = [408, 429, 500, 502, 503, 504];
    /// Longest `Retry-After` honoured in ms; a longer one ends the call (JS `retry.maxRetryAfterMs`).
    pub const MAX_RETRY_AFTER_MS: u32 = 30_000;
}

/// Retry settings.
#[derive(Clone, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Attempts per call, the first one included (1..=20).
    pub max_attempts: u32,
    /// Backoff window of the first retry in ms.
    pub base_delay_ms: u32,
    /// Largest backoff window in ms (at least `base_delay_ms`).
    pub max_delay_ms: u32,
    /// How the wait is drawn from the window.
    pub jitter: Jitter,
    /// Response statuses worth retrying (each in 400..=599).
    pub retry_on: Vec<u16>,
    /// Longest `Retry-After` honoured in ms.
    pub max_retry_after_ms: u32,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: defaults::MAX_ATTEMPTS,
            base_delay_ms: defaults::BASE_DELAY_MS,
            max_delay_ms: defaults::MAX_DELAY_MS,
            jitter: defaults::JITTER,
            retry_on: defaults::RETRY_ON.to_vec(),
            max_retry_after_ms: defaults::MAX_RETRY_AFTER_MS,
        }
    }
}

pub(in crate::policy) fn retry_policy<R: Rows>(c: &mut Check<R>, map: &Map) -> RetryPolicy {
    let o = c.object(map, "retry");
    let base_delay_ms = c.int(&o, "baseDelayMs");
    let max_delay_ms = c.int(&o, "maxDelayMs");
    if max_delay_ms < base_delay_ms {
        c.fail(
            "retry.maxDelayMs".to_owned(),
            &int_range("retry.baseDelayMs", base_delay_ms, "", MAX_MS),
            &Value::Number(max_delay_ms.into()),
            true,
        );
    }
    RetryPolicy {
        max_attempts: c.int(&o, "maxAttempts"),
        base_delay_ms,
        max_delay_ms,
        jitter: c
            .choice(&o, "jitter")
            .map_or(defaults::JITTER, |i| Jitter::ALL[i]),
        retry_on: statuses(c, o.get("retryOn")),
        max_retry_after_ms: c.int(&o, "maxRetryAfterMs"),
    }
}

/// Lowest status `retry.retryOn` accepts: only error statuses are worth retrying (a 1xx,
/// 2xx or 3xx in the list would repeat calls that did not fail).
pub const RETRY_ON_MIN: u32 = 400;
/// Highest status `retry.retryOn` accepts.
const RETRY_ON_MAX: u32 = 599;

fn statuses<R: Rows>(c: &mut Check<R>, v: Option<&Value>) -> Vec<u16> {
    let items = match v {
        None => return defaults::RETRY_ON.to_vec(),
        Some(Value::List(items)) => items,
        Some(other) => {
            c.fail(
                "retry.retryOn".to_owned(),
                "an array of integer statuses from 400 to 599",
                other,
                false,
            );
            return Vec::new();
        }
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match as_int(item, RETRY_ON_MIN, RETRY_ON_MAX) {
            Some(status) => out.push(status as u16),
            None => {
                let mut path = "retry.retryOn[".to_owned();
                push_u64(&mut path, i as u64);
                path.push(']');
                c.int_error(path, item, RETRY_ON_MIN, RETRY_ON_MAX);
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::PolicyErrorKind;
    use crate::policy::test_support::*;
    use serde_json::json;

    #[test]
    fn max_delay_below_base_names_both() {
        let e = err(json!({"retry": {"baseDelayMs": 500, "maxDelayMs": 100}}));
        assert_eq!(
            e.message,
            "retry.maxDelayMs must be an integer from retry.baseDelayMs (500) to 2147483647 (got 100)"
        );
        assert_eq!(
            (e.path.as_str(), e.kind),
            ("retry.maxDelayMs", PolicyErrorKind::Range)
        );
        assert!(parse(json!({"retry": {"baseDelayMs": 100, "maxDelayMs": 100}})).is_ok());
    }

    #[test]
    fn enumerations_list_their_choices() {
        let e = err(json!({"retry": {"jitter": "fulll"}}));
        assert_eq!(
            e.message,
            r#"retry.jitter must be one of "full", "equal", "decorrelated", "none" (got "fulll")"#
        );
        assert_eq!(e.kind, PolicyErrorKind::Range);
        for (name, jitter) in [
            ("full", Jitter::Full),
            ("equal", Jitter::Equal),
            ("none", Jitter::None),
        ] {
            let p = parse(json!({"retry": {"jitter": name}})).expect("valid");
            assert_eq!(p.retry.map(|r| r.jitter), Some(jitter));
        }
    }

    #[test]
    fn retry_on_items_are_checked_one_by_one() {
        let e = err(json!({"retry": {"retryOn": [503, 99]}}));
        assert_eq!(
            e.message,
            "retry.retryOn[1] must be an integer from 400 to 599 (got 99)"
        );
        assert_eq!(
            err(json!({"retry": {"retryOn": [600]}})).path,
            "retry.retryOn[0]"
        );
        assert_eq!(
            err(json!({"retry": {"retryOn": ["503"]}})).kind,
            PolicyErrorKind::Type
        );
        let p = parse(json!({"retry": {"retryOn": [400, 599]}})).expect("valid");
        assert_eq!(p.retry.map(|r| r.retry_on), Some(vec![400, 599]));
    }

    #[test]
    fn retry_on_takes_error_statuses_only() {
        // A success, a redirect or an informational status is never worth retrying.
        for (status, shown) in [(200, "200"), (100, "100"), (204, "204"), (399, "399")] {
            let e = err(json!({"retry": {"retryOn": [503, status]}}));
            assert_eq!(
                e.message,
                format!("retry.retryOn[1] must be an integer from 400 to 599 (got {shown})")
            );
            assert_eq!(
                (e.path.as_str(), e.kind),
                ("retry.retryOn[1]", PolicyErrorKind::Range)
            );
        }
        assert!(parse(json!({"retry": {"retryOn": [400]}})).is_ok());
    }
}
