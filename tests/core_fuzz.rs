//! Fuzzing at scale, bounded: the parsers that take what servers and callers
//! send (Retry-After, policies) must never panic, whatever they get,
//! and what they accept must be well-formed. A fixed number of cases per
//! property keeps the run bounded (a few seconds) so it runs in every CI.
//! `RF_FUZZ_CASES` raises the count for a longer local run.

use proptest::prelude::*;
use resilient_fetch::policy::{Policy, PolicyInput};
use resilient_fetch::retry_after::parse;
use serde_json::Value;

fn cases(default: u32) -> ProptestConfig {
    let cases = std::env::var("RF_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn check_retry_after(value: &str, now: f64) {
    if let Some(ms) = parse(value, now) {
        assert!(ms.is_finite() && ms >= 0.0, "{value:?} -> {ms}");
    }
}

/// Strings shaped like the three HTTP-date forms and delta-seconds, with
/// every part free to be out of range.
fn date_like() -> impl Strategy<Value = String> {
    prop_oneof![
        "[A-Za-z]{0,4}, [0-9]{0,3} [A-Za-z]{0,4} [0-9]{0,6} [0-9]{0,3}:[0-9]{0,3}:[0-9]{0,3} [A-Z]{0,4}",
        "[A-Za-z]{0,10}, [0-9]{0,3}-[A-Za-z]{0,4}-[0-9]{0,4} [0-9]{0,3}:[0-9]{0,3}:[0-9]{0,3} GMT",
        "[A-Za-z]{3} [A-Za-z]{3} [ 0-9]{0,3} [0-9]{0,3}:[0-9]{0,3}:[0-9]{0,3} [0-9]{0,6}",
        "[ \t]{0,2}[-+]?[0-9]{0,40}(\\.[0-9]{0,5})?[ \t]{0,2}",
    ]
}

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        (-3_000_000_000i64..3_000_000_000).prop_map(Value::from),
        prop_oneof![
            Just("full"),
            Just("none"),
            Just("equal"),
            Just("decorrelated"),
            Just("failure-rate"),
            Just("consecutive"),
            Just("count"),
            Just("time"),
            Just(""),
            Just("Idempotency-Key"),
        ]
        .prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
    ];
    let keys = prop_oneof![
        Just("timeoutMs"),
        Just("totalTimeoutMs"),
        Just("retry"),
        Just("breaker"),
        Just("retryBudget"),
        Just("bulkhead"),
        Just("idempotencyKey"),
        Just("idempotencyHeader"),
        Just("maxOrigins"),
        Just("onEvent"),
        Just("maxAttempts"),
        Just("baseDelayMs"),
        Just("maxDelayMs"),
        Just("jitter"),
        Just("retryOn"),
        Just("maxRetryAfterMs"),
        Just("mode"),
        Just("failureThreshold"),
        Just("cooldownMs"),
        Just("halfOpenMaxCalls"),
        Just("failureRateThreshold"),
        Just("minimumCalls"),
        Just("windowType"),
        Just("windowSize"),
        Just("windowMs"),
        Just("capacity"),
        Just("retryCost"),
        Just("timeoutRetryCost"),
        Just("noRetryIncrement"),
        Just("maxConcurrent"),
        Just("maxQueue"),
        Just("x"),
    ];
    leaf.prop_recursive(3, 24, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((keys.clone(), inner), 0..6).prop_map(|kv| {
                Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
            }),
        ]
    })
}

proptest! {
    #![proptest_config(cases(20_000))]

    #[test]
    fn retry_after_never_panics_on_any_string(value in any::<String>(), now in any::<f64>()) {
        check_retry_after(&value, now);
    }

    #[test]
    fn retry_after_never_panics_on_date_like_strings(value in date_like(), now in -1e16f64..1e16) {
        check_retry_after(&value, now);
    }
}

proptest! {
    #![proptest_config(cases(5_000))]

    #[test]
    fn policy_decoding_never_panics(value in json(), over in json()) {
        let (Ok(a), Ok(b)) = (
            serde_json::from_value::<PolicyInput>(value),
            serde_json::from_value::<PolicyInput>(over),
        ) else {
            return Ok(());
        };
        for input in [a.clone(), a.merge(&b), b.merge(&a)] {
            if let Err(e) = Policy::from_input(&input) {
                prop_assert!(!e.path.is_empty() || !e.message.is_empty());
                prop_assert!(!e.message.is_empty());
            }
        }
    }
}
