//! The response headers a resume reads, and their grammar: entity tags (RFC 9110 §8.8.3),
//! `Content-Range` (§14.4), the lists of `Accept-Ranges` (§14.3) and `Content-Encoding`
//! (§8.4). Lenient where a peer's sloppiness is harmless, strict where it would splice the
//! wrong bytes: a value this file cannot read counts as absent or as a mismatch, never as a
//! match.

/// The headers of a response, as the shell read them (`Headers.get`: a repeated field comes
/// joined with `", "`); `None` for a field that is absent or not exposed to the page (CORS).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Head<'a> {
    /// The status code.
    pub status: u16,
    /// `ETag`.
    pub etag: Option<&'a str>,
    /// `Last-Modified`.
    pub last_modified: Option<&'a str>,
    /// `Date`: a `Last-Modified` at least one second before it is a strong validator.
    pub date: Option<&'a str>,
    /// `Content-Encoding`.
    pub content_encoding: Option<&'a str>,
    /// `Accept-Ranges`.
    pub accept_ranges: Option<&'a str>,
    /// `Content-Range` (a `206` or a `416`).
    pub content_range: Option<&'a str>,
    /// `Content-Length`.
    pub content_length: Option<&'a str>,
}

/// An entity tag's parts: whether it is weak (`W/`), and its opaque tag, quotes included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntityTag<'a> {
    /// Marked `W/`: it never validates a range (§13.1.5).
    pub weak: bool,
    /// `"…"`, quotes included: what strong comparison compares, octet by octet (§8.8.3.2).
    pub opaque: &'a str,
}

impl<'a> EntityTag<'a> {
    /// An `ETag` value (surrounding whitespace allowed), or `None` when it is not one entity
    /// tag (unquoted, a list, a quote inside): such a tag cannot be compared, so it is no
    /// validator.
    pub fn parse(value: &'a str) -> Option<EntityTag<'a>> {
        let value = value.trim_ascii();
        let (weak, opaque) = match value.strip_prefix("W/") {
            Some(rest) => (true, rest),
            None => (false, value),
        };
        let inner = opaque.strip_prefix('"')?.strip_suffix('"')?;
        // etagc = %x21 / %x23-7E / obs-text: no space, no quote, no control.
        let ok = inner
            .bytes()
            .all(|b| b == 0x21 || (0x23..=0x7e).contains(&b) || b >= 0x80);
        ok.then_some(EntityTag { weak, opaque })
    }

    /// Strong comparison: neither is weak and the opaque tags are the same octets.
    pub fn strong_eq(self, other: EntityTag) -> bool {
        !self.weak && !other.weak && self.opaque == other.opaque
    }
}

/// A `Content-Range` value of the `bytes` unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContentRange {
    /// `bytes first-last/complete` (`complete` `None` for `*`): the bytes `first..=last`.
    Bytes {
        /// The first byte's offset.
        first: u64,
        /// The last byte's offset (inclusive).
        last: u64,
        /// The representation's length, if the server knows it.
        complete: Option<u64>,
    },
    /// `bytes */complete`: no range satisfied (a `416`); the representation's length.
    Unsatisfied {
        /// The representation's length.
        complete: u64,
    },
}

impl ContentRange {
    /// Parses a `Content-Range` value; `None` for another unit, a malformed or impossible
    /// range (`last < first`, `last >= complete`), numbers past `u64`, or garbage. The unit
    /// is matched without case (§14.1); spaces around the value and after the unit are
    /// allowed.
    pub fn parse(value: &str) -> Option<ContentRange> {
        let value = value.trim_ascii();
        let unit = value.get(..5)?;
        if !unit.eq_ignore_ascii_case("bytes") {
            return None;
        }
        let rest = value.get(5..)?;
        let spec = rest.trim_ascii_start();
        if spec.len() == rest.len() {
            return None; // "bytes" must be followed by a space
        }
        let (range, complete) = spec.split_once('/')?;
        let complete = match complete {
            "*" => None,
            digits => Some(number(digits)?),
        };
        if range == "*" {
            return complete.map(|complete| ContentRange::Unsatisfied { complete });
        }
        let (first, last) = range.split_once('-')?;
        let (first, last) = (number(first)?, number(last)?);
        let fits = complete.is_none_or(|c| last < c);
        (first <= last && fits).then_some(ContentRange::Bytes {
            first,
            last,
            complete,
        })
    }
}

/// `1*DIGIT` as a `u64`; `None` when empty, not all digits, or too large.
pub fn number(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.bytes().try_fold(0u64, |n, b| {
        n.checked_mul(10)?.checked_add(u64::from(b - b'0'))
    })
}

/// The tokens of a comma-separated list field, trimmed, empty elements skipped (§5.6.1).
pub fn tokens(value: &str) -> impl Iterator<Item = &str> {
    value
        .split(',')
        .map(str::trim_ascii)
        .filter(|t| !t.is_empty())
}

/// Appends `n` in decimal: by hand, as the policy's messages do (core's formatting machinery
/// is kilobytes of wasm).
pub fn push_u64(out: &mut String, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &b in &buf[i..] {
        out.push(char::from(b));
    }
}
