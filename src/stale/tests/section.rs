use super::*;

fn map(entries: &[(&str, Value)]) -> Value {
    Value::Map(
        entries
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
    )
}

fn n(x: f64) -> Value {
    Value::Number(x)
}

#[test]
fn the_section_is_off_by_default_and_fills_in_its_defaults() {
    assert_eq!(crate::stale::section::check(None), Ok(None));
    assert_eq!(crate::stale::section::check(Some(&Value::Null)), Ok(None));
    assert_eq!(
        crate::stale::section::check(Some(&Value::Bool(false))),
        Ok(None)
    );
    let on = crate::stale::section::check(Some(&Value::Bool(true)));
    assert_eq!(on, Ok(Some(StalePolicy::default())));
    let given = map(&[
        ("maxStaleMs", n(5.0)),
        ("capMs", n(9.0)),
        ("maxBodyBytes", n(0.0)),
        ("maxEntries", n(3.0)),
        ("maxBytes", n(100.0)),
        ("private", Value::Bool(true)),
    ]);
    let p = crate::stale::section::check(Some(&given));
    let want = StalePolicy {
        max_stale_ms: 5,
        cap_ms: 9,
        max_body_bytes: 0,
        max_entries: 3,
        max_bytes: 100,
        private: true,
    };
    assert_eq!(p, Ok(Some(want)));
    // A default above the bound another field sets follows it.
    let small = crate::stale::section::check(Some(&map(&[("capMs", n(1000.0))])));
    assert_eq!(small.map(|p| p.map(|p| p.max_stale_ms)), Ok(Some(1000)));
    for row in crate::stale::section::FIELDS {
        assert!(row.path == "stale" || row.path.starts_with("stale."));
    }
}

#[test]
fn the_section_names_the_field_and_its_range() {
    for (given, kind, words) in [
        (
            Value::String("yes".into()),
            PolicyErrorKind::Type,
            "stale must be true, false or an object (got a string)",
        ),
        (
            map(&[("capMs", n(1000.0)), ("maxStaleMs", n(5000.0))]),
            PolicyErrorKind::Range,
            "stale.maxStaleMs must be an integer from 0 to stale.capMs (1000) (got 5000)",
        ),
        (
            map(&[("maxBytes", n(10.0)), ("maxBodyBytes", n(11.0))]),
            PolicyErrorKind::Range,
            "stale.maxBodyBytes must be an integer from 0 to stale.maxBytes (10) (got 11)",
        ),
        (
            map(&[("maxBodyBytes", n(67_108_865.0))]),
            PolicyErrorKind::Range,
            "stale.maxBodyBytes must be an integer from 0 to stale.maxBytes (16777216) (got 67108865)",
        ),
        (
            map(&[("maxEntries", n(0.0))]),
            PolicyErrorKind::Range,
            "stale.maxEntries must be an integer from 1 to 100000 (got 0)",
        ),
        (
            map(&[("capMs", n(1.5))]),
            PolicyErrorKind::Range,
            "stale.capMs must be an integer from 0 to 2147483647 (got 1.5)",
        ),
        (
            map(&[("capMs", Value::String("9".into()))]),
            PolicyErrorKind::Type,
            "stale.capMs must be an integer from 0 to 2147483647 (got a string)",
        ),
        (
            map(&[("private", n(1.0))]),
            PolicyErrorKind::Type,
            "stale.private must be true or false (got a number)",
        ),
        (
            map(&[("size", n(1.0))]),
            PolicyErrorKind::Type,
            "unknown policy field \"stale.size\"",
        ),
    ] {
        let e = crate::stale::section::check(Some(&given)).expect_err("rejected");
        assert_eq!(e.kind, kind, "{given:?}");
        assert_eq!(e.message, words);
        assert!(e.message.contains(&e.path), "{}", e.message);
    }
}
