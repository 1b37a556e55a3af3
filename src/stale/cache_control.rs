//! `Cache-Control` (RFC 9111 §5.2, RFC 5861): the directives the stale rules read, from the
//! request's or the response's field lines.
//!
//! The field is a comma-separated list of `name` or `name=argument`, the argument a token or a
//! quoted string (a comma inside quotes does not split). Names are case-insensitive; a
//! directive this file does not know is ignored. Several field lines are one list. Where a
//! directive repeats or its argument is malformed, the most restrictive reading wins (RFC 9111
//! §4.2.1): `max-age=abc` counts as 0 (stale at once), a malformed `stale-if-error` grants
//! nothing, and of two valid values the smaller counts.

/// The largest delta-seconds kept: RFC 9111 §1.2.2 has a larger value read as 2^31.
pub const MAX_DELTA_SECONDS: u32 = 2_147_483_648;

/// The directives the stale rules read. Each flag is set by its directive with or without an
/// argument (`no-cache="Set-Cookie"` counts as `no-cache`: the most restrictive reading).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CacheControl {
    /// `no-store`: nothing of the exchange may be kept.
    pub no_store: bool,
    /// `no-cache`: a kept answer may not be used without asking the origin.
    pub no_cache: bool,
    /// `private`: only a private store may keep the answer.
    pub private: bool,
    /// `public`.
    pub public: bool,
    /// `must-revalidate`: once stale, never served without asking the origin.
    pub must_revalidate: bool,
    /// `proxy-revalidate`: `must-revalidate` for shared stores.
    pub proxy_revalidate: bool,
    /// `max-age=N`, in seconds.
    pub max_age: Option<u32>,
    /// `s-maxage=N`, in seconds (shared stores only; implies `proxy-revalidate`).
    pub s_maxage: Option<u32>,
    /// `stale-if-error=N`, in seconds (RFC 5861 §4).
    pub stale_if_error: Option<u32>,
    /// `stale-while-revalidate=N`, in seconds (RFC 5861 §3).
    pub stale_while_revalidate: Option<u32>,
}

impl CacheControl {
    /// The directives of all the given `Cache-Control` field lines, in order.
    pub fn parse<'a>(lines: impl IntoIterator<Item = &'a str>) -> CacheControl {
        let mut cc = CacheControl::default();
        for line in lines {
            for member in members(line) {
                cc.add(member);
            }
        }
        cc
    }

    /// One list member: `name` or `name=argument`.
    fn add(&mut self, member: &str) {
        let (name, argument) = match member.split_once('=') {
            Some((name, rest)) => (name.trim_ascii(), Some(unquote(rest.trim_ascii()))),
            None => (member, None),
        };
        let seconds = || argument.as_deref().and_then(delta_seconds);
        // One match on the name in lower case (a comparison per name is larger wasm).
        match name.to_ascii_lowercase().as_str() {
            "no-store" => self.no_store = true,
            "no-cache" => self.no_cache = true,
            "private" => self.private = true,
            "public" => self.public = true,
            "must-revalidate" => self.must_revalidate = true,
            "proxy-revalidate" => self.proxy_revalidate = true,
            // A malformed lifetime is none: stale at once.
            "max-age" => least(&mut self.max_age, Some(seconds().unwrap_or(0))),
            "s-maxage" => least(&mut self.s_maxage, Some(seconds().unwrap_or(0))),
            "stale-if-error" => least(&mut self.stale_if_error, seconds()),
            "stale-while-revalidate" => least(&mut self.stale_while_revalidate, seconds()),
            _ => {}
        }
    }
}

/// Keeps the smaller of `slot` and `new` (a `None` new changes nothing).
fn least(slot: &mut Option<u32>, new: Option<u32>) {
    if let Some(n) = new {
        *slot = Some(slot.map_or(n, |old| old.min(n)));
    }
}

/// The list members of one field line, trimmed, empty ones skipped. A `"` that opens an
/// argument (after `=` and any spaces) starts a quoted string, with `\` escapes, in which
/// commas do not split; a stray `"` elsewhere is an ordinary character, so that it cannot hide
/// the directives after it.
fn members(line: &str) -> impl Iterator<Item = &str> {
    let bytes = line.as_bytes();
    let mut start = 0;
    let mut cuts = Vec::new();
    let (mut quoted, mut escaped, mut arg_start) = (false, false, false);
    for (i, &b) in bytes.iter().enumerate() {
        if quoted {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                quoted = false;
            }
            continue;
        }
        match b {
            b'"' if arg_start => quoted = true,
            b' ' | b'\t' => continue,
            b',' => {
                cuts.push((start, i));
                start = i + 1;
            }
            _ => {}
        }
        arg_start = b == b'=';
    }
    cuts.push((start, bytes.len()));
    cuts.into_iter()
        .map(move |(a, b)| line[a..b].trim_ascii())
        .filter(|m| !m.is_empty())
}

/// An argument without its quotes and escapes, if quoted (an unclosed quote runs to the end).
fn unquote(arg: &str) -> String {
    let Some(inner) = arg.strip_prefix('"') else {
        return arg.to_owned();
    };
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => break,
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

/// delta-seconds: one or more ASCII digits, saturating at [`MAX_DELTA_SECONDS`].
pub(crate) fn delta_seconds(s: &str) -> Option<u32> {
    let s = s.trim_ascii();
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n = s.bytes().fold(0u64, |acc, b| {
        (acc * 10 + u64::from(b - b'0')).min(u64::from(MAX_DELTA_SECONDS))
    });
    u32::try_from(n).ok()
}
