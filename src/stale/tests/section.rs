use super::*;
use crate::policy::test_support::{err, input, parse};
use serde_json::json;

#[test]
fn the_section_is_off_by_default_and_fills_in_its_defaults() {
    for off in [json!({}), json!({"stale": null}), json!({"stale": false})] {
        assert_eq!(parse(off).map(|p| p.stale), Ok(None));
    }
    let on = parse(json!({"stale": true})).map(|p| p.stale);
    assert_eq!(on, Ok(Some(StalePolicy::default())));
    let given = json!({"stale": {"maxStaleMs": 5, "capMs": 9, "maxBodyBytes": 0,
        "maxEntries": 3, "maxBytes": 100, "private": true}});
    let want = StalePolicy {
        max_stale_ms: 5,
        cap_ms: 9,
        max_body_bytes: 0,
        max_entries: 3,
        max_bytes: 100,
        private: true,
    };
    assert_eq!(parse(given).map(|p| p.stale), Ok(Some(want)));
    // A default above the bound another field sets follows it.
    let small = parse(json!({"stale": {"capMs": 1000, "maxBytes": 10}})).map(|p| p.stale);
    let small = small.map(|p| p.map(|p| (p.max_stale_ms, p.max_body_bytes)));
    assert_eq!(small, Ok(Some((1000, 10))));
    for row in crate::stale::section::FIELDS {
        assert!(row.path == "stale" || row.path.starts_with("stale."));
    }
}

#[test]
fn the_section_names_the_field_and_its_range() {
    for (given, kind, words) in [
        (
            json!("yes"),
            PolicyErrorKind::Type,
            "stale must be true, false or an object (got a string)",
        ),
        (
            json!({"capMs": 1000, "maxStaleMs": 5000}),
            PolicyErrorKind::Range,
            "stale.maxStaleMs must be an integer from 0 to stale.capMs (1000) (got 5000)",
        ),
        (
            json!({"maxBytes": 10, "maxBodyBytes": 11}),
            PolicyErrorKind::Range,
            "stale.maxBodyBytes must be an integer from 0 to stale.maxBytes (10) (got 11)",
        ),
        (
            json!({"maxBodyBytes": 67_108_865}),
            PolicyErrorKind::Range,
            "stale.maxBodyBytes must be an integer from 0 to 67108864 (got 67108865)",
        ),
        (
            json!({"maxEntries": 0}),
            PolicyErrorKind::Range,
            "stale.maxEntries must be an integer from 1 to 100000 (got 0)",
        ),
        (
            json!({"capMs": 1.5}),
            PolicyErrorKind::Range,
            "stale.capMs must be an integer from 0 to 2147483647 (got 1.5)",
        ),
        (
            json!({"capMs": "9"}),
            PolicyErrorKind::Type,
            "stale.capMs must be an integer from 0 to 2147483647 (got a string)",
        ),
        (
            json!({"private": 1}),
            PolicyErrorKind::Type,
            "stale.private must be true or false (got a number)",
        ),
        (
            json!({"maxStale": 1}),
            PolicyErrorKind::Type,
            "unknown policy field \"stale.maxStale\": did you mean \"stale.maxStaleMs\"?",
        ),
    ] {
        let e = err(json!({ "stale": given }));
        assert_eq!(e.kind, kind, "{given:?}");
        assert_eq!(e.message, words);
        assert!(e.message.contains(&e.path), "{}", e.message);
    }
}

#[test]
fn the_store_s_fields_are_client_only() {
    let call = |v| input(v).check_scope(true);
    assert_eq!(call(json!({"stale": {"maxStaleMs": 5}})), Ok(()));
    assert_eq!(call(json!({"stale": false})), Ok(()));
    for field in ["maxEntries", "maxBytes", "private"] {
        let e = call(json!({"stale": {field: 1}})).expect_err("client only");
        assert_eq!(e.path, format!("stale.{field}"));
        assert_eq!(e.kind, PolicyErrorKind::Type);
        assert!(e.message.contains("ResilientClient"), "{}", e.message);
    }
    assert_eq!(
        input(json!({"stale": {"maxEntries": 1}})).check_scope(false),
        Ok(())
    );
}
