//! The resume core's tests: first responses, range requests, answers, the grammar (the
//! policy section's are in `section.rs`).

use super::*;
use proptest::prelude::*;

const TAG: &str = "\"v1\"";
const MODIFIED: &str = "Sun, 06 Nov 1994 08:49:37 GMT";
const LATER: &str = "Sun, 06 Nov 1994 08:49:38 GMT";

fn ok_200() -> Head<'static> {
    Head {
        status: 200,
        etag: Some(TAG),
        content_length: Some("1000"),
        ..Head::default()
    }
}

fn part(range: &'static str) -> Head<'static> {
    Head {
        status: 206,
        etag: Some(TAG),
        content_range: Some(range),
        ..Head::default()
    }
}

fn body(head: &Head) -> Body {
    Body::from_first("GET", head).expect("resumable")
}

#[test]
fn a_strong_etag_is_the_validator() {
    let b = body(&ok_200());
    assert_eq!(b.validator(), &Validator::ETag(TAG.into()));
    let r = b.request(400).expect("ok").expect("a request");
    assert_eq!(r.range, "bytes=400-");
    assert_eq!(r.if_range, TAG);
    assert_eq!(b.remaining(400), Some(600));
}

#[test]
fn last_modified_serves_only_when_strong() {
    let mut head = Head {
        etag: None,
        last_modified: Some(MODIFIED),
        date: Some(LATER),
        ..ok_200()
    };
    assert_eq!(
        body(&head).validator(),
        &Validator::LastModified(MODIFIED.into())
    );
    // The same second, or no Date: implicitly weak (§8.8.2.2).
    head.date = Some(MODIFIED);
    assert_eq!(Body::from_first("GET", &head), Err(Refusal::WeakValidator));
    head.date = None;
    assert_eq!(Body::from_first("GET", &head), Err(Refusal::WeakValidator));
    head.date = Some("yesterday");
    assert_eq!(Body::from_first("GET", &head), Err(Refusal::WeakValidator));
    // A weak ETag never serves, and bars the date: If-Range may carry a date only when the
    // client has no entity tag (§13.1.5).
    let mut head = Head {
        etag: Some("W/\"v1\""),
        last_modified: Some(MODIFIED),
        date: Some("Mon, 07 Nov 1994 08:49:37 GMT"),
        ..ok_200()
    };
    assert_eq!(Body::from_first("GET", &head), Err(Refusal::WeakValidator));
    // An ETag that is no entity tag is none: the date serves.
    head.etag = Some("v1");
    assert!(matches!(
        body(&head).validator(),
        Validator::LastModified(_)
    ));
    let weak = Head {
        etag: Some("W/\"v1\""),
        ..ok_200()
    };
    assert_eq!(Body::from_first("GET", &weak), Err(Refusal::WeakValidator));
}

#[test]
fn first_responses_that_cannot_be_resumed_say_why() {
    let base = ok_200();
    for (method, head, why) in [
        ("POST", base, Refusal::NotGet),
        ("HEAD", base, Refusal::NotGet),
        (
            "GET",
            Head {
                status: 203,
                ..base
            },
            Refusal::Status(203),
        ),
        (
            "GET",
            Head {
                content_encoding: Some("gzip"),
                ..base
            },
            Refusal::Encoded,
        ),
        (
            "GET",
            Head {
                content_encoding: Some("identity, br"),
                ..base
            },
            Refusal::Encoded,
        ),
        (
            "GET",
            Head {
                accept_ranges: Some("none"),
                ..base
            },
            Refusal::RangesRefused,
        ),
        (
            "GET",
            Head {
                accept_ranges: Some("items"),
                ..base
            },
            Refusal::RangesRefused,
        ),
        ("GET", Head { etag: None, ..base }, Refusal::NoValidator),
        (
            "GET",
            Head {
                etag: Some("unquoted"),
                ..base
            },
            Refusal::NoValidator,
        ),
        (
            "GET",
            Head {
                status: 206,
                content_range: Some("bytes */1000"),
                ..base
            },
            Refusal::NotOneRange,
        ),
        (
            "GET",
            Head {
                status: 206,
                content_range: None,
                ..base
            },
            Refusal::NotOneRange,
        ),
    ] {
        assert_eq!(
            Body::from_first(method, &head),
            Err(why),
            "{method} {head:?}"
        );
        assert!(why.message().starts_with("the body cannot be resumed"));
    }
    let fine = Head {
        content_encoding: Some("identity"),
        accept_ranges: Some("bytes"),
        ..base
    };
    assert!(Body::from_first("get", &fine).is_ok());
}

#[test]
fn a_first_206_is_resumed_within_its_range() {
    let b = body(&Head {
        content_length: Some("100"),
        ..part("bytes 500-599/1000")
    });
    let r = b.request(40).expect("ok").expect("a request");
    assert_eq!(r.range, "bytes=540-599");
    assert_eq!(b.remaining(40), Some(60));
    assert_eq!(b.request(100), Ok(None));
    assert_eq!(b.request(101), Err(Refusal::Overrun));
    assert_eq!(
        b.check(40, &part("bytes 540-599/1000")),
        Ok(Splice {
            first: 540,
            end: 600,
            complete: Some(1000)
        })
    );
    assert_eq!(
        b.check(40, &part("bytes 540-999/1000")),
        Err(Refusal::WrongEnd {
            expected: 599,
            got: 999
        })
    );
    assert_eq!(
        Body::from_first(
            "GET",
            &Head {
                content_length: Some("99"),
                ..part("bytes 500-599/1000")
            }
        ),
        Err(Refusal::LengthMismatch)
    );
}

#[test]
fn answers_are_spliced_only_when_they_continue_the_body() {
    let b = body(&ok_200());
    assert_eq!(
        b.check(400, &part("bytes 400-999/1000")),
        Ok(Splice {
            first: 400,
            end: 1000,
            complete: Some(1000)
        })
    );
    // `*`: the server does not know the length, which does not disagree.
    assert!(b.check(400, &part("bytes 400-999/*")).is_ok());
    // A shorter part is spliced; the rest is asked for after it.
    assert!(b.check(400, &part("bytes 400-499/1000")).is_ok());
    let mut moved = part("bytes 400-999/1000");
    moved.etag = Some("\"v2\"");
    let mut untagged = moved;
    untagged.etag = None;
    let mut weak = moved;
    weak.etag = Some("W/\"v1\"");
    let mut long = part("bytes 400-999/1000");
    long.content_length = Some("601");
    let mut gzip = part("bytes 400-999/1000");
    gzip.content_encoding = Some("gzip");
    for (answer, why) in [
        (
            Head {
                status: 200,
                ..ok_200()
            },
            Refusal::Whole,
        ),
        (
            Head {
                status: 416,
                content_range: Some("bytes */1000"),
                ..ok_200()
            },
            Refusal::Unsatisfiable,
        ),
        (
            Head {
                status: 304,
                ..ok_200()
            },
            Refusal::AnswerStatus(304),
        ),
        (moved, Refusal::Changed),
        (untagged, Refusal::Changed),
        (weak, Refusal::Changed),
        (
            part("bytes 0-999/1000"),
            Refusal::WrongStart {
                expected: 400,
                got: 0,
            },
        ),
        (
            part("bytes 401-999/1000"),
            Refusal::WrongStart {
                expected: 400,
                got: 401,
            },
        ),
        (
            part("bytes 400-1099/1100"),
            Refusal::WrongEnd {
                expected: 999,
                got: 1099,
            },
        ),
        (
            part("bytes 400-999/2000"),
            Refusal::LengthChanged {
                expected: 1000,
                got: 2000,
            },
        ),
        (part("bytes 400-999"), Refusal::BadContentRange),
        (part("items 400-999/1000"), Refusal::BadContentRange),
        (long, Refusal::LengthMismatch),
        (gzip, Refusal::Encoded),
    ] {
        assert_eq!(b.check(400, &answer), Err(why), "{answer:?}");
        assert!(!why.message().is_empty() && !why.code().is_empty());
    }
}

#[test]
fn a_body_of_unknown_length_learns_it_from_the_first_part() {
    let mut b = body(&Head {
        content_length: None,
        ..ok_200()
    });
    assert_eq!(b.remaining(10), None);
    let r = b.request(10).expect("ok").expect("a request");
    assert_eq!(r.range, "bytes=10-");
    let s = b.check(10, &part("bytes 10-99/100")).expect("spliced");
    b.learn(&s);
    assert_eq!(b.remaining(50), Some(50));
    assert_eq!(b.request(100), Ok(None));
    assert_eq!(
        b.check(50, &part("bytes 50-99/120")),
        Err(Refusal::LengthChanged {
            expected: 100,
            got: 120
        })
    );
}

#[test]
fn last_modified_answers_must_carry_the_same_date() {
    let b = body(&Head {
        etag: None,
        last_modified: Some(MODIFIED),
        date: Some(LATER),
        ..ok_200()
    });
    let r = b.request(1).expect("ok").expect("a request");
    assert_eq!(r.if_range, MODIFIED);
    let mut answer = part("bytes 1-999/1000");
    answer.etag = None;
    answer.last_modified = Some(MODIFIED);
    assert!(b.check(1, &answer).is_ok());
    answer.last_modified = Some(LATER);
    assert_eq!(b.check(1, &answer), Err(Refusal::Changed));
}

#[test]
fn content_range_is_read_robustly() {
    use ContentRange::*;
    for (value, read) in [
        (
            "bytes 0-499/1234",
            Some(Bytes {
                first: 0,
                last: 499,
                complete: Some(1234),
            }),
        ),
        (
            "  BYTES  734-1233/1234 ",
            Some(Bytes {
                first: 734,
                last: 1233,
                complete: Some(1234),
            }),
        ),
        (
            "bytes 5-5/*",
            Some(Bytes {
                first: 5,
                last: 5,
                complete: None,
            }),
        ),
        ("bytes */1234", Some(Unsatisfied { complete: 1234 })),
        ("bytes */*", None),
        ("bytes 0-1234/1234", None),
        ("bytes 9-3/100", None),
        ("bytes 0-499", None),
        ("bytes -1-499/1000", None),
        ("bytes 0-+4/10", None),
        ("bytes0-4/10", None),
        ("bytes 0-18446744073709551616/*", None),
        ("", None),
        ("é", None),
        ("garbage", None),
    ] {
        assert_eq!(ContentRange::parse(value), read, "{value:?}");
    }
}

#[test]
fn entity_tags_compare_strongly() {
    let strong = EntityTag::parse(" \"xyzzy\" ").expect("a tag");
    let weak = EntityTag::parse("W/\"xyzzy\"").expect("a tag");
    assert!(!strong.weak && weak.weak);
    assert!(strong.strong_eq(strong));
    assert!(!strong.strong_eq(weak) && !weak.strong_eq(weak));
    assert!(EntityTag::parse("\"\"").is_some());
    for bad in ["xyzzy", "\"a\", \"b\"", "\"a b\"", "w/\"a\"", "\"", ""] {
        assert_eq!(EntityTag::parse(bad), None, "{bad:?}");
    }
}

#[test]
fn resumes_are_counted_against_the_policy() {
    let p = ResumePolicy { max_resumes: 2 };
    assert!(may_resume(0, &p).is_ok() && may_resume(1, &p).is_ok());
    assert_eq!(may_resume(2, &p), Err(Refusal::Exhausted { resumes: 2 }));
}

proptest! {
    /// Any cuts of a body: each resume asks for exactly the next byte, and the answer that
    /// serves it is spliced; the parts add up to the body, no byte sent twice.
    #[test]
    fn cuts_anywhere_resume_at_the_cut(len in 1u64..10_000, cuts in prop::collection::vec(0u64..10_000, 0..6)) {
        let length = {
            let mut s = String::new();
            headers::push_u64(&mut s, len);
            s
        };
        let first = Head { content_length: Some(&length), ..ok_200() };
        let mut b = body(&first);
        let mut received = 0;
        let mut cuts: Vec<u64> = cuts.into_iter().map(|c| c % len).collect();
        cuts.sort_unstable();
        for cut in cuts {
            if cut < received {
                continue;
            }
            received = cut;
            let r = b.request(received).expect("ok").expect("more to ask for");
            prop_assert_eq!(&r.range, &format!("bytes={received}-"));
            let range = format!("bytes {received}-{}/{len}", len - 1);
            let answer = Head { content_range: Some(&range), ..part("") };
            let s = b.check(received, &answer).expect("spliced");
            b.learn(&s);
            prop_assert_eq!(s.first, received);
            prop_assert_eq!(s.end, len);
        }
        prop_assert_eq!(b.request(len), Ok(None));
    }

    /// Content-Range never panics, and what it reads is a possible range.
    #[test]
    fn content_range_never_panics(s in "[ -~]{0,40}") {
        if let Some(ContentRange::Bytes { first, last, complete }) = ContentRange::parse(&s) {
            prop_assert!(first <= last);
            prop_assert!(complete.is_none_or(|c| last < c));
        }
    }
}
