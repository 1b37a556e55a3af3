use super::*;
use crate::policy::{PolicyErrorKind, Value};
use proptest::prelude::*;

fn cc(lines: &[&str]) -> CacheControl {
    CacheControl::parse(lines.iter().copied())
}

#[test]
fn cache_control_reads_names_in_any_case_and_arguments_quoted_or_not() {
    let c = cc(&[
        "Public, MAX-AGE=60, stale-if-error=\"300\"",
        "s-maxage = 10",
    ]);
    assert!(c.public && !c.private && !c.no_store);
    assert_eq!(c.max_age, Some(60));
    assert_eq!(c.stale_if_error, Some(300));
    assert_eq!(c.s_maxage, Some(10));
    let c = cc(&["no-cache=\"Set-Cookie, X-A\", private=\"a,b\", No-Store"]);
    assert!(c.no_cache && c.private && c.no_store);
    let c = cc(&["must-revalidate,proxy-revalidate, stale-while-revalidate=5"]);
    assert!(c.must_revalidate && c.proxy_revalidate);
    assert_eq!(c.stale_while_revalidate, Some(5));
}

#[test]
fn cache_control_a_comma_in_quotes_does_not_split() {
    // Without quote handling `no-store"` would be a member of its own.
    let c = cc(&["x=\"a, no-store\", max-age=5"]);
    assert!(!c.no_store);
    assert_eq!(c.max_age, Some(5));
    let c = cc(&["x=\"a\\\", no-store\", max-age=7"]);
    assert!(!c.no_store, "an escaped quote does not close");
    assert_eq!(c.max_age, Some(7));
}

#[test]
fn cache_control_malformed_and_repeated_values_read_most_restrictively() {
    assert_eq!(cc(&["max-age=abc"]).max_age, Some(0));
    assert_eq!(cc(&["max-age"]).max_age, Some(0));
    assert_eq!(cc(&["max-age=-5"]).max_age, Some(0));
    assert_eq!(cc(&["max-age=60", "max-age=30"]).max_age, Some(30));
    assert_eq!(cc(&["stale-if-error=x"]).stale_if_error, None);
    assert_eq!(cc(&["stale-if-error"]).stale_if_error, None);
    assert_eq!(
        cc(&["stale-if-error=9, stale-if-error=oops, stale-if-error=99"]).stale_if_error,
        Some(9)
    );
    assert_eq!(
        cc(&["max-age=99999999999999999999"]).max_age,
        Some(MAX_DELTA_SECONDS)
    );
    assert_eq!(
        cc(&["", ",,, ,", "\"unclosed, no-store"]),
        CacheControl::default()
    );
    assert!(!cc(&["no-storex, xno-store"]).no_store);
}

proptest! {
    #[test]
    fn cache_control_never_panics(lines in prop::collection::vec(".{0,60}", 0..4)) {
        let c = CacheControl::parse(lines.iter().map(String::as_str));
        prop_assert!(c.max_age.is_none_or(|s| s <= MAX_DELTA_SECONDS));
    }
}

const GET: Request<'static> = Request {
    method: "GET",
    url: "https://a.test/x?q=1",
    headers: &[],
};

fn ok<'a>(headers: Headers<'a>) -> Response<'a> {
    Response {
        status: 200,
        headers,
        body_bytes: None,
    }
}

#[test]
fn keeps_get_and_head_of_cacheable_statuses_only() {
    let p = StalePolicy::default();
    assert_eq!(may_keep(&GET, &ok(&[]), &p, true), Ok(()));
    let head = Request {
        method: "head",
        ..GET
    };
    assert_eq!(may_keep(&head, &ok(&[]), &p, false), Ok(()));
    for method in ["POST", "PUT", "OPTIONS", "DELETE"] {
        let r = Request { method, ..GET };
        assert_eq!(may_keep(&r, &ok(&[]), &p, false), Err(NotKept::Method));
    }
    for status in 100..600 {
        let res = Response { status, ..ok(&[]) };
        let kept = may_keep(&GET, &res, &p, false).is_ok();
        assert_eq!(kept, KEPT_STATUSES.contains(&status), "{status}");
    }
}

#[test]
fn no_store_vary_star_and_large_bodies_are_not_kept() {
    let p = StalePolicy::default();
    let no_store = ok(&[("Cache-Control", "max-age=5, NO-STORE")]);
    assert_eq!(may_keep(&GET, &no_store, &p, false), Err(NotKept::NoStore));
    let asked = Request {
        headers: &[("cache-control", "no-store")],
        ..GET
    };
    assert_eq!(may_keep(&asked, &ok(&[]), &p, false), Err(NotKept::NoStore));
    for vary in ["*", "accept, *", "a b"] {
        let headers = [("Vary", "accept"), ("vary", vary)];
        let res = ok(&headers);
        assert_eq!(
            may_keep(&GET, &res, &p, false),
            Err(NotKept::VaryAll),
            "{vary}"
        );
    }
    let at = |n| Response {
        body_bytes: Some(n),
        ..ok(&[])
    };
    assert_eq!(may_keep(&GET, &at(1_048_576), &p, false), Ok(()));
    assert_eq!(
        may_keep(&GET, &at(1_048_577), &p, false),
        Err(NotKept::TooLarge)
    );
    assert!(p.fits(1_048_576) && !p.fits(1_048_577));
}

#[test]
fn a_shared_store_keeps_nothing_with_credentials_or_marked_private() {
    let p = StalePolicy::default();
    let mine = StalePolicy {
        private: true,
        ..StalePolicy::default()
    };
    for headers in [
        &[("Authorization", "Bearer x")][..],
        &[("cookie", "a=b")][..],
        &[("COOKIE", "")][..],
    ] {
        let r = Request { headers, ..GET };
        assert_eq!(may_keep(&r, &ok(&[]), &p, true), Err(NotKept::Credentials));
        assert_eq!(may_keep(&r, &ok(&[]), &p, false), Ok(()));
        assert_eq!(may_keep(&r, &ok(&[]), &mine, true), Ok(()));
    }
    for headers in [
        &[("Cache-Control", "private, max-age=9")][..],
        &[("Set-Cookie", "s=1")][..],
    ] {
        assert_eq!(
            may_keep(&GET, &ok(headers), &p, true),
            Err(NotKept::Private)
        );
        assert_eq!(may_keep(&GET, &ok(headers), &p, false), Ok(()));
        assert_eq!(may_keep(&GET, &ok(headers), &mine, true), Ok(()));
    }
    assert!(p.shared(true) && !p.shared(false) && !mine.shared(true));
}

#[test]
fn the_key_holds_method_url_and_the_varied_request_values() {
    let res: Headers = &[("Vary", "Accept-Language, accept"), ("VARY", "accept")];
    let names = vary_names(res).expect("no star");
    assert_eq!(names, ["accept", "accept-language"]);
    let req: Headers = &[
        ("Accept", "text/html"),
        ("X-Other", "ignored"),
        ("accept", "*/*"),
    ];
    assert_eq!(
        key("get", "https://a.test/x", &names, req),
        "GET https://a.test/x\naccept: text/html, */*\naccept-language"
    );
    assert_eq!(
        key("GET", "https://a.test/x", &[], req),
        "GET https://a.test/x"
    );
    assert_eq!(
        base_key(" get ", "https://a.test/x"),
        "GET https://a.test/x"
    );
    // An absent field and an empty one differ; layout cannot be forged through values.
    let empty: Headers = &[("accept-language", "")];
    let forged: Headers = &[("accept", "x\naccept-language")];
    let two = &names[..];
    assert_ne!(key("GET", "u", two, &[]), key("GET", "u", two, empty));
    assert_ne!(
        key("GET", "u", two, forged),
        key("GET", "u", two, &[("accept", "x")])
    );
}

proptest! {
    #[test]
    fn keys_differ_when_varied_values_differ(a in ".{0,12}", b in ".{0,12}") {
        let names = vec!["x-a".to_owned(), "x-b".to_owned()];
        let one = key("GET", "https://h/", &names, &[("x-a", &a), ("x-b", &b)]);
        let two = key("GET", "https://h/", &names, &[("x-a", &b), ("x-b", &a)]);
        prop_assert_eq!(one == two, a.trim() == b.trim());
        prop_assert_eq!(&one, &key("GET", "https://h/", &names, &[("X-B", &b), ("X-A", &a)]));
    }
}

const T0: f64 = 1_700_000_000_000.0;
const DATE_T0: &str = "Tue, 14 Nov 2023 22:13:20 GMT"; // T0

fn kept(headers: Headers, shared: bool) -> Kept {
    Kept::new(T0 - 2000.0, T0, headers, shared)
}

#[test]
fn age_is_the_larger_of_date_and_age_plus_delay_and_residence() {
    // No Date: the Age the origin gave, the 2 s the answer took, then the time since.
    let k = kept(&[("Age", "10")], false);
    assert_eq!(k.age_ms(T0), 12_000.0);
    assert_eq!(k.age_ms(T0 + 5000.0), 17_000.0);
    // A Date 60 s before it arrived wins over a small Age.
    let k = kept(
        &[("Date", "Tue, 14 Nov 2023 22:12:20 GMT"), ("Age", "1")],
        false,
    );
    assert_eq!(k.date_ms, Some(T0 - 60_000.0));
    assert_eq!(k.age_ms(T0 + 1000.0), 61_000.0);
    // A Date in the future (clock skew) counts as none; an invalid Age as 0.
    let k = kept(
        &[("Date", "Tue, 14 Nov 2023 23:13:20 GMT"), ("Age", "x")],
        false,
    );
    assert_eq!(k.age_ms(T0), 2000.0);
    // A clock that went back adds no residence.
    assert_eq!(k.age_ms(T0 - 10_000.0), 2000.0);
    // A Date older than the reach counts as that far back: too old anyway.
    let k = kept(&[("Date", "Mon, 01 Jan 1990 00:00:00 GMT")], false);
    assert_eq!(k.age_ms(T0), 400.0 * 86_400_000.0);
    assert_eq!(kept(&[("Date", "12")], false).date_ms, None);
}

#[test]
fn lifetime_reads_s_maxage_in_shared_stores_then_max_age_then_expires() {
    let h: Headers = &[("Cache-Control", "max-age=60, s-maxage=5")];
    assert_eq!(kept(h, true).lifetime_ms(), 5000.0);
    assert_eq!(kept(h, false).lifetime_ms(), 60_000.0);
    let h: Headers = &[
        ("Date", DATE_T0),
        ("Expires", "Tue, 14 Nov 2023 22:14:20 GMT"),
    ];
    assert_eq!(kept(h, false).lifetime_ms(), 60_000.0);
    let h: Headers = &[("Expires", "0")];
    assert_eq!(kept(h, false).lifetime_ms(), 0.0);
    assert_eq!(kept(&[], false).lifetime_ms(), 0.0);
}

fn serve(k: &Kept, at: f64, p: &StalePolicy) -> Result<Served, Refused> {
    servable(k, at, Failure::Network, p, &CacheControl::default())
}

#[test]
fn served_within_its_own_stale_if_error_else_the_policy_window_capped() {
    let p = StalePolicy {
        max_stale_ms: 10_000,
        cap_ms: 100_000,
        ..StalePolicy::default()
    };
    // Fresh for 60 s, then 30 s of stale-if-error: age 2 s at arrival.
    let k = kept(&[("Cache-Control", "max-age=60, stale-if-error=30")], false);
    assert_eq!(
        serve(&k, T0 + 1000.0, &p),
        Ok(Served {
            age_s: 3,
            stale_ms: 0.0
        })
    );
    assert_eq!(
        serve(&k, T0 + 88_000.0, &p),
        Ok(Served {
            age_s: 90,
            stale_ms: 30_000.0
        })
    );
    assert_eq!(serve(&k, T0 + 88_001.0, &p), Err(Refused::TooStale));
    // Without its own: the policy's 10 s.
    let k = kept(&[], false);
    assert!(serve(&k, T0 + 8000.0, &p).is_ok());
    assert_eq!(serve(&k, T0 + 8001.0, &p), Err(Refused::TooStale));
    // Never more than the cap.
    let k = kept(&[("Cache-Control", "stale-if-error=86400")], false);
    assert!(serve(&k, T0 + 98_000.0, &p).is_ok());
    assert_eq!(serve(&k, T0 + 98_001.0, &p), Err(Refused::TooStale));
    // The request's own stale-if-error narrows it.
    let asked = cc(&["stale-if-error=1"]);
    let r = servable(&k, T0 + 3001.0, Failure::Timeout, &p, &asked);
    assert_eq!(r, Err(Refused::TooStale));
    assert_eq!(window_ms(&k, &p, &asked), 1000.0);
    assert_eq!(serve(&k, f64::NAN, &p), Err(Refused::TooStale));
}

#[test]
fn revalidation_directives_and_non_failures_refuse() {
    let p = StalePolicy::default();
    let k = kept(&[("Cache-Control", "no-cache, stale-if-error=60")], false);
    assert_eq!(serve(&k, T0, &p), Err(Refused::Revalidate));
    let k = kept(&[("Cache-Control", "max-age=10, must-revalidate")], false);
    assert!(serve(&k, T0 + 8000.0, &p).is_ok(), "fresh");
    assert_eq!(serve(&k, T0 + 8001.0, &p), Err(Refused::Revalidate));
    for h in ["max-age=10, proxy-revalidate", "s-maxage=10"] {
        let shared = kept(&[("Cache-Control", h)], true);
        assert_eq!(serve(&shared, T0 + 9000.0, &p), Err(Refused::Revalidate));
        let private = kept(&[("Cache-Control", h)], false);
        assert!(serve(&private, T0 + 9000.0, &p).is_ok(), "{h}");
    }
    let k = kept(&[], false);
    let asked = cc(&["no-cache"]);
    let r = servable(&k, T0, Failure::Deadline, &p, &asked);
    assert_eq!(r, Err(Refused::Asked));
    for status in [200, 304, 399] {
        let r = servable(
            &k,
            T0,
            Failure::Status(status),
            &p,
            &CacheControl::default(),
        );
        assert_eq!(r, Err(Refused::NotAFailure));
    }
    for failure in [
        Failure::Network,
        Failure::Timeout,
        Failure::BreakerOpen,
        Failure::Throttled,
        Failure::RateLimited,
        Failure::BudgetSpent,
        Failure::Deadline,
        Failure::Status(503),
        Failure::Status(429),
    ] {
        let r = servable(&k, T0, failure, &p, &CacheControl::default());
        assert!(r.is_ok(), "{failure:?}");
    }
    assert!(Failure::BreakerOpen.before_sending() && !Failure::Timeout.before_sending());
}

proptest! {
    #[test]
    fn age_grows_with_time_and_the_age_header_is_its_whole_seconds(
        age in 0u32..100_000, wait in 0.0f64..1e9, more in 0.0f64..1e9,
    ) {
        let line = age.to_string();
        let k = kept(&[("Age", &line)], false);
        let p = StalePolicy { max_stale_ms: 2_147_483_647, cap_ms: 2_147_483_647,
            ..StalePolicy::default() };
        let (a, b) = (k.age_ms(T0 + wait), k.age_ms(T0 + wait + more));
        prop_assert!(a <= b);
        if let Ok(s) = serve(&k, T0 + wait, &p) {
            prop_assert_eq!(f64::from(s.age_s), (a / 1000.0).floor());
        }
    }
}

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
    assert_eq!(section::check(None), Ok(None));
    assert_eq!(section::check(Some(&Value::Null)), Ok(None));
    assert_eq!(section::check(Some(&Value::Bool(false))), Ok(None));
    let on = section::check(Some(&Value::Bool(true)));
    assert_eq!(on, Ok(Some(StalePolicy::default())));
    let given = map(&[
        ("maxStaleMs", n(5.0)),
        ("capMs", n(9.0)),
        ("maxBodyBytes", n(0.0)),
        ("maxEntries", n(3.0)),
        ("maxBytes", n(100.0)),
        ("private", Value::Bool(true)),
    ]);
    let p = section::check(Some(&given));
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
    let small = section::check(Some(&map(&[("capMs", n(1000.0))])));
    assert_eq!(small.map(|p| p.map(|p| p.max_stale_ms)), Ok(Some(1000)));
    for row in section::FIELDS {
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
        let e = section::check(Some(&given)).expect_err("rejected");
        assert_eq!(e.kind, kind, "{given:?}");
        assert_eq!(e.message, words);
        assert!(e.message.contains(&e.path), "{}", e.message);
    }
}

#[test]
fn the_store_drops_the_least_recently_used_by_entries_and_bytes() {
    let mut s = Lru::new(2, 100);
    assert_eq!(s.put("a", 1, 10), Put::Kept(vec![]));
    assert_eq!(s.put("b", 2, 10), Put::Kept(vec![]));
    assert_eq!(s.get("a"), Some(&1)); // b is now the oldest
    assert_eq!(s.put("c", 3, 10), Put::Kept(vec!["b".to_owned()]));
    assert_eq!((s.len(), s.bytes()), (2, 20));
    assert_eq!(s.put("d", 4, 85), Put::Kept(vec!["a".to_owned()]));
    assert_eq!(
        s.put("e", 5, 60),
        Put::Kept(vec!["c".to_owned(), "d".to_owned()])
    );
    assert_eq!(s.put("e", 6, 101), Put::TooLarge);
    assert!(s.is_empty() && s.peek("e").is_none());
    assert!(s.put("f", 7, 100) == Put::Kept(vec![]) && s.delete("f") && !s.delete("f"));
    assert_eq!((s.len(), s.bytes()), (0, 0));
}

proptest! {
    #[test]
    fn the_store_keeps_its_bounds_and_matches_a_simple_model(
        ops in prop::collection::vec((0u8..3, 0u8..6, 0u64..40), 0..60),
    ) {
        let mut s = Lru::new(3, 50);
        // The model: keys in use order, oldest first, with their sizes.
        let mut model: Vec<(String, u64)> = Vec::new();
        for (op, k, bytes) in ops {
            let k = k.to_string();
            match op {
                0 => {
                    let got = s.put(&k, bytes, bytes);
                    model.retain(|(m, _)| *m != k);
                    if bytes > 50 {
                        prop_assert_eq!(got, Put::TooLarge);
                        continue;
                    }
                    model.push((k, bytes));
                    let mut dropped = Vec::new();
                    while model.len() > 3 || model.iter().map(|m| m.1).sum::<u64>() > 50 {
                        dropped.push(model.remove(0).0);
                    }
                    prop_assert_eq!(got, Put::Kept(dropped));
                }
                1 => {
                    let held = s.get(&k).copied();
                    let at = model.iter().position(|(m, _)| *m == k);
                    prop_assert_eq!(held, at.map(|i| model[i].1));
                    if let Some(i) = at {
                        let m = model.remove(i);
                        model.push(m);
                    }
                }
                _ => {
                    let had = model.iter().any(|(m, _)| *m == k);
                    model.retain(|(m, _)| *m != k);
                    prop_assert_eq!(s.delete(&k), had);
                }
            }
            prop_assert!(s.len() <= 3 && s.bytes() <= 50);
            prop_assert_eq!(s.bytes(), model.iter().map(|m| m.1).sum::<u64>());
        }
    }
}
