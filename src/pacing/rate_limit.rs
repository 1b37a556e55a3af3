//! Rate-limit headers: what a response says of the quota left on its origin.
//!
//! Two forms are read:
//!
//! - **The draft's fields** (draft-ietf-httpapi-ratelimit-headers), structured-field
//!   lists: `RateLimit: "default";r=0;t=30` (`r` requests remaining, reset in `t`
//!   seconds) and `RateLimit-Policy: "default";q=100;w=60` (a quota of `q` per window of
//!   `w` seconds). A member's name is a quoted string or a token (the same text matches
//!   either way); unknown parameters are skipped. Of the usable `RateLimit` members the
//!   one with the least `r` is taken (ties: the later reset, then the later member); the
//!   policy of the same name gives its `limit` and `window_ms`, and its `w` stands in for
//!   a missing `t`. The older draft's dictionary, `RateLimit: limit=100, remaining=0,
//!   reset=30`, is read too.
//! - **Split fields**: `RateLimit-Remaining`, `-Reset` and `-Limit`, or their
//!   `X-RateLimit-*` forerunners. A reset is seconds from now (a decimal fraction is
//!   allowed), or an epoch when large: above 1e9 epoch seconds (GitHub), above 1e12 epoch
//!   milliseconds. A past epoch is a reset of 0.
//!
//! When both forms are usable, the lower `remaining` wins (the stricter quota is the one
//! to respect), then the earlier reset (an epoch is exact, draft deltas are whole seconds).
//!
//! Malformed input is ignored, never an error: the draft has a client ignore a field that
//! fails to parse and a member with invalid parameters, so a bad form yields nothing while
//! the other form still counts. The values are untrusted and this ships in a size-bound
//! wasm, so numbers are read digit by digit (at most 18; counts saturate at `u32::MAX`),
//! resets are clamped to `0..=MAX_RESET_MS`, and nothing allocates, formats or panics.

/// What the rate-limit headers of one response say.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quota {
    /// Requests left in the current window.
    pub remaining: u32,
    /// Milliseconds from now until the quota resets (finite, `0..=MAX_RESET_MS`).
    pub reset_ms: f64,
    /// Requests per window, when a header says it.
    pub limit: Option<u32>,
    /// The window's length in ms, when a header says it.
    pub window_ms: Option<f64>,
}

/// The longest reset believed, in ms (a day); a later one is taken as this.
pub const MAX_RESET_MS: f64 = 86_400_000.0;

/// The raw header values of one response (each `None` when absent).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Headers<'a> {
    /// `RateLimit` (draft-ietf-httpapi-ratelimit-headers).
    pub ratelimit: Option<&'a str>,
    /// `RateLimit-Policy` (the same draft).
    pub policy: Option<&'a str>,
    /// `RateLimit-Remaining`, else `X-RateLimit-Remaining`.
    pub remaining: Option<&'a str>,
    /// `RateLimit-Reset`, else `X-RateLimit-Reset`.
    pub reset: Option<&'a str>,
    /// `RateLimit-Limit`, else `X-RateLimit-Limit`.
    pub limit: Option<&'a str>,
}

/// The quota the headers state, if any form of them is present and well formed.
///
/// `now_unix_ms` turns an epoch `reset` (split form) into a delay; a NaN clock counts
/// as "the reset has passed".
#[inline(never)]
pub fn parse(headers: &Headers<'_>, now_unix_ms: f64) -> Option<Quota> {
    let draft = headers
        .ratelimit
        .and_then(present)
        .and_then(|field| draft(field.as_bytes(), headers.policy.and_then(present)));
    match (draft, split(headers, now_unix_ms)) {
        (Some(draft), Some(split)) => Some(
            if split.remaining < draft.remaining
                || (split.remaining == draft.remaining && split.reset_ms < draft.reset_ms)
            {
                split
            } else {
                draft
            },
        ),
        (draft, split) => draft.or(split),
    }
}

/// The split form: `remaining` and `reset` (both needed) and `limit` (optional).
fn split(headers: &Headers<'_>, now_unix_ms: f64) -> Option<Quota> {
    let remaining = integer(present(headers.remaining?)?.as_bytes())?;
    let reset = number(present(headers.reset?)?)?;
    let reset_ms = if reset > 1e12 {
        reset - now_unix_ms
    } else if reset > 1e9 {
        reset * 1000.0 - now_unix_ms
    } else {
        reset * 1000.0
    };
    Some(Quota {
        remaining: saturate(remaining),
        reset_ms: clamp_reset(reset_ms),
        limit: headers
            .limit
            .and_then(present)
            .and_then(|limit| integer(limit.as_bytes()))
            .map(saturate),
        window_ms: None,
    })
}

/// The `RateLimit` field: a list (each member's `r` and `t`, the least `r` wins), or
/// the older draft's dictionary (`limit`, `remaining`, `reset`). `None` when the field
/// does not parse or no member is usable.
fn draft(field: &[u8], policy: Option<&str>) -> Option<Quota> {
    let mut best: Option<Quota> = None;
    let mut dictionary = false;
    let (mut remaining, mut reset, mut limit) = (Val::Absent, Val::Absent, Val::Absent);
    members(field, |m| {
        dictionary |= m.value.is_some();
        // In a dictionary a bare key is boolean true, never a number; a later key wins.
        let value = m.value.unwrap_or(Val::Bad);
        match m.name {
            b"remaining" => remaining = value,
            b"reset" => reset = value,
            b"limit" => limit = value,
            _ => {}
        }
        if let Some(quota) = list_member(m, policy)
            && best.is_none_or(|b| {
                quota.remaining < b.remaining
                    || (quota.remaining == b.remaining && quota.reset_ms >= b.reset_ms)
            })
        {
            best = Some(quota);
        }
    })?;
    if !dictionary {
        return best;
    }
    Some(Quota {
        remaining: saturate(remaining.int()?),
        reset_ms: clamp_reset(reset.int()? as f64 * 1000.0),
        limit: limit.int().map(saturate),
        window_ms: None,
    })
}

/// One `RateLimit` list member as a quota: `r` is needed, `t` (else the policy's `w`) too.
fn list_member(m: &Member<'_>, policy: Option<&str>) -> Option<Quota> {
    let Val::Int(remaining) = m.r else {
        return None;
    };
    let (q, w) = policy
        .and_then(|policy| policy_for(policy.as_bytes(), m.name))
        .unwrap_or_default();
    let reset = match m.t {
        Val::Int(t) => t,
        Val::Absent => w?,
        Val::Bad => return None,
    };
    Some(Quota {
        remaining: saturate(remaining),
        reset_ms: clamp_reset(reset as f64 * 1000.0),
        limit: q.map(saturate),
        // A window of no length says nothing about when the next one starts.
        window_ms: w.filter(|w| *w > 0).map(|w| w as f64 * 1000.0),
    })
}

/// The `q` and `w` of the first usable `RateLimit-Policy` member named `name` (a token
/// and a quoted string of the same text match). `None` when the field does not parse.
fn policy_for(field: &[u8], name: &[u8]) -> Option<(Option<u64>, Option<u64>)> {
    let mut found = None;
    members(field, |p| {
        if found.is_none()
            && unescaped(p.name).eq(unescaped(name))
            && !matches!(p.q, Val::Bad)
            && !matches!(p.w, Val::Bad)
        {
            found = Some((p.q.int(), p.w.int()));
        }
    })?;
    found
}

/// A parameter's (or dictionary member's) value, as far as this module cares.
#[derive(Clone, Copy)]
enum Val {
    /// Not given.
    Absent,
    /// A non-negative integer of at most 18 digits.
    Int(u64),
    /// Given, but not such an integer.
    Bad,
}

impl Val {
    fn int(self) -> Option<u64> {
        match self {
            Val::Int(n) => Some(n),
            _ => None,
        }
    }
}

/// One member of a `RateLimit` or `RateLimit-Policy` field.
struct Member<'a> {
    /// A token, or a quoted string's content with its escapes still in.
    name: &'a [u8],
    /// `Some` for `key=value` (the older draft's dictionary form).
    value: Option<Val>,
    r: Val,
    t: Val,
    q: Val,
    w: Val,
}

/// Calls `each` on every member of a structured-field list (or dictionary); `None`
/// when the field's structure is malformed, after which none of it may be trusted.
/// Leniencies: whitespace before `;` and unparsed values of unknown parameters.
fn members<'a>(field: &'a [u8], mut each: impl FnMut(&Member<'a>)) -> Option<()> {
    let mut s = field;
    loop {
        let (name, quoted, rest) = item(s)?;
        let mut m = Member {
            name,
            value: None,
            r: Val::Absent,
            t: Val::Absent,
            q: Val::Absent,
            w: Val::Absent,
        };
        s = rest;
        if let [b'=', rest @ ..] = s {
            if quoted {
                return None;
            }
            let (value, rest) = value(rest)?;
            m.value = Some(value);
            s = rest;
        }
        loop {
            s = ows(s);
            let [b';', rest @ ..] = s else { break };
            let (key, rest) = key(ows(rest))?;
            let (value, rest) = match rest {
                [b'=', rest @ ..] => value(rest)?,
                // A bare key is boolean true.
                _ => (Val::Bad, rest),
            };
            s = rest;
            match key {
                b"r" => m.r = value,
                b"t" => m.t = value,
                b"q" => m.q = value,
                b"w" => m.w = value,
                _ => {}
            }
        }
        each(&m);
        match s {
            [] => return Some(()),
            [b',', rest @ ..] => s = ows(rest),
            _ => return None,
        }
    }
}

/// An item (a quoted string or a token): its text, whether quoted, and what follows.
fn item(s: &[u8]) -> Option<(&[u8], bool, &[u8])> {
    match s {
        [b'"', rest @ ..] => {
            let (text, rest) = quoted(rest)?;
            Some((text, true, rest))
        }
        [first, ..] if first.is_ascii_alphabetic() || *first == b'*' => {
            let (text, rest) = split_at_first(s, |b| {
                !(b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~:/".contains(&b))
            });
            Some((text, false, rest))
        }
        _ => None,
    }
}

/// A parameter key (`lcalpha` or `*`, then `lcalpha`, digits, `_-.*`) and what follows.
fn key(s: &[u8]) -> Option<(&[u8], &[u8])> {
    match s {
        [b'a'..=b'z' | b'*', ..] => Some(split_at_first(
            s,
            |b| !matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' | b'.' | b'*'),
        )),
        _ => None,
    }
}

/// A value: a quoted string (never an integer) or a bare run up to the next delimiter.
fn value(s: &[u8]) -> Option<(Val, &[u8])> {
    if let [b'"', rest @ ..] = s {
        return Some((Val::Bad, quoted(rest)?.1));
    }
    let (run, rest) = split_at_first(s, |b| matches!(b, b';' | b',' | b' ' | b'\t' | b'"'));
    Some((integer(run).map_or(Val::Bad, Val::Int), rest))
}

/// The rest of a quoted string after its opening `"`: its content (escapes kept) and
/// what follows the closing `"`. `None` when unterminated or holding a forbidden byte.
fn quoted(s: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut i = 0;
    loop {
        match *s.get(i)? {
            b'"' => return Some((s.get(..i)?, s.get(i + 1..)?)),
            b'\\' => match s.get(i + 1)? {
                b'"' | b'\\' => i += 2,
                _ => return None,
            },
            b' '..=b'~' => i += 1,
            _ => return None,
        }
    }
}

/// A quoted string's content without its escapes (a token is unchanged).
fn unescaped(raw: &[u8]) -> impl Iterator<Item = u8> + '_ {
    let mut escaped = false;
    raw.iter().copied().filter(move |&b| {
        let keep = escaped || b != b'\\';
        escaped = !escaped && b == b'\\';
        keep
    })
}

fn split_at_first(s: &[u8], stop: impl Fn(u8) -> bool) -> (&[u8], &[u8]) {
    let at = s.iter().position(|&b| stop(b)).unwrap_or(s.len());
    s.split_at_checked(at).unwrap_or((s, &[]))
}

/// `s` without its leading spaces and tabs.
fn ows(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    s
}

/// A header value without surrounding whitespace; `None` when nothing is left.
fn present(value: &str) -> Option<&str> {
    let value = value.trim_ascii();
    (!value.is_empty()).then_some(value)
}

/// A non-negative integer of 1 to 18 ASCII digits (so it cannot overflow).
fn integer(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > 18 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(digits.iter().fold(0, |n, d| n * 10 + u64::from(d - b'0')))
}

/// A non-negative decimal: digits, optionally `.` and more digits (each part 1 to 18).
fn number(s: &str) -> Option<f64> {
    let Some((whole, fraction)) = s.split_once('.') else {
        return Some(integer(s.as_bytes())? as f64);
    };
    let scale = fraction.bytes().fold(1.0, |scale, _| scale * 10.0);
    Some(integer(whole.as_bytes())? as f64 + integer(fraction.as_bytes())? as f64 / scale)
}

fn saturate(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// `ms` within `0..=MAX_RESET_MS`; NaN is 0.
fn clamp_reset(ms: f64) -> f64 {
    if ms > 0.0 { ms.min(MAX_RESET_MS) } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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

    /// A member of a generated draft field: name index, quoted, then `r` and `t` (or `q`
    /// and `w`), each of which may be left out.
    type Gen = (usize, bool, Option<u64>, Option<u64>);

    const NAMES: [&str; 3] = ["default", "burst", "a*b/c"];

    fn render(members: &[Gen], first: &str, second: &str, pad: &str) -> String {
        let mut field = String::new();
        for (i, &(name, quoted, x, y)) in members.iter().enumerate() {
            if i > 0 {
                field.push_str(pad);
                field.push(',');
                field.push_str(pad);
            }
            let name = NAMES[name];
            if quoted {
                field.push_str(&format!("\"{name}\""));
            } else {
                field.push_str(name);
            }
            field.push_str(";pk=:YWJj:");
            if let Some(x) = x {
                field.push_str(&format!("{pad};{first}={x}"));
            }
            if let Some(y) = y {
                field.push_str(&format!(";{pad}{second}={y}"));
            }
            field.push_str(";qu=\"a, b;c\"");
        }
        field
    }

    fn members_strategy(max: usize) -> impl Strategy<Value = Vec<Gen>> {
        prop::collection::vec(
            (
                0..NAMES.len(),
                any::<bool>(),
                prop::option::weighted(0.9, 0u64..6_000_000_000),
                prop::option::weighted(0.8, 0u64..200_000),
            ),
            1..=max,
        )
    }

    /// What the draft field should give, computed the plain way.
    fn expected(ratelimit: &[Gen], policy: &[Gen]) -> Option<Quota> {
        let mut best: Option<Quota> = None;
        for &(name, _, r, t) in ratelimit {
            let policy = policy.iter().find(|p| p.0 == name);
            let Some(r) = r else { continue };
            let Some(t) = t.or(policy.and_then(|p| p.3)) else {
                continue;
            };
            let candidate = Quota {
                remaining: u32::try_from(r).unwrap_or(u32::MAX),
                reset_ms: (t as f64 * 1000.0).min(MAX_RESET_MS),
                limit: policy
                    .and_then(|p| p.2)
                    .map(|q| u32::try_from(q).unwrap_or(u32::MAX)),
                window_ms: policy
                    .and_then(|p| p.3)
                    .filter(|w| *w > 0)
                    .map(|w| w as f64 * 1000.0),
            };
            let better = match best {
                None => true,
                Some(b) => (candidate.remaining, -candidate.reset_ms) <= (b.remaining, -b.reset_ms),
            };
            if better {
                best = Some(candidate);
            }
        }
        best
    }

    proptest! {
        #[test]
        fn arbitrary_fields_never_panic(
            ratelimit in prop::option::of(any::<String>()),
            policy in prop::option::of(any::<String>()),
            remaining in prop::option::of(any::<String>()),
            reset in prop::option::of(any::<String>()),
            limit in prop::option::of(any::<String>()),
            now in any::<f64>(),
        ) {
            let headers = Headers {
                ratelimit: ratelimit.as_deref(),
                policy: policy.as_deref(),
                remaining: remaining.as_deref(),
                reset: reset.as_deref(),
                limit: limit.as_deref(),
            };
            if let Some(q) = parse(&headers, now) {
                prop_assert!(q.reset_ms.is_finite() && (0.0..=MAX_RESET_MS).contains(&q.reset_ms));
            }
        }

        #[test]
        fn near_valid_fields_never_panic(
            ratelimit in "[ \t\"a-z0-9;=,.\\\\*:()-]{0,40}",
            policy in "[ \t\"a-z0-9;=,.\\\\*:()-]{0,40}",
            remaining in "[ \t0-9.-]{0,22}",
            reset in "[ \t0-9.e-]{0,22}",
            now in any::<f64>(),
        ) {
            let headers = Headers {
                ratelimit: Some(&ratelimit),
                policy: Some(&policy),
                remaining: Some(&remaining),
                reset: Some(&reset),
                limit: Some(&remaining),
            };
            if let Some(q) = parse(&headers, now) {
                prop_assert!(q.reset_ms.is_finite() && (0.0..=MAX_RESET_MS).contains(&q.reset_ms));
                prop_assert!(q.window_ms.is_none_or(|w| w.is_finite() && w >= 0.0));
            }
        }

        #[test]
        fn well_formed_draft_round_trips(
            ratelimit in members_strategy(4),
            policy in members_strategy(3),
            pad in "[ \t]{0,2}",
        ) {
            let rendered_ratelimit = render(&ratelimit, "r", "t", &pad);
            let rendered_policy = render(&policy, "q", "w", &pad);
            prop_assert_eq!(
                draft(&rendered_ratelimit, Some(&rendered_policy)),
                expected(&ratelimit, &policy),
                "{} / {}", rendered_ratelimit, rendered_policy
            );
        }

        #[test]
        fn well_formed_split_round_trips(
            remaining in 0u64..10_000_000_000,
            whole in 0u64..100_000,
            millis in 0u64..1000,
            limit in prop::option::of(0u32..1_000_000),
        ) {
            let reset = format!("{whole}.{millis:03}");
            let limit_text = limit.map(|l| l.to_string());
            let got = split(&remaining.to_string(), &reset, limit_text.as_deref());
            let reset_ms = (whole as f64 + millis as f64 / 1000.0) * 1000.0;
            let q = got.expect("well formed");
            prop_assert_eq!(q.remaining, u32::try_from(remaining).unwrap_or(u32::MAX));
            prop_assert!((q.reset_ms - reset_ms.min(MAX_RESET_MS)).abs() < 1e-6);
            prop_assert_eq!(q.limit, limit);
        }
    }
}
