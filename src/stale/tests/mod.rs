//! The stale rules' tests: `Cache-Control` and keeping here, a file each for serving, the
//! section and the store.

use super::*;
use crate::policy::PolicyErrorKind;
use proptest::prelude::*;

mod lru;
mod section;
mod serve;

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
    let unclosed = cc(&["", ",,, ,", "x=\"unclosed, no-store"]);
    assert_eq!(unclosed, CacheControl::default());
    // A stray quote outside an argument hides nothing.
    assert!(cc(&["a\"b, no-store"]).no_store);
    assert!(cc(&["x=1\"2, no-store, y=\"3\""]).no_store);
    assert!(!cc(&["no-storex, xno-store"]).no_store);
}

proptest! {
    #[test]
    fn cache_control_reads_the_same_in_any_case_order_and_split_into_lines(
        picks in prop::collection::vec((0usize..10, any::<bool>()), 0..8),
        cut in 0usize..8,
    ) {
        let pool = [
            "no-store", "no-cache", "private", "public", "must-revalidate", "proxy-revalidate",
            "max-age=60", "s-maxage=\"5\"", "stale-if-error=30", "stale-while-revalidate=7",
        ];
        let members: Vec<String> = picks
            .iter()
            .map(|&(i, upper)| {
                if upper { pool[i].to_ascii_uppercase() } else { pool[i].to_owned() }
            })
            .collect();
        let one = members.join(", ");
        let mut reversed = members.clone();
        reversed.reverse();
        let (a, b) = members.split_at(cut.min(members.len()));
        let whole = cc(&[&one]);
        prop_assert_eq!(&whole, &cc(&[&reversed.join(",")]));
        prop_assert_eq!(&whole, &cc(&[&a.join(" , "), &b.join(",")]));
    }

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
    let no_cache = ok(&[("Cache-Control", "no-cache=\"set-cookie\"")]);
    assert_eq!(may_keep(&GET, &no_cache, &p, false), Err(NotKept::NoCache));
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
fn a_write_that_succeeds_makes_what_is_kept_for_its_url_out_of_date() {
    for method in ["POST", "put", "DELETE", "PATCH", "PURGE"] {
        assert!(
            invalidates(method, 200) && invalidates(method, 303),
            "{method}"
        );
        assert!(
            !invalidates(method, 404) && !invalidates(method, 503),
            "{method}"
        );
    }
    for method in ["GET", "head", "OPTIONS", "TRACE"] {
        assert!(!invalidates(method, 200), "{method}");
    }
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
        prop_assert_eq!(one == two, a.trim_ascii() == b.trim_ascii());
        prop_assert_eq!(&one, &key("GET", "https://h/", &names, &[("X-B", &b), ("X-A", &a)]));
    }
}
