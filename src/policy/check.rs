//! Validation: [`Policy::from_input`] and the checking machinery every field goes through.

use super::breaker::breaker_policy;
use super::messages::{int_range, push_number, push_quoted, type_name};
use super::schema::{self, Kind};
use super::sections::{
    budget_policy, bulkhead_policy, hedge_policy, idempotency_header, idempotency_key,
    outbox_policy, rate_limit_policy, retry_policy, share_name, throttle_policy,
};
use super::value::Map;
use super::*;

impl Policy {
    /// Validates a decoded policy and fills in the defaults.
    pub fn from_input(input: &PolicyInput) -> Result<Policy, PolicyError> {
        let mut c = Check { error: None };
        let map: &Map = match &input.root {
            Value::Null => &[],
            Value::Map(m) => m,
            other => {
                c.fail(String::new(), "an object", other, false);
                &[]
            }
        };
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
        let rate_limit = c
            .feature(&o, "rateLimit")
            .map(|m| rate_limit_policy(&mut c, m));
        let throttle = c
            .feature(&o, "throttle")
            .map(|m| throttle_policy(&mut c, m));
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
            coalesce: c.flag(&o, "coalesce"),
            hedge: c.feature(&o, "hedge").map(|m| hedge_policy(&mut c, m)),
            outbox: c.feature(&o, "outbox").map(|m| outbox_policy(&mut c, m)),
        };
        match c.error {
            Some(error) => Err(error),
            None => Ok(policy),
        }
    }
}

/// The fields of one policy object, as given (`null` counts as absent).
pub(super) struct Object<'a> {
    /// The object's JS path (empty for the policy itself).
    prefix: &'static str,
    /// The fields given, by name (known ones only: an unknown one is an error).
    given: Vec<(&'static str, &'a Value)>,
}

impl<'a> Object<'a> {
    /// The value of field `key`, if given.
    pub(super) fn get(&self, key: &str) -> Option<&'a Value> {
        self.given.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    /// The JS path of field `key`.
    pub(super) fn path(&self, key: &str) -> String {
        let mut path = self.prefix.to_owned();
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(key);
        path
    }
}

/// Validation state: the first error found. Checking goes on after an error (with
/// defaults in place of bad values) but only the first error is kept, so the error
/// reported is the one of the first bad field in checking order. Plain values instead of
/// a `Result` per field keep the wasm small.
pub(super) struct Check {
    pub(super) error: Option<PolicyError>,
}

impl Check {
    /// The fields of the object at `prefix` ([`schema::FIELDS`] names them) in `map`. Any
    /// other key is an error; function fields (taken out in JS) are not data.
    #[inline(never)]
    pub(super) fn object<'a>(&mut self, map: &'a Map, prefix: &'static str) -> Object<'a> {
        let mut object = Object {
            prefix,
            given: Vec::new(),
        };
        for (key, value) in map.iter() {
            let known = schema::FIELDS
                .iter()
                .filter(|f| !matches!(f.kind, Kind::Function | Kind::Held))
                .find_map(|f| schema::key_in(f, prefix).filter(|k| k == key));
            match known {
                Some(key) if !matches!(value, Value::Null) => object.given.push((key, value)),
                Some(_) => {}
                None if self.error.is_none() => {
                    let path = object.path(key);
                    let mut message = "unknown policy field ".to_owned();
                    push_quoted(&mut message, &path, false);
                    self.error = Some(PolicyError {
                        path,
                        message,
                        kind: PolicyErrorKind::Type,
                    });
                }
                None => {}
            }
        }
        object
    }

    /// The integer field `key` of `o`, in the range and with the default [`schema::FIELDS`]
    /// gives it.
    pub(super) fn int(&mut self, o: &Object, key: &str) -> u32 {
        let path = o.path(key);
        match schema::get(&path).map(|f| f.kind) {
            Some(Kind::Int { min, max, default } | Kind::IntOrOff { min, max, default }) => {
                self.int_in(o, key, min, max, default)
            }
            // Every integer the validator asks for is in the schema (tested).
            _ => 0,
        }
    }

    /// An integer field in `min..=max` (`default` if absent or bad); JS numbers arrive as
    /// f64, so 3.0 counts and 3.5 does not.
    #[inline(never)]
    fn int_in(&mut self, o: &Object, key: &str, min: u32, max: u32, default: u32) -> u32 {
        match o.get(key) {
            None => default,
            Some(v) => as_int(v, min, max).unwrap_or_else(|| {
                self.int_error(o.path(key), v, min, max);
                default
            }),
        }
    }

    /// `v` at `path` is not an integer in `min..=max`.
    #[inline(never)]
    pub(super) fn int_error(&mut self, path: String, v: &Value, min: u32, max: u32) {
        let expected = int_range("", min, "", max);
        self.fail(path, &expected, v, matches!(v, Value::Number(_)));
    }

    /// A string field that must be one of the names [`schema::FIELDS`] lists for it: the
    /// index of the one given.
    #[inline(never)]
    pub(super) fn choice(&mut self, o: &Object, key: &str) -> Option<usize> {
        let v = o.get(key)?;
        let names = match schema::get(&o.path(key)).map(|f| f.kind) {
            Some(Kind::Choice(names)) => names,
            _ => &[],
        };
        if let Value::String(s) = v
            && let Some(i) = names.iter().position(|name| name == s)
        {
            return Some(i);
        }
        let mut expected = "one of ".to_owned();
        for (i, name) in names.iter().enumerate() {
            if i > 0 {
                expected.push_str(", ");
            }
            push_quoted(&mut expected, name, false);
        }
        self.fail(o.path(key), &expected, v, matches!(v, Value::String(_)));
        None
    }

    /// A boolean field, with the default [`schema::FIELDS`] gives it.
    #[inline(never)]
    pub(super) fn flag(&mut self, o: &Object, key: &str) -> bool {
        let default = matches!(
            schema::get(key).map(|f| f.kind),
            Some(Kind::Bool { default: true })
        );
        match o.get(key) {
            None => default,
            Some(Value::Bool(b)) => *b,
            Some(other) => {
                self.fail(o.path(key), "true or false", other, false);
                default
            }
        }
    }

    /// A feature field: absent (its default), `false` (off), `true` (on, defaults) or an
    /// object; the object's fields if on.
    #[inline(never)]
    pub(super) fn feature<'a>(&mut self, o: &Object<'a>, key: &str) -> Option<&'a Map> {
        let on_by_default = matches!(
            schema::get(key).map(|f| f.kind),
            Some(Kind::Feature { on: true })
        );
        match o.get(key) {
            None if on_by_default => Some(&[]),
            None | Some(Value::Bool(false)) => None,
            Some(Value::Bool(true)) => Some(&[]),
            Some(Value::Map(m)) => Some(m),
            Some(other) => {
                self.fail(o.path(key), "true, false or an object", other, false);
                None
            }
        }
    }

    /// Records "`path` must be `expected` (got …)" unless an error is recorded already. With
    /// `right_type` (a number or string of the wrong value) it is a range error showing the
    /// value; otherwise a type error naming the type given.
    #[inline(never)]
    pub(super) fn fail(&mut self, path: String, expected: &str, got: &Value, right_type: bool) {
        if self.error.is_some() {
            return;
        }
        let mut message = if path.is_empty() {
            "policy".to_owned()
        } else {
            path.clone()
        };
        message.push_str(" must be ");
        message.push_str(expected);
        message.push_str(" (got ");
        let kind = match got {
            Value::Number(n) if right_type => {
                push_number(&mut message, *n);
                PolicyErrorKind::Range
            }
            Value::String(s) if right_type => {
                push_quoted(&mut message, s, true);
                PolicyErrorKind::Range
            }
            _ => {
                message.push_str(type_name(got));
                PolicyErrorKind::Type
            }
        };
        message.push(')');
        self.error = Some(PolicyError {
            path,
            message,
            kind,
        });
    }
}

pub(super) fn as_int(v: &Value, min: u32, max: u32) -> Option<u32> {
    match v {
        Value::Number(n) if n.fract() == 0.0 && *n >= f64::from(min) && *n <= f64::from(max) => {
            Some(*n as u32)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;
    use crate::backoff::Jitter;
    use crate::breaker::MAX_WINDOW_CALLS;

    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn every_field_is_read() {
        let p = parse(json!({
            "timeoutMs": 1, "totalTimeoutMs": 2147483647,
            "retry": {"maxAttempts": 20, "baseDelayMs": 0, "maxDelayMs": 0, "jitter": "decorrelated",
                      "retryOn": [], "maxRetryAfterMs": 0},
            "breaker": {"mode": "failure-rate", "cooldownMs": 1,
                        "halfOpenMaxCalls": 1000, "failureRateThreshold": 1, "minimumCalls": 1000,
                        "windowType": "time", "windowSize": 1000, "windowMs": 1},
            "retryBudget": {"capacity": 7, "retryCost": 7, "timeoutRetryCost": 0, "noRetryIncrement": 3},
            "bulkhead": {"maxConcurrent": 100000, "maxQueue": 100000},
            "rateLimit": {"maxWaitMs": 0},
            "throttle": {"k": 1.5, "windowMs": 1000},
            "idempotencyKey": "k-1", "idempotencyHeader": "X-Key", "maxOrigins": 1000000, "coalesce": true,
            "outbox": {"name": "é".repeat(64), "maxEntries": 100000, "maxAgeMs": 1000, "maxBodyBytes": 0},
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
                },
                cooldown_ms: 1,
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
    fn unknown_fields_are_named() {
        let e = err(json!({"retyr": true}));
        assert_eq!(e.message, r#"unknown policy field "retyr""#);
        assert_eq!(e.kind, PolicyErrorKind::Type);
        let e = err(json!({"retry": {"maxAttemps": 2}}));
        assert_eq!(e.message, r#"unknown policy field "retry.maxAttemps""#);
        assert_eq!(e.path, "retry.maxAttemps");
        let e = err(json!({"breaker": {"retry": true}}));
        assert_eq!(e.path, "breaker.retry");
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
