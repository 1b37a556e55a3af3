//! Which answers are kept (RFC 9111 §3, narrowed to what a fallback needs), and the key they
//! are kept under (method, URL and the request's values of the fields the answer's `Vary`
//! names, RFC 9111 §4.1).
//!
//! Headers come in as `(name, value)` pairs as sent or received; names are compared without
//! regard to case, and a field given on several lines is their values joined by `", "`
//! (RFC 9110 §5.3).

use super::cache_control::CacheControl;
use super::section::StalePolicy;

/// A message's header fields, as `(name, value)` pairs in order.
pub type Headers<'a> = &'a [(&'a str, &'a str)];

/// The statuses a store may keep an answer of (heuristically cacheable ones, RFC 9110 §15.1,
/// without 206, 405, 414 and 501: a fallback for a partial answer or an unsupported method
/// is no answer).
pub const KEPT_STATUSES: [u16; 8] = [200, 203, 204, 300, 301, 308, 404, 410];

/// The request as the keeping rules see it.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    /// The method, as given (compared in upper case).
    pub method: &'a str,
    /// The URL, as the platform's parser gives it (its `href`).
    pub url: &'a str,
    /// Its header fields.
    pub headers: Headers<'a>,
}

/// The answer as the keeping rules see it.
#[derive(Clone, Copy, Debug)]
pub struct Response<'a> {
    /// Its status.
    pub status: u16,
    /// Its header fields.
    pub headers: Headers<'a>,
    /// Its body's size in bytes, where known before reading it (`Content-Length`; `None`:
    /// count while it streams, with [`StalePolicy::fits`]).
    pub body_bytes: Option<u64>,
}

/// Why an answer is not kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotKept {
    /// The method is neither GET nor HEAD.
    Method,
    /// The status is not one of [`KEPT_STATUSES`].
    Status,
    /// `Cache-Control: no-store` on the request or the answer.
    NoStore,
    /// `Cache-Control: no-cache` on the answer: never served without asking the origin, so
    /// never a fallback (RFC 9111 §4.2.4).
    NoCache,
    /// `Vary: *`: no later request can be known to match.
    VaryAll,
    /// The body is larger than `stale.maxBodyBytes`.
    TooLarge,
    /// A shared store, and the request carried `Authorization` or `Cookie`.
    Credentials,
    /// A shared store, and the answer is `Cache-Control: private` or sets a cookie.
    Private,
}

/// The values of field `name` in `headers`, joined by `", "` (None when absent).
pub fn field(headers: Headers, name: &str) -> Option<String> {
    let mut joined: Option<String> = None;
    for (n, v) in headers {
        if n.trim_ascii().eq_ignore_ascii_case(name) {
            let v = v.trim_ascii();
            match &mut joined {
                None => joined = Some(v.to_owned()),
                Some(s) => {
                    s.push_str(", ");
                    s.push_str(v);
                }
            }
        }
    }
    joined
}

/// The lines of field `name` in `headers`, in order.
pub fn lines<'a>(headers: Headers<'a>, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    headers
        .iter()
        .filter(move |(n, _)| n.trim_ascii().eq_ignore_ascii_case(name))
        .map(|(_, v)| *v)
}

/// Whether the answer `res` to `req` may be kept, under `policy`, in a store that is `shared`
/// (serves more than one user: a Worker's cache, a server's memory) or not (a browser's).
pub fn may_keep(
    req: &Request,
    res: &Response,
    policy: &StalePolicy,
    shared: bool,
) -> Result<(), NotKept> {
    let method = req.method.trim_ascii();
    if !method.eq_ignore_ascii_case("GET") && !method.eq_ignore_ascii_case("HEAD") {
        return Err(NotKept::Method);
    }
    if !KEPT_STATUSES.contains(&res.status) {
        return Err(NotKept::Status);
    }
    let asked = CacheControl::parse(lines(req.headers, "cache-control"));
    let answered = CacheControl::parse(lines(res.headers, "cache-control"));
    if asked.no_store || answered.no_store {
        return Err(NotKept::NoStore);
    }
    if answered.no_cache {
        return Err(NotKept::NoCache);
    }
    vary_names(res.headers).ok_or(NotKept::VaryAll)?;
    if res.body_bytes.is_some_and(|n| !policy.fits(n)) {
        return Err(NotKept::TooLarge);
    }
    if shared && !policy.private {
        let sent = |name| lines(req.headers, name).next().is_some();
        if sent("authorization") || sent("cookie") {
            return Err(NotKept::Credentials);
        }
        if answered.private || lines(res.headers, "set-cookie").next().is_some() {
            return Err(NotKept::Private);
        }
    }
    Ok(())
}

/// Whether an answer of `status` to a request of `method` makes what is kept for its URL
/// (under [`base_key`] of GET and HEAD) out of date (RFC 9111 §4.4): a method other than GET,
/// HEAD, OPTIONS and TRACE, answered with a status that is not an error. A fallback must not
/// bring back what a later write replaced.
pub fn invalidates(method: &str, status: u16) -> bool {
    let safe = ["GET", "HEAD", "OPTIONS", "TRACE"];
    let method = method.trim_ascii();
    !safe.iter().any(|m| method.eq_ignore_ascii_case(m)) && (200..400).contains(&status)
}

/// The field names the answer's `Vary` lists, in lower case, sorted, once each; `None` for
/// `Vary: *` (never matched, so never kept), and for a name that is not a token (RFC 9110
/// §5.1): what it would vary on is unknown, so it is read as `*`.
pub fn vary_names(headers: Headers) -> Option<Vec<String>> {
    let mut names = Vec::new();
    for line in lines(headers, "vary") {
        for name in line.split(',').map(str::trim_ascii) {
            if name == "*" || !name.bytes().all(is_tchar) {
                return None;
            }
            // In order as they come (std's sort is kilobytes of wasm): a few names each.
            let name = name.to_ascii_lowercase();
            if let Err(at) = names.binary_search(&name)
                && !name.is_empty()
            {
                names.insert(at, name);
            }
        }
    }
    Some(names)
}

/// A character of a token (RFC 9110 §5.6.2).
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// The key of method and URL alone: where a store keeps the `Vary` names of the answer it
/// last kept for them (so that a lookup knows which request fields make the full [`key`]).
pub fn base_key(method: &str, url: &str) -> String {
    let mut key = method.trim_ascii().to_ascii_uppercase();
    key.push(' ');
    push_escaped(&mut key, url);
    key
}

/// The key an answer is kept under: [`base_key`], then one line per name of `vary` (as
/// [`vary_names`] gives them) with the request's value of that field as sent, or the name
/// alone when the request lacks it (an absent field matches only an absent one). Stable text:
/// the same request and names always give the same key, and no two differ only in layout
/// (newlines and backslashes in values are escaped).
pub fn key(method: &str, url: &str, vary: &[String], req_headers: Headers) -> String {
    let mut key = base_key(method, url);
    for name in vary {
        key.push('\n');
        push_escaped(&mut key, name);
        if let Some(value) = field(req_headers, name) {
            key.push_str(": ");
            push_escaped(&mut key, &value);
        }
    }
    key
}

/// `s` with `\` as `\\`, newline as `\n` and carriage return as `\r`.
fn push_escaped(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
}
