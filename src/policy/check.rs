//! Validation: [`Policy::from_input`], the policy's own fields and each section's in turn.

use super::build;
use super::error::PolicyError;
use super::input::PolicyInput;
use super::messages::int_range;
use super::reader::Check;
use super::schema::{self, Schema};
use super::sections::breaker::breaker_policy;
use super::sections::bulkhead::bulkhead_policy;
use super::sections::idempotency::{idempotency_header, idempotency_key};
use super::sections::retry::retry_policy;
use super::sections::retry_budget::budget_policy;
use super::types::Policy;
use super::value::{Map, Value};
use crate::coalesce::coalesce;
use crate::share::share_name;
use crate::throttle::throttle_policy;

impl Policy {
    /// Validates a decoded policy and fills in the defaults.
    pub fn from_input(input: &PolicyInput) -> Result<Policy, PolicyError> {
        let mut c = Check::<Schema>::new();
        let map: &Map = match &input.root {
            Value::Null => &[],
            Value::Map(m) => m,
            other => {
                c.fail(String::new(), "an object", other, false);
                &[]
            }
        };
        if let Some(error) = build::lacking(map) {
            return Err(error);
        }
        let o = c.object(map, "");
        let timeout_ms = c.int(&o, "timeoutMs");
        let total_timeout_ms = c.int(&o, "totalTimeoutMs");
        let body_timeout_ms = match o.get("bodyTimeoutMs") {
            Some(Value::Bool(false)) => None,
            Some(Value::Number(_)) | None => Some(c.int(&o, "bodyTimeoutMs")),
            Some(other) => {
                let mut expected = int_range("", 1, "", schema::MAX_MS);
                expected.push_str(", or false");
                c.fail("bodyTimeoutMs".to_owned(), &expected, other, false);
                None
            }
        };
        let retry = c.feature(&o, "retry").map(|m| retry_policy(&mut c, m));
        let breaker = c.feature(&o, "breaker").map(|m| breaker_policy(&mut c, m));
        let retry_budget = c
            .feature(&o, "retryBudget")
            .map(|m| budget_policy(&mut c, m));
        let bulkhead = c
            .feature(&o, "bulkhead")
            .map(|m| bulkhead_policy(&mut c, m));
        let rate_limit = crate::pacing::read(&mut c, &o);
        let throttle = throttle_policy(&mut c, &o);
        let policy = Policy {
            timeout_ms,
            total_timeout_ms,
            body_timeout_ms,
            retry,
            breaker,
            retry_budget,
            bulkhead,
            rate_limit,
            throttle,
            idempotency_key: idempotency_key(&mut c, &o),
            idempotency_header: idempotency_header(&mut c, &o),
            max_origins: c.int(&o, "maxOrigins"),
            share: share_name(&mut c, &o),
            coalesce: coalesce(&mut c, &o),
            hedge: crate::hedge::read(&mut c, &o),
            outbox: crate::outbox::check(&mut c, &o),
            stale: crate::stale::read(&mut c, &o),
            failover: crate::failover::read(&mut c, &o),
            resume: crate::resume::read(&mut c, &o),
            events: crate::sse::read(&mut c, &o),
        };
        match c.error {
            Some(error) => Err(error),
            None => Ok(policy),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;
    #[cfg(feature = "full")]
    use crate::backoff::Jitter;
    use crate::policy::MAX_WINDOW_CALLS;
    use crate::policy::*;

    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    #[cfg(feature = "full")]
    fn every_field_is_read() {
        let p = parse(json!({
            "timeoutMs": 1, "totalTimeoutMs": 2147483647,
            "retry": {"maxAttempts": 20, "baseDelayMs": 0, "maxDelayMs": 0, "jitter": "decorrelated",
                      "retryOn": [], "maxRetryAfterMs": 0},
            "breaker": {"mode": "failure-rate", "cooldownMs": 1, "maxCooldownMs": 2147483647,
                        "halfOpenMaxCalls": 1000, "failureRateThreshold": 1, "minimumCalls": 1000,
                        "windowType": "time", "windowSize": 1000, "windowMs": 1,
                        "slowCallMs": 1, "slowCallRateThreshold": 1},
            "retryBudget": {"capacity": 7, "retryCost": 7, "timeoutRetryCost": 0, "noRetryIncrement": 3},
            "bulkhead": {"maxConcurrent": 100000, "maxQueue": 100000},
            "rateLimit": {"maxWaitMs": 0},
            "throttle": {"k": 1.5, "windowMs": 1000},
            "idempotencyKey": "k-1", "idempotencyHeader": "X-Key", "maxOrigins": 1000000, "coalesce": true,
            "outbox": {"name": "é".repeat(64), "maxEntries": 100000, "maxAgeMs": 1000, "maxBodyBytes": 0},
            "events": {"idleMs": false, "maxReconnects": 1000},
            "onEvent": "ignored by the core"
        }))
        .expect("valid");
        let expected = Policy {
            timeout_ms: 1,
            total_timeout_ms: 2_147_483_647,
            body_timeout_ms: Some(defaults::BODY_TIMEOUT_MS),
            retry: Some(RetryPolicy {
                max_attempts: 20,
                base_delay_ms: 0,
                max_delay_ms: 0,
                jitter: Jitter::Decorrelated,
                retry_on: vec![],
                max_retry_after_ms: 0,
            }),
            breaker: Some(BreakerPolicy {
                trip: TripRule::FailureRate {
                    threshold: 1.0,
                    minimum_calls: 1000,
                    window: Window::Time(1),
                    slow: Some(SlowCalls {
                        ms: 1,
                        threshold: 1.0,
                    }),
                },
                cooldown_ms: 1,
                max_cooldown_ms: 2_147_483_647,
                half_open_max_calls: 1000,
            }),
            retry_budget: Some(BudgetPolicy {
                capacity: 7,
                retry_cost: 7,
                timeout_retry_cost: 0,
                no_retry_increment: 3,
            }),
            bulkhead: Some(BulkheadPolicy {
                max_concurrent: 100_000,
                max_queue: 100_000,
            }),
            rate_limit: Some(RateLimitPolicy { max_wait_ms: 0 }),
            throttle: Some(ThrottlePolicy {
                k: 1.5,
                window_ms: 1000,
            }),
            idempotency_key: IdempotencyKey::Fixed("k-1".into()),
            idempotency_header: "X-Key".into(),
            max_origins: 1_000_000,
            share: None,
            coalesce: true,
            hedge: None,
            outbox: Some(OutboxPolicy {
                name: "é".repeat(64),
                max_entries: 100_000,
                max_age_ms: 1000,
                max_body_bytes: 0,
            }),
            stale: None,
            failover: None,
            resume: None,
            events: Some(crate::sse::EventsPolicy {
                idle_ms: None,
                max_reconnects: 1000,
            }),
        };
        assert_eq!(p, expected);
    }

    #[test]
    fn range_errors_name_the_field_and_the_range() {
        let e = err(json!({"retry": {"maxAttempts": 0}}));
        assert_eq!(
            e.to_string(),
            "retry.maxAttempts must be an integer from 1 to 20 (got 0)"
        );
        assert_eq!(
            (e.path.as_str(), e.kind),
            ("retry.maxAttempts", PolicyErrorKind::Range)
        );
        let e = err(json!({"retry": {"maxAttempts": 21}}));
        assert_eq!(
            e.message,
            "retry.maxAttempts must be an integer from 1 to 20 (got 21)"
        );
        let e = err(json!({"timeoutMs": 0}));
        assert_eq!(
            e.message,
            "timeoutMs must be an integer from 1 to 2147483647 (got 0)"
        );
        let e = err(json!({"totalTimeoutMs": 2147483648u64}));
        assert_eq!(e.path, "totalTimeoutMs");
        let e = err(json!({"maxOrigins": 1000001}));
        assert_eq!(
            e.message,
            "maxOrigins must be an integer from 1 to 1000000 (got 1000001)"
        );
    }

    #[test]
    fn each_bound_is_enforced() {
        let cases = [
            json!({"retry": {"baseDelayMs": -1}}),
            json!({"retry": {"maxRetryAfterMs": 2147483648u64}}),
            json!({"breaker": {"failureThreshold": 0}}),
            json!({"breaker": {"failureThreshold": 1001}}),
            json!({"breaker": {"cooldownMs": 0}}),
            json!({"breaker": {"halfOpenMaxCalls": 0}}),
            json!({"breaker": {"halfOpenMaxCalls": 1001}}),
            json!({"breaker": {"minimumCalls": 0}}),
            json!({"breaker": {"minimumCalls": 10001}}),
            json!({"breaker": {"windowSize": 0}}),
            json!({"breaker": {"windowSize": 1001}}),
            json!({"breaker": {"windowMs": 0}}),
            json!({"retryBudget": {"capacity": 0}}),
            json!({"retryBudget": {"capacity": 1000001}}),
            json!({"bulkhead": {"maxConcurrent": 0}}),
            json!({"bulkhead": {"maxConcurrent": 100001}}),
            json!({"bulkhead": {"maxQueue": 100001}}),
            json!({"maxOrigins": 0}),
        ];
        for case in cases {
            let e = parse(case.clone()).expect_err(&case.to_string());
            assert_eq!(e.kind, PolicyErrorKind::Range, "{case}");
        }
    }

    #[test]
    fn integers_may_come_as_floats_but_must_be_whole_and_finite() {
        let p = Policy::from_input(&PolicyInput {
            root: Value::Map(vec![("timeoutMs".into(), Value::Number(3.0))]),
        });
        assert_eq!(p.map(|p| p.timeout_ms), Ok(3));
        for (n, shown) in [
            (3.5, "3.5"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ] {
            let e = Policy::from_input(&PolicyInput {
                root: Value::Map(vec![("timeoutMs".into(), Value::Number(n))]),
            })
            .expect_err("not an integer");
            assert_eq!(e.kind, PolicyErrorKind::Range);
            assert_eq!(
                e.message,
                format!("timeoutMs must be an integer from 1 to 2147483647 (got {shown})")
            );
        }
    }

    #[test]
    fn type_errors_name_the_field_and_the_type() {
        let e = err(json!({"retry": {"maxAttempts": "3"}}));
        assert_eq!(
            e.message,
            "retry.maxAttempts must be an integer from 1 to 20 (got a string)"
        );
        assert_eq!(e.kind, PolicyErrorKind::Type);
        let e = err(json!({"retry": 3}));
        assert_eq!(
            e.message,
            "retry must be true, false or an object (got a number)"
        );
        assert_eq!(e.kind, PolicyErrorKind::Type);
        let e = err(json!({"retry": {"jitter": 1}}));
        assert_eq!(e.kind, PolicyErrorKind::Type);
        assert_eq!(e.path, "retry.jitter");
        let e = err(json!({"retry": {"retryOn": 503}}));
        assert_eq!(
            e.message,
            "retry.retryOn must be an array of integer statuses from 400 to 599 (got a number)"
        );
        let e = err(json!({"idempotencyKey": 1}));
        assert_eq!(
            (e.path.as_str(), e.kind),
            ("idempotencyKey", PolicyErrorKind::Type)
        );
        let e = err(json!({"idempotencyHeader": ["x"]}));
        assert_eq!(
            (e.path.as_str(), e.kind),
            ("idempotencyHeader", PolicyErrorKind::Type)
        );
        let e = err(json!({"breaker": {"failureRateThreshold": "half"}}));
        assert_eq!(e.kind, PolicyErrorKind::Type);
        let e = err(json!([1]));
        assert_eq!(e.message, "policy must be an object (got an array)");
    }

    #[test]
    fn body_timeout_is_milliseconds_or_false() {
        let body = |v| parse(json!({ "bodyTimeoutMs": v })).map(|p| p.body_timeout_ms);
        assert_eq!(body(json!(1)), Ok(Some(1)));
        assert_eq!(body(json!(false)), Ok(None));
        for bad in [json!(0), json!(-1), json!(1.5), json!(true), json!("10")] {
            let e = parse(json!({ "bodyTimeoutMs": bad })).expect_err("rejected");
            assert_eq!(e.path, "bodyTimeoutMs", "{bad}");
        }
    }

    #[test]
    fn unknown_fields_are_named() {
        let e = err(json!({"colour": true}));
        assert_eq!(e.message, r#"unknown policy field "colour""#);
        assert_eq!(e.kind, PolicyErrorKind::Type);
        let e = err(json!({"retry": {"maxTries": 2}}));
        assert_eq!(e.message, r#"unknown policy field "retry.maxTries""#);
        assert_eq!(e.path, "retry.maxTries");
        let e = err(json!({"breaker": {"retry": true}}));
        assert_eq!(e.path, "breaker.retry");
        assert_eq!(e.message, r#"unknown policy field "breaker.retry""#);
    }

    #[test]
    fn an_unknown_field_within_two_edits_of_a_known_one_names_it() {
        let cases = [
            (
                json!({"timeoutMS": 1}),
                r#""timeoutMS": did you mean "timeoutMs"?"#,
            ),
            (json!({"retyr": true}), r#""retyr": did you mean "retry"?"#),
            (
                json!({"retry": {"maxAttemps": 2}}),
                r#""retry.maxAttemps": did you mean "retry.maxAttempts"?"#,
            ),
            (
                json!({"breaker": {"cooldown": 1}}),
                r#""breaker.cooldown": did you mean "breaker.cooldownMs"?"#,
            ),
            (
                json!({"totalTimeout": 1}),
                r#""totalTimeout": did you mean "totalTimeoutMs"?"#,
            ),
        ];
        for (policy, said) in cases {
            let e = err(policy);
            assert_eq!(e.message, format!("unknown policy field {said}"));
            assert_eq!(e.kind, PolicyErrorKind::Type);
        }
        // Three edits, or all of a short name: no guess. (`throttle.x` is one edit from "k",
        // but all of it; the lean build refuses `throttle` itself, with no guess either.)
        let no_guess = [
            json!({"timeoutMSec": 1}),
            json!({"retry": {"max": 1}}),
            json!({"throttle": {"x": 1}}),
        ];
        for policy in no_guess {
            let e = err(policy);
            assert!(!e.message.contains("did you mean"), "{}", e.message);
        }
    }

    proptest! {
        #[test]
        fn decoding_and_validating_never_panics(a in json_value(), b in json_value()) {
            let a = input(a);
            let b = input(b);
            for p in [&a, &b, &a.merge(&b)] {
                match Policy::from_input(p) {
                    Ok(policy) => {
                        let r = policy.retry.clone().unwrap_or_default();
                        prop_assert!(r.base_delay_ms <= r.max_delay_ms);
                        if let Some(g) = policy.retry_budget {
                            prop_assert!(g.retry_cost <= g.capacity && g.timeout_retry_cost <= g.capacity);
                        }
                        if let Some(TripRule::FailureRate { minimum_calls, window, .. }) =
                            policy.breaker.map(|b| b.trip)
                        {
                            let most = match window {
                                Window::Count(size) => size as usize,
                                Window::Time(_) => MAX_WINDOW_CALLS,
                            };
                            prop_assert!(minimum_calls as usize <= most);
                        }
                        if let Some(r) = &policy.retry {
                            prop_assert!(r.retry_on.iter().all(|s| (400..=599).contains(s)));
                        }
                    }
                    Err(e) => prop_assert!(e.message.contains(&e.path)),
                }
            }
        }
    }
}
