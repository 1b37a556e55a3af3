//! The tests of `breaker`'s policy section (`../breaker.rs`): what each field accepts and the
//! error it gives, which trip rule the fields given make, and `breaker.key`'s result.

use super::*;
use crate::policy::test_support::*;
use crate::policy::{Policy, PolicyErrorKind};
use serde_json::json;

#[test]
fn enumerations_name_their_field() {
    assert_eq!(
        err(json!({"breaker": {"mode": "rate"}})).path,
        "breaker.mode"
    );
    assert_eq!(
        err(json!({"breaker": {"windowType": "calls"}})).path,
        "breaker.windowType"
    );
}

#[test]
fn failure_rate_minimum_calls_must_fit_the_count_window() {
    // The default minimumCalls (10) cannot be reached in a window of 5 calls.
    let e = err(json!({"breaker": {"windowType": "count", "windowSize": 5}}));
    assert_eq!(
        e.message,
        "breaker.minimumCalls must be an integer from 1 to breaker.windowSize (5) (got 10)"
    );
    assert_eq!(
        (e.path.as_str(), e.kind),
        ("breaker.minimumCalls", PolicyErrorKind::Range)
    );
    let e = err(json!({"breaker": {"windowType": "count", "windowSize": 20, "minimumCalls": 21}}));
    assert_eq!(e.path, "breaker.minimumCalls");
    let p = parse(json!({"breaker": {"windowType": "count", "windowSize": 5, "minimumCalls": 5}}))
        .expect("minimumCalls equal to windowSize is reachable");
    assert_eq!(
        p.breaker.map(|b| b.trip),
        Some(TripRule::FailureRate {
            threshold: defaults::FAILURE_RATE_THRESHOLD,
            minimum_calls: 5,
            window: Window::Count(5),
            slow: None,
        })
    );
}

#[test]
fn failure_rate_minimum_calls_must_fit_a_time_window() {
    let e = err(
        json!({"breaker": {"mode": "failure-rate", "windowType": "time", "minimumCalls": 1001}}),
    );
    assert_eq!(
        e.message,
        r#"breaker.minimumCalls must be an integer from 1 to 1000 when breaker.windowType is "time" (got 1001)"#
    );
    assert_eq!(e.kind, PolicyErrorKind::Range);
    // A time window ignores windowSize.
    assert!(
        parse(
            json!({"breaker": {"mode": "failure-rate", "windowType": "time", "windowSize": 5,
                                 "minimumCalls": 1000}})
        )
        .is_ok()
    );
}

#[test]
fn the_mode_follows_the_fields_given_and_the_other_modes_fields_are_refused() {
    let mode = |v| parse(v).map(|p| p.breaker.map(|b| b.mode()));
    assert_eq!(
        mode(json!({"breaker": {"failureThreshold": 3}})),
        Ok(Some(BreakerMode::Consecutive)),
        "failureThreshold alone keeps its meaning"
    );
    assert_eq!(
        mode(json!({"breaker": {"minimumCalls": 4}})),
        Ok(Some(BreakerMode::FailureRate))
    );
    assert_eq!(
        mode(json!({"breaker": {"cooldownMs": 50}})),
        Ok(Some(defaults::BREAKER_MODE))
    );
    let path = |v| parse(v).map(|_| ()).map_err(|e| e.path);
    assert_eq!(
        path(json!({"breaker": {"failureThreshold": 3, "failureRateThreshold": 0.5}})),
        Err("breaker.failureRateThreshold".to_owned())
    );
    assert_eq!(
        path(json!({"breaker": {"mode": "consecutive", "minimumCalls": 5}})),
        Err("breaker.minimumCalls".to_owned())
    );
    assert_eq!(
        path(json!({"breaker": {"mode": "failure-rate", "failureThreshold": 5}})),
        Err("breaker.failureThreshold".to_owned())
    );
    let e = err(json!({"breaker": {"mode": "consecutive", "windowSize": 5}}));
    assert_eq!(
        e.message,
        "breaker.windowSize must be a field of the \"failure-rate\" mode only, absent when \
         the breaker's mode is \"consecutive\" (got a number)"
    );
    // A call's fields are merged over the client's before the mode is decided.
    let client = input(json!({"breaker": {"failureThreshold": 3}}));
    let call = input(json!({"breaker": {"cooldownMs": 10}}));
    let merged = Policy::from_input(&client.merge(&call)).expect("valid");
    assert_eq!(
        merged.breaker.map(|b| b.mode()),
        Some(BreakerMode::Consecutive)
    );
    let call = input(json!({"breaker": {"mode": "failure-rate"}}));
    assert_eq!(
        Policy::from_input(&client.merge(&call)).map_err(|e| e.path),
        Err("breaker.failureThreshold".to_owned())
    );
}

#[test]
fn failure_rate_is_in_zero_exclusive_one_inclusive() {
    for bad in [json!(0), json!(-0.1), json!(1.01)] {
        let e = err(json!({"breaker": {"failureRateThreshold": bad}}));
        assert_eq!(e.kind, PolicyErrorKind::Range);
        assert!(e.message.starts_with(
            "breaker.failureRateThreshold must be a number greater than 0 and at most 1"
        ));
    }
    let p = parse(json!({"breaker": {"failureRateThreshold": 0.001}})).expect("valid");
    let threshold = p.breaker.map(|b| match b.trip {
        TripRule::FailureRate { threshold, .. } => threshold,
        TripRule::Consecutive { .. } => 0.0,
    });
    assert_eq!(threshold, Some(0.001));
}

#[test]
fn a_key_is_a_string_of_one_to_256_characters_and_the_error_says_what_came() {
    let s = |n: usize| Value::String("é".repeat(n));
    assert_eq!(check_key(&s(1)), Ok(()));
    assert_eq!(
        check_key(&s(MAX_KEY_CHARS)),
        Ok(()),
        "256 characters, 512 bytes"
    );
    let e = check_key(&s(257)).expect_err("too long");
    assert_eq!(
        (e.path.as_str(), e.kind, e.message.as_str()),
        (
            "breaker.key",
            PolicyErrorKind::Range,
            "breaker.key must return a string of 1 to 256 characters (got 257 characters)"
        )
    );
    let e = check_key(&s(0)).expect_err("empty");
    assert_eq!(e.kind, PolicyErrorKind::Range);
    assert!(e.message.ends_with("(got 0 characters)"), "{}", e.message);
    for (got, name) in [
        (Value::Null, "null"),
        (Value::Number(3.0), "a number"),
        (Value::Map(vec![]), "an object"),
    ] {
        let e = check_key(&got).expect_err("not a string");
        assert_eq!(e.kind, PolicyErrorKind::Type);
        assert!(
            e.message.ends_with(&format!("(got {name})")),
            "{}",
            e.message
        );
    }
}

#[test]
fn the_slow_call_rule_is_on_with_slow_call_ms_and_its_threshold_defaults_to_one() {
    let p = parse(json!({"breaker": {"slowCallMs": 2000}})).expect("valid");
    let b = p.breaker.expect("on");
    assert_eq!(b.mode(), BreakerMode::FailureRate, "a failure-rate field");
    assert_eq!(b.slow_call_ms(), Some(2000));
    assert!(
        matches!(b.trip, TripRule::FailureRate { slow: Some(SlowCalls { ms: 2000, threshold }), .. }
        if threshold == defaults::SLOW_CALL_RATE_THRESHOLD)
    );
    let p =
        parse(json!({"breaker": {"slowCallMs": 1, "slowCallRateThreshold": 0.25}})).expect("valid");
    assert!(matches!(p.breaker.map(|b| b.trip),
        Some(TripRule::FailureRate { slow: Some(SlowCalls { threshold, .. }), .. }) if threshold == 0.25));
    assert_eq!(
        parse(json!({}))
            .expect("valid")
            .breaker
            .and_then(|b| b.slow_call_ms()),
        None
    );
}

#[test]
fn slow_call_fields_name_what_is_wrong() {
    let e = err(json!({"breaker": {"slowCallMs": 0}}));
    assert_eq!(
        e.message,
        "breaker.slowCallMs must be an integer from 1 to 2147483647 (got 0)"
    );
    assert_eq!(e.kind, PolicyErrorKind::Range);
    let e = err(json!({"breaker": {"slowCallMs": 1, "slowCallRateThreshold": 1.5}}));
    assert_eq!(e.path, "breaker.slowCallRateThreshold");
    assert_eq!(e.kind, PolicyErrorKind::Range);
    let e = err(json!({"breaker": {"slowCallRateThreshold": 0.5}}));
    assert_eq!(
        e.message,
        "breaker.slowCallRateThreshold must be given with breaker.slowCallMs (got a number)"
    );
    let e = err(json!({"breaker": {"failureThreshold": 3, "slowCallMs": 100}}));
    assert_eq!(
        e.path, "breaker.slowCallMs",
        "a failure-rate field in the consecutive mode"
    );
}

#[test]
fn max_cooldown_defaults_to_the_cooldown_and_may_not_be_below_it() {
    let b = |v| parse(v).map(|p| p.breaker.map(|b| (b.cooldown_ms, b.max_cooldown_ms)));
    assert_eq!(
        b(json!({"breaker": {"cooldownMs": 60_000}})),
        Ok(Some((60_000, 60_000)))
    );
    assert_eq!(
        b(json!({"breaker": {"maxCooldownMs": 60_000}})),
        Ok(Some((defaults::COOLDOWN_MS, 60_000)))
    );
    assert_eq!(
        b(json!({"breaker": {"failureThreshold": 2, "cooldownMs": 10, "maxCooldownMs": 10}})),
        Ok(Some((10, 10)))
    );
    let e = err(json!({"breaker": {"cooldownMs": 1000, "maxCooldownMs": 999}}));
    assert_eq!(
        e.message,
        "breaker.maxCooldownMs must be an integer from breaker.cooldownMs (1000) to 2147483647 (got 999)"
    );
    assert_eq!(e.kind, PolicyErrorKind::Range);
    assert_eq!(
        err(json!({"breaker": {"maxCooldownMs": "1m"}})).kind,
        PolicyErrorKind::Type
    );
}
