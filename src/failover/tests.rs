use super::*;
use crate::policy::test_support::{input, parse};
use crate::policy::{Policy, PolicyErrorKind};
use proptest::prelude::*;
use serde_json::json;
use std::collections::HashSet;

#[test]
fn origins_are_normalised_as_the_platform_serialises_them() {
    for (given, want) in [
        ("https://api.example.com", "https://api.example.com"),
        ("HTTPS://API.Example.COM/", "https://api.example.com"),
        ("https://a.test:443", "https://a.test"),
        ("http://a.test:80/", "http://a.test"),
        ("http://a.test:443", "http://a.test:443"),
        ("https://a.test:08443", "https://a.test:8443"),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("http://[::1]:8080", "http://[::1]:8080"),
        ("https://[2001:DB8::1]", "https://[2001:db8::1]"),
        ("https://[::ffff:1.2.3.4]:443/", "https://[::ffff:1.2.3.4]"),
        (
            "https://xn--bcher-kva.example",
            "https://xn--bcher-kva.example",
        ),
        ("http://my_host", "http://my_host"),
    ] {
        assert_eq!(origin(given).as_deref(), Ok(want), "{given}");
    }
}

#[test]
fn what_is_not_an_origin_says_why() {
    for (given, why) in [
        ("ftp://a.test", NotOrigin::Scheme),
        ("a.test", NotOrigin::Scheme),
        ("https:/a.test", NotOrigin::Scheme),
        ("", NotOrigin::Scheme),
        ("https://a.test/x", NotOrigin::Path),
        ("https://a.test//", NotOrigin::Path),
        ("https://a.test?q", NotOrigin::Path),
        ("https://a.test/#f", NotOrigin::Path),
        ("https://a.test\\", NotOrigin::Path),
        ("https://u:p@a.test", NotOrigin::UserInfo),
        ("https://@a.test", NotOrigin::UserInfo),
        ("https://", NotOrigin::Host),
        ("https://a..test", NotOrigin::Host),
        ("https://.a.test", NotOrigin::Host),
        ("https://bücher.example", NotOrigin::Host),
        ("https://a test", NotOrigin::Host),
        ("https://[::1", NotOrigin::Host),
        ("https://[zz::1]", NotOrigin::Host),
        ("https://[1.2.3.4]", NotOrigin::Host),
        ("https://[::1]x", NotOrigin::Host),
        ("https://a.test:", NotOrigin::Port),
        ("https://a.test:0", NotOrigin::Port),
        ("https://a.test:65536", NotOrigin::Port),
        ("https://a.test:8a", NotOrigin::Port),
        ("https://a.test:1:2", NotOrigin::Port),
        ("https://[::1]:", NotOrigin::Port),
    ] {
        assert_eq!(origin(given), Err(why), "{given}");
        assert!(why.expected().starts_with("an origin"));
    }
}

#[test]
fn a_url_gets_another_origin_keeping_path_query_and_fragment() {
    for (url, to, want) in [
        (
            "https://api.example.com/v1/items?x=1&y=%2F#top",
            "https://api-eu.example.com",
            "https://api-eu.example.com/v1/items?x=1&y=%2F#top",
        ),
        (
            "https://a.test:8443/p",
            "http://[::1]:9000",
            "http://[::1]:9000/p",
        ),
        (
            "http://[::1]:8080/a?b",
            "https://b.test",
            "https://b.test/a?b",
        ),
        ("https://a.test", "https://b.test", "https://b.test"),
        ("https://a.test?q", "https://b.test", "https://b.test?q"),
        ("HTTPS://a.test#f", "https://b.test", "https://b.test#f"),
        // An `@` after the authority is the path's.
        (
            "https://a.test/@me?u=x@y",
            "https://b.test",
            "https://b.test/@me?u=x@y",
        ),
    ] {
        assert_eq!(with_origin(url, to).as_deref(), Ok(want), "{url}");
    }
    assert_eq!(
        with_origin("https://user:pw@a.test/x", "https://b.test"),
        Err(NotOrigin::UserInfo)
    );
    assert_eq!(
        with_origin("data:text/plain,x", "https://b.test"),
        Err(NotOrigin::Scheme)
    );
    assert_eq!(
        origin_of("https://A.test:443/x?y").as_deref(),
        Ok("https://a.test")
    );
}

proptest! {
    #[test]
    fn rewriting_keeps_everything_after_the_origin(
        path in "(/[a-z0-9%@:._-]{0,8}){0,3}", query in "(\\?[a-z0-9=&@/]{0,10})?",
        fragment in "(#[a-z0-9@/?]{0,6})?", port in prop::option::of(1u16..),
    ) {
        let from = match port {
            Some(p) => format!("https://a.test:{p}"),
            None => "https://a.test".to_owned(),
        };
        let tail = format!("{path}{query}{fragment}");
        let url = format!("{from}{tail}");
        let moved = with_origin(&url, "http://[::1]:81").expect("no userinfo");
        prop_assert_eq!(moved, format!("http://[::1]:81{tail}"));
        prop_assert_eq!(with_origin(&url, &from).expect("same"), url.clone());
        let back = origin(&from).expect("an origin");
        prop_assert_eq!(origin_of(&url).expect("an origin"), back.clone());
        // Normalising is idempotent.
        prop_assert_eq!(origin(&back).expect("again"), back);
    }

    #[test]
    fn origin_never_panics(s in ".{0,40}") {
        if let Ok(o) = origin(&s) {
            prop_assert_eq!(origin(&o), Ok(o.clone()));
        }
        let _ = with_origin(&s, "https://b.test");
    }
}

fn alts(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn the_first_attempt_goes_to_the_primary_unless_its_breaker_is_open() {
    let a = alts(&["https://eu", "https://us"]);
    let route = Route::new("https://main", &a);
    assert_eq!((route.len(), route.is_empty()), (3, false));
    let open = |set: &'static [&'static str]| move |o: &str| set.contains(&o);
    assert_eq!(route.first(open(&[])), 0);
    assert_eq!(route.first(open(&["https://main"])), 1);
    assert_eq!(route.first(open(&["https://main", "https://eu"])), 2);
    // All open: the primary, which refuses as it would without failover.
    assert_eq!(
        route.first(open(&["https://main", "https://eu", "https://us"])),
        0
    );
    assert_eq!(route.origin(2), "https://us");
    assert_eq!(route.origin(0), "https://main");
    assert_eq!(route.origin(9), "https://main");
    let alone = Route::new("https://main", &[]);
    assert!(alone.is_empty());
    assert_eq!(alone.first(open(&["https://main"])), 0);
    assert_eq!(alone.after(0, open(&[])), 0);
}

#[test]
fn a_retry_goes_to_the_next_origin_wrapping_and_skipping_open_ones() {
    let a = alts(&["https://eu", "https://us"]);
    let route = Route::new("https://main", &a);
    let open = |set: &'static [&'static str]| move |o: &str| set.contains(&o);
    assert_eq!(route.after(0, open(&[])), 1);
    assert_eq!(route.after(1, open(&[])), 2);
    assert_eq!(route.after(2, open(&[])), 0);
    assert_eq!(route.after(0, open(&["https://eu"])), 2);
    assert_eq!(route.after(2, open(&["https://main"])), 1);
    // Every other one open: stay, unless this one is open too.
    assert_eq!(route.after(1, open(&["https://main", "https://us"])), 1);
    let all = open(&["https://main", "https://eu", "https://us"]);
    assert_eq!(route.after(1, all), 0);
    assert_eq!(
        route.after(7, open(&[])),
        1,
        "past the end counts as the primary"
    );
}

proptest! {
    #[test]
    fn every_pick_is_an_origin_not_open_when_one_is_not(
        n in 0usize..6, open in prop::collection::vec(any::<bool>(), 6), current in 0usize..8,
    ) {
        let names: Vec<String> = (1..=n).map(|i| format!("https://alt{i}")).collect();
        let route = Route::new("https://main", &names);
        let is_open = |o: &str| {
            let i = (0..route.len()).position(|i| route.origin(i) == o).unwrap_or(0);
            open[i]
        };
        let any_closed = (0..route.len()).any(|i| !open[i]);
        let first = route.first(is_open);
        prop_assert!(first < route.len());
        prop_assert_eq!(!open[first], any_closed);
        if !open[0] {
            prop_assert_eq!(first, 0);
        }
        let next = route.after(current, is_open);
        prop_assert!(next < route.len());
        prop_assert_eq!(!open[next], any_closed);
        // Visiting by `after` from the first reaches every closed origin.
        let mut seen = HashSet::new();
        let mut at = first;
        for _ in 0..route.len() {
            seen.insert(at);
            at = route.after(at, is_open);
        }
        let closed: HashSet<usize> = (0..route.len()).filter(|&i| !open[i]).collect();
        if any_closed {
            prop_assert_eq!(seen, closed);
        }
    }
}

fn failover(v: serde_json::Value) -> Result<Option<FailoverPolicy>, crate::policy::PolicyError> {
    parse(json!({ "failover": v })).map(|p| p.failover)
}

#[test]
fn the_section_reads_origins_normalised() {
    assert_eq!(parse(json!({})).map(|p| p.failover), Ok(None));
    assert_eq!(failover(json!(null)), Ok(None));
    assert_eq!(failover(json!(false)), Ok(None));
    assert_eq!(failover(json!({})), Ok(None));
    let p = failover(json!({
        "https://API.example.com/": ["https://api-eu.example.com:443", "http://b:8080"],
        "http://[::1]:3000": ["http://[::1]:3001"],
    }))
    .expect("valid")
    .expect("on");
    assert_eq!(
        p.alternates("https://api.example.com"),
        ["https://api-eu.example.com", "http://b:8080"]
    );
    assert_eq!(p.alternates("http://[::1]:3000"), ["http://[::1]:3001"]);
    assert!(p.alternates("https://other").is_empty());
    let route = p.route("http://[::1]:3000");
    assert_eq!((route.len(), route.origin(1)), (2, "http://[::1]:3001"));
    assert_eq!(
        (
            route.alternate(0),
            route.alternate(1).map(Alternate::origin)
        ),
        (None, Some("http://[::1]:3001"))
    );
    assert_eq!(route.alternate(2), None);
    assert!(p.route("https://other").is_empty());
    let eight: Vec<String> = (0..8).map(|i| format!("https://m{i}")).collect();
    assert!(failover(json!({ "https://a": eight })).is_ok());
    let many: serde_json::Map<String, serde_json::Value> = (0..64)
        .map(|i| (format!("https://p{i}"), json!(["https://alt"])))
        .collect();
    assert!(failover(serde_json::Value::Object(many)).is_ok());
}

#[test]
fn a_call_s_failover_lies_over_the_client_s_origin_by_origin() {
    let client =
        input(json!({"failover": {"https://a": ["https://b"], "https://c": ["https://d"]}}));
    let call = input(json!({"failover": {"https://a": ["https://e"]}}));
    let p = Policy::from_input(&client.merge(&call)).expect("valid");
    let p = p.failover.expect("on");
    assert_eq!(p.alternates("https://a"), ["https://e"]);
    assert_eq!(p.alternates("https://c"), ["https://d"]);
    let off = Policy::from_input(&client.merge(&input(json!({"failover": false}))));
    assert_eq!(off.map(|p| p.failover), Ok(None));
}

#[test]
fn the_schema_row_holds_the_bounds_the_check_reads() {
    let row = crate::policy::schema::get("failover").expect("a row");
    assert_eq!(
        row.kind,
        crate::policy::schema::Kind::Origins {
            keys: MAX_PRIMARIES as u32,
            items: MAX_ALTERNATES as u32
        }
    );
    assert_eq!(row.scope, crate::policy::schema::Scope::Both);
}

#[test]
fn the_section_names_the_bad_key_or_alternate() {
    let nine: Vec<String> = (0..9).map(|i| format!("https://m{i}")).collect();
    let many: serde_json::Map<String, serde_json::Value> = (0..65)
        .map(|i| (format!("https://p{i}"), json!(["https://alt"])))
        .collect();
    for (given, kind, path, words) in [
        (
            json!(true),
            PolicyErrorKind::Type,
            "failover",
            "failover must be an object of origins, each to a list of alternate origins, or false (got a boolean)",
        ),
        (
            serde_json::Value::Object(many),
            PolicyErrorKind::Range,
            "failover",
            "failover must be an object of at most 64 origins (got 65)",
        ),
        (
            json!({"https://a/v1": ["https://b"]}),
            PolicyErrorKind::Range,
            "failover[\"https://a/v1\"]",
            "failover[\"https://a/v1\"] must be an origin without a path, query or fragment \
             (scheme://host[:port], and at most \"/\" after it) (got \"https://a/v1\")",
        ),
        (
            // (serde_json's objects keep their keys sorted: "HTTPS…" comes first.)
            json!({"https://a": ["https://b"], "HTTPS://A:443": ["https://c"]}),
            PolicyErrorKind::Range,
            "failover[\"https://a\"]",
            "failover[\"https://a\"] must be an origin other than failover[\"HTTPS://A:443\"] \
             (got \"https://a\")",
        ),
        (
            json!({"https://a": "https://b"}),
            PolicyErrorKind::Type,
            "failover[\"https://a\"]",
            "failover[\"https://a\"] must be a list of 1 to 8 origins (got a string)",
        ),
        (
            json!({"https://a": []}),
            PolicyErrorKind::Range,
            "failover[\"https://a\"]",
            "failover[\"https://a\"] must be a list of 1 to 8 origins (got 0)",
        ),
        (
            json!({ "https://a": nine }),
            PolicyErrorKind::Range,
            "failover[\"https://a\"]",
            "failover[\"https://a\"] must be a list of 1 to 8 origins (got 9)",
        ),
        (
            json!({"https://a": [1]}),
            PolicyErrorKind::Type,
            "failover[\"https://a\"][0]",
            "failover[\"https://a\"][0] must be an origin (scheme://host[:port]) (got a number)",
        ),
        (
            json!({"https://a": ["https://b", "https://u:p@c"]}),
            PolicyErrorKind::Range,
            "failover[\"https://a\"][1]",
            "failover[\"https://a\"][1] must be an origin without a user name or password \
             (scheme://host[:port]) (got \"https://u:p@c\")",
        ),
        (
            json!({"https://a": ["ftp://b"]}),
            PolicyErrorKind::Range,
            "failover[\"https://a\"][0]",
            "failover[\"https://a\"][0] must be an origin of scheme http or https",
        ),
        (
            json!({"https://a": ["https://b", "https://A:443/"]}),
            PolicyErrorKind::Range,
            "failover[\"https://a\"][1]",
            "failover[\"https://a\"][1] must be an origin other than its primary (got \
             \"https://A:443/\")",
        ),
        (
            json!({"https://a": ["https://b", "https://c", "HTTPS://B"]}),
            PolicyErrorKind::Range,
            "failover[\"https://a\"][2]",
            "failover[\"https://a\"][2] must be an origin other than failover[\"https://a\"][0] \
             (got \"HTTPS://B\")",
        ),
        (
            json!({"https://\"q\"": ["https://b"]}),
            PolicyErrorKind::Range,
            "failover[\"https://\\\"q\\\"\"]",
            "failover[\"https://\\\"q\\\"\"] must be",
        ),
    ] {
        let e = failover(given).expect_err("rejected");
        assert_eq!((e.kind, e.path.as_str()), (kind, path), "{}", e.message);
        assert!(e.message.starts_with(words), "{}", e.message);
    }
}
