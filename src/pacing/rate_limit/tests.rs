use super::*;

/// 2023-11-14T22:13:20Z.
const NOW: f64 = 1_700_000_000_000.0;

fn draft(ratelimit: &str, policy: Option<&str>) -> Option<Quota> {
    parse(
        &Headers {
            ratelimit: Some(ratelimit),
            policy,
            ..Headers::default()
        },
        NOW,
    )
}

fn split(remaining: &str, reset: &str, limit: Option<&str>) -> Option<Quota> {
    parse(
        &Headers {
            remaining: Some(remaining),
            reset: Some(reset),
            limit,
            ..Headers::default()
        },
        NOW,
    )
}

fn quota(remaining: u32, reset_ms: f64, limit: Option<u32>, window_ms: Option<f64>) -> Quota {
    Quota {
        remaining,
        reset_ms,
        limit,
        window_ms,
    }
}

#[test]
fn no_headers_no_quota() {
    assert_eq!(parse(&Headers::default(), NOW), None);
}

#[test]
fn draft_with_policy() {
    assert_eq!(
        draft(r#""default";r=0;t=30"#, Some(r#""default";q=100;w=60"#)),
        Some(quota(0, 30_000.0, Some(100), Some(60_000.0)))
    );
}

#[test]
fn draft_without_policy() {
    assert_eq!(
        draft(r#""default";r=7;t=5"#, None),
        Some(quota(7, 5_000.0, None, None))
    );
    // A policy of another name says nothing of this member.
    assert_eq!(
        draft(r#""default";r=7;t=5"#, Some(r#""other";q=9;w=9"#)),
        Some(quota(7, 5_000.0, None, None))
    );
}

#[test]
fn least_remaining_member_wins() {
    assert_eq!(
        draft(
            r#""a";r=5;t=10, "b";r=2;t=20, "c";r=9;t=1"#,
            Some(r#""a";q=10;w=10, "b";q=50;w=60, "c";q=99;w=1"#)
        ),
        Some(quota(2, 20_000.0, Some(50), Some(60_000.0)))
    );
}

#[test]
fn equal_remaining_takes_the_later_reset() {
    let expected = Some(quota(2, 20_000.0, None, None));
    assert_eq!(draft(r#""a";r=2;t=10, "b";r=2;t=20"#, None), expected);
    assert_eq!(draft(r#""b";r=2;t=20, "a";r=2;t=10"#, None), expected);
}

#[test]
fn policy_found_by_name() {
    let policy = Some(r#""day";q=1000;w=86400, "burst";q=10;w=1"#);
    assert_eq!(
        draft(r#""burst";r=3;t=1"#, policy),
        Some(quota(3, 1_000.0, Some(10), Some(1_000.0)))
    );
    assert_eq!(
        draft(r#""day";r=3;t=7"#, policy),
        Some(quota(3, 7_000.0, Some(1000), Some(86_400_000.0)))
    );
    // The first usable policy of a name counts.
    assert_eq!(
        draft(
            r#""a";r=1;t=1"#,
            Some(r#""a";q=x, "a";q=5;w=6, "a";q=7;w=8"#)
        ),
        Some(quota(1, 1_000.0, Some(5), Some(6_000.0)))
    );
}

#[test]
fn missing_t_uses_the_policy_window() {
    assert_eq!(
        draft(r#""a";r=3"#, Some(r#""a";q=10;w=60"#)),
        Some(quota(3, 60_000.0, Some(10), Some(60_000.0)))
    );
    assert_eq!(draft(r#""a";r=3"#, None), None);
    assert_eq!(draft(r#""a";r=3"#, Some(r#""b";q=10;w=60"#)), None);
    assert_eq!(draft(r#""a";r=3"#, Some(r#""a";q=10"#)), None);
    // An unusable member is skipped, the others still count.
    assert_eq!(
        draft(r#""a";r=0, "b";r=4;t=2"#, None),
        Some(quota(4, 2_000.0, None, None))
    );
}

#[test]
fn tokens_and_quoted_names_match() {
    let expected = Some(quota(1, 2_000.0, Some(5), Some(10_000.0)));
    assert_eq!(draft("default;r=1;t=2", Some("default;q=5;w=10")), expected);
    assert_eq!(
        draft("default;r=1;t=2", Some(r#""default";q=5;w=10"#)),
        expected
    );
    assert_eq!(
        draft(r#""default";r=1;t=2"#, Some("default;q=5;w=10")),
        expected
    );
    // Escapes are compared unescaped.
    assert_eq!(
        draft(r#""a\"b\\";r=1;t=2"#, Some(r#""x", "a\"b\\";q=5;w=10"#)),
        expected
    );
    assert_eq!(
        draft(r#""a\"b";r=1;t=2"#, Some(r#""a\\b";q=5;w=10"#)),
        Some(quota(1, 2_000.0, None, None))
    );
    // Tokens may hold `*`, `:` and `/`; names are case-sensitive.
    assert_eq!(draft("*x:y/z;r=1;t=2", Some("*x:y/z;q=5;w=10")), expected);
    assert_eq!(
        draft("Default;r=1;t=2", Some("default;q=5;w=10")),
        Some(quota(1, 2_000.0, None, None))
    );
}

#[test]
fn whitespace_and_unknown_parameters() {
    assert_eq!(
        draft(
            " \t\"a\" ;r=1 ; t=2 ;pk=:YWJj=:;qu ,\t\"b\";r=0;t=5;x-y.z*=\"q;r=9,\\\"\"  ",
            Some("  \"b\";q=10;w=60;qu=\"x;y, z\";pk=:YWJj: , \"a\";q=1;w=1 \t")
        ),
        Some(quota(0, 5_000.0, Some(10), Some(60_000.0)))
    );
    // A later parameter replaces an earlier one of the same key.
    assert_eq!(
        draft("a;r=9;t=1;r=3", None),
        Some(quota(3, 1_000.0, None, None))
    );
}

#[test]
fn malformed_members_are_unusable() {
    for bad in [
        "a;r=abc;t=1",
        "a;r=-1;t=1",
        "a;r=1.5;t=1",
        "a;r=;t=1",
        "a;r;t=1",
        "a;r=\"1\";t=1",
        "a;r=1;t=-1",
        "a;r=1;t=x",
        "a;r=1;t",
        "a;t=1",
        "a;r=1234567890123456789;t=1",
    ] {
        assert_eq!(draft(bad, None), None, "{bad}");
        // Even with a policy window to fall back on.
        assert_eq!(draft(bad, Some("a;q=1;w=1")), None, "{bad}");
        // A good member beside the bad one is still taken.
        let both = [bad, ", b;r=8;t=3"].concat();
        assert_eq!(
            draft(&both, None),
            Some(quota(8, 3_000.0, None, None)),
            "{bad}"
        );
    }
}

#[test]
fn malformed_policies_are_ignored() {
    // A bad `q` or `w` makes the policy member unusable: no limit, no window fallback.
    for bad in ["a;q=x;w=60", "a;q=10;w=-60", "a;q=10;w=6.0", "a;q;w=60"] {
        assert_eq!(
            draft("a;r=1;t=2", Some(bad)),
            Some(quota(1, 2_000.0, None, None)),
            "{bad}"
        );
        assert_eq!(draft("a;r=1", Some(bad)), None, "{bad}");
    }
    // A policy field that does not parse at all.
    for bad in ["a;q=1;w=1, \"b", "a;q=1;w=1,", "a;q=1;w=1 junk", "!"] {
        assert_eq!(
            draft("a;r=1;t=2", Some(bad)),
            Some(quota(1, 2_000.0, None, None)),
            "{bad}"
        );
    }
    // An empty policy field is absent.
    assert_eq!(
        draft("a;r=1;t=2", Some(" ")),
        Some(quota(1, 2_000.0, None, None))
    );
}

#[test]
fn malformed_fields_are_ignored() {
    for bad in [
        "",
        " \t ",
        "garbage here",
        "!!!",
        "\"unterminated;r=1;t=2",
        "\"bad\\escape\";r=1;t=2",
        "\"ctl\u{1}\";r=1;t=2",
        "\"é\";r=1;t=2",
        "a;r=1;t=2,",
        "a;r=1;t=2,,b;r=1;t=2",
        "a;R=1;t=2",
        "a;r=1;t=2;",
        "1;r=1;t=2",
        "(a b);r=1;t=2",
        "a;r=1;t=2 b;r=0;t=1",
        "\"a\"=1",
        ",a;r=1;t=2",
    ] {
        assert_eq!(draft(bad, Some("a;q=1;w=1")), None, "{bad:?}");
    }
}

#[test]
fn huge_numbers_saturate_or_clamp() {
    assert_eq!(
        draft(
            "a;r=99999999999;t=999999999999999999",
            Some("a;q=123456789012345678;w=1000000")
        ),
        Some(quota(u32::MAX, MAX_RESET_MS, Some(u32::MAX), Some(1e9)))
    );
    assert_eq!(
        draft("a;r=4294967295;t=86400", None),
        Some(quota(u32::MAX, MAX_RESET_MS, None, None))
    );
    assert_eq!(
        draft("a;r=4294967294;t=86399", None),
        Some(quota(u32::MAX - 1, 86_399_000.0, None, None))
    );
    assert_eq!(draft("a;r=1;t=1234567890123456789", None), None);
    assert_eq!(
        draft("a;r=000000000000000001;t=0", None),
        Some(quota(1, 0.0, None, None))
    );
}

#[test]
fn dictionary_form() {
    assert_eq!(
        draft("limit=100, remaining=0, reset=30", None),
        Some(quota(0, 30_000.0, Some(100), None))
    );
    assert_eq!(
        draft(" reset=5,remaining=9\t", Some("remaining;q=1;w=1")),
        Some(quota(9, 5_000.0, None, None))
    );
    // Parameters and unknown keys are ignored; a later key wins; a bad limit is dropped.
    assert_eq!(
        draft(
            "remaining=4;w=1, reset=6, policy=\"x\", remaining=3, limit=abc",
            None
        ),
        Some(quota(3, 6_000.0, None, None))
    );
    for bad in [
        "limit=100, remaining=0",
        "limit=100, reset=30",
        "remaining=abc, reset=30",
        "remaining=1, reset=-30",
        "remaining=1, reset=1.5",
        "remaining, reset=30",
        "remaining=1, reset=30, remaining=x",
        "\"remaining\"=1, reset=30",
        "remaining=1, reset=\"30",
    ] {
        assert_eq!(draft(bad, None), None, "{bad}");
    }
}

#[test]
fn split_delta_seconds() {
    assert_eq!(
        split("5", "30", Some("60")),
        Some(quota(5, 30_000.0, Some(60), None))
    );
    assert_eq!(
        split(" 5\t", "\t30 ", None),
        Some(quota(5, 30_000.0, None, None))
    );
    assert_eq!(split("0", "0", None), Some(quota(0, 0.0, None, None)));
    assert_eq!(split("5", "1.5", None), Some(quota(5, 1_500.0, None, None)));
    assert_eq!(split("5", "0.25", None), Some(quota(5, 250.0, None, None)));
    assert_eq!(
        split("5", "1000000000", None),
        Some(quota(5, MAX_RESET_MS, None, None))
    );
    assert_eq!(
        split(
            "99999999999",
            "86399.000000000000000001",
            Some("4294967296")
        ),
        Some(quota(u32::MAX, 86_399_000.0, Some(u32::MAX), None))
    );
}

#[test]
fn split_epochs() {
    // Epoch seconds (GitHub), epoch milliseconds, fractions of either.
    assert_eq!(
        split("1", "1700000042", None),
        Some(quota(1, 42_000.0, None, None))
    );
    assert_eq!(
        split("1", "1700000000.25", None),
        Some(quota(1, 250.0, None, None))
    );
    assert_eq!(
        split("1", "1700000042500", None),
        Some(quota(1, 42_500.0, None, None))
    );
    assert_eq!(
        split("1", "1700000000000.5", None),
        Some(quota(1, 0.5, None, None))
    );
    // Past epochs, far epochs, odd clocks.
    assert_eq!(
        split("1", "1600000000", None),
        Some(quota(1, 0.0, None, None))
    );
    assert_eq!(
        split("1", "1000000001", None),
        Some(quota(1, 0.0, None, None))
    );
    assert_eq!(
        split("1", "1600000000000", None),
        Some(quota(1, 0.0, None, None))
    );
    assert_eq!(
        split("1", "1800000000", None),
        Some(quota(1, MAX_RESET_MS, None, None))
    );
    let headers = Headers {
        remaining: Some("1"),
        reset: Some("1700000042"),
        ..Headers::default()
    };
    for (now, reset_ms) in [
        (f64::NAN, 0.0),
        (f64::INFINITY, 0.0),
        (f64::NEG_INFINITY, MAX_RESET_MS),
    ] {
        assert_eq!(
            parse(&headers, now),
            Some(quota(1, reset_ms, None, None)),
            "{now}"
        );
    }
}

#[test]
fn split_malformed() {
    for bad in [
        "",
        " ",
        "-1",
        "+1",
        "1.",
        ".5",
        "1.2.3",
        "1e3",
        "abc",
        "1 2",
        "0x10",
        "1234567890123456789",
    ] {
        assert_eq!(split("5", bad, None), None, "reset {bad:?}");
        if !bad.contains('.') {
            assert_eq!(split(bad, "5", None), None, "remaining {bad:?}");
        }
        // A bad limit is dropped, the rest stands.
        assert_eq!(
            split("5", "5", Some(bad)),
            Some(quota(5, 5_000.0, None, None)),
            "limit {bad:?}"
        );
    }
    assert_eq!(split("1.5", "5", None), None);
    let only_remaining = Headers {
        remaining: Some("5"),
        limit: Some("9"),
        ..Headers::default()
    };
    assert_eq!(parse(&only_remaining, NOW), None);
    let only_reset = Headers {
        reset: Some("5"),
        limit: Some("9"),
        ..Headers::default()
    };
    assert_eq!(parse(&only_reset, NOW), None);
}

#[test]
fn both_forms_lower_remaining_wins() {
    let both = |ratelimit, remaining, reset| {
        parse(
            &Headers {
                ratelimit: Some(ratelimit),
                policy: Some("a;q=100;w=60"),
                remaining: Some(remaining),
                reset: Some(reset),
                limit: Some("50"),
            },
            NOW,
        )
    };
    let draft_quota = Some(quota(3, 30_000.0, Some(100), Some(60_000.0)));
    assert_eq!(both("a;r=3;t=30", "5", "10"), draft_quota);
    assert_eq!(
        both("a;r=5;t=30", "3", "40"),
        Some(quota(3, 40_000.0, Some(50), None))
    );
    // Equal remaining: the earlier reset (an exact epoch beats a whole-second delta).
    assert_eq!(
        both("a;r=3;t=30", "3", "1700000029.5"),
        Some(quota(3, 29_500.0, Some(50), None))
    );
    assert_eq!(both("a;r=3;t=30", "3", "31"), draft_quota);
    assert_eq!(both("a;r=3;t=30", "3", "30"), draft_quota);
    // A malformed form is ignored, the other one stands.
    assert_eq!(
        both("a;r=x;t=30", "5", "10"),
        Some(quota(5, 10_000.0, Some(50), None))
    );
    assert_eq!(
        both("\"a;r=1;t=30", "5", "10"),
        Some(quota(5, 10_000.0, Some(50), None))
    );
    assert_eq!(both("a;r=3;t=30", "-1", "10"), draft_quota);
    assert_eq!(both("a;r=3;t=30", "1", "soon"), draft_quota);
}

mod properties;
