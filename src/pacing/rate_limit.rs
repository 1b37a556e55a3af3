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
mod tests;
