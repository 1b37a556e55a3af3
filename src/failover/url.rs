//! Origins as text: checking and normalising one (`scheme://host[:port]`, RFC 6454 §4 as the
//! platform's URL parser serialises it), and giving a URL another origin, its path, query and
//! fragment kept.
//!
//! Plain string work on what the platform's parser already gave (a URL's `href`); nothing here
//! resolves or percent-decodes.

/// Why a string is not an origin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotOrigin {
    /// Not `http://` or `https://` (case aside).
    Scheme,
    /// It has `user[:password]@`: an origin has none, and no credentials go to another one.
    UserInfo,
    /// Something after the host and port other than one `/`: a path, query or fragment.
    Path,
    /// The host is empty, has an empty label, or characters outside ASCII letters, digits,
    /// `-`, `.` and `_` (a name in another script is given in punycode, `xn--…`); or an
    /// IPv6 address in brackets is not hex digits, `:` and `.`.
    Host,
    /// The port is empty, not digits, 0, or above 65535.
    Port,
}

/// The origin `s` names, normalised as the platform serialises origins: scheme and host in
/// lower case, the scheme's default port (80, 443) left out, no trailing `/`.
pub fn origin(s: &str) -> Result<String, NotOrigin> {
    let (scheme, rest) = split_scheme(s).ok_or(NotOrigin::Scheme)?;
    let authority = match rest.split_last() {
        Some((b'/', before)) => before,
        _ => rest,
    };
    if authority_end(authority) < authority.len() {
        return Err(NotOrigin::Path);
    }
    normal(scheme, authority)
}

/// The origin of the absolute http(s) URL `url` (its `scheme://host[:port]`, normalised).
pub fn origin_of(url: &str) -> Result<String, NotOrigin> {
    let (scheme, rest) = split_scheme(url).ok_or(NotOrigin::Scheme)?;
    normal(scheme, &rest[..authority_end(rest)])
}

/// `url` with its origin replaced by `origin` (as [`origin`] gives it), its path, query and
/// fragment as they were. A URL with a user name or password is refused: fetch refuses one
/// (so none reaches an attempt), and moving credentials to another host would leak them.
pub fn with_origin(url: &str, origin: &str) -> Result<String, NotOrigin> {
    let (_, rest) = split_scheme(url).ok_or(NotOrigin::Scheme)?;
    let end = authority_end(rest);
    if rest[..end].contains(&b'@') {
        return Err(NotOrigin::UserInfo);
    }
    // What follows the authority starts at an ASCII byte (or is empty): a char boundary.
    let tail = url.get(url.len() - (rest.len() - end)..).unwrap_or("");
    let mut out = String::with_capacity(origin.len() + tail.len());
    out.push_str(origin);
    out.push_str(tail);
    Ok(out)
}

/// The scheme in lower case (`http` or `https`) and the bytes that follow `://`.
fn split_scheme(s: &str) -> Option<(&'static str, &[u8])> {
    let b = s.as_bytes();
    for scheme in ["https", "http"] {
        let n = scheme.len();
        if b.len() >= n + 3
            && b[..n].eq_ignore_ascii_case(scheme.as_bytes())
            && &b[n..n + 3] == b"://"
        {
            return Some((scheme, &b[n + 3..]));
        }
    }
    None
}

/// Where the authority of `rest` (what follows `scheme://`) ends: at its first `/`, `?`, `#`
/// or `\` (the URL standard reads `\` as `/` in http URLs), else at its end.
fn authority_end(rest: &[u8]) -> usize {
    rest.iter()
        .position(|&b| matches!(b, b'/' | b'?' | b'#' | b'\\'))
        .unwrap_or(rest.len())
}

/// `scheme://host[:port]` from an authority, checked and normalised. Every byte of a host
/// that passes is ASCII.
fn normal(scheme: &str, authority: &[u8]) -> Result<String, NotOrigin> {
    if authority.contains(&b'@') {
        return Err(NotOrigin::UserInfo);
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix(b"[") {
        let close = v6.iter().position(|&b| b == b']').ok_or(NotOrigin::Host)?;
        let inside = &v6[..close];
        let ok = |&b: &u8| b.is_ascii_hexdigit() || b == b':' || b == b'.';
        if !inside.contains(&b':') || !inside.iter().all(ok) {
            return Err(NotOrigin::Host);
        }
        let port = match &v6[close + 1..] {
            [] => None,
            [b':', port @ ..] => Some(port),
            _ => return Err(NotOrigin::Host),
        };
        (&authority[..close + 2], port)
    } else {
        let (host, port) = match authority.iter().position(|&b| b == b':') {
            Some(i) => (&authority[..i], Some(&authority[i + 1..])),
            None => (authority, None),
        };
        let ok = |&b: &u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
        if host
            .split(|&b| b == b'.')
            .any(|label| label.is_empty() || !label.iter().all(ok))
        {
            return Err(NotOrigin::Host);
        }
        (host, port)
    };
    let mut out = String::with_capacity(scheme.len() + 3 + authority.len());
    out.push_str(scheme);
    out.push_str("://");
    out.extend(host.iter().map(|&b| char::from(b.to_ascii_lowercase())));
    if let Some(port) = port {
        let n = port_number(port).ok_or(NotOrigin::Port)?;
        let default = if scheme == "https" { 443 } else { 80 };
        if n != default {
            out.push(':');
            crate::policy::messages::push_u64(&mut out, n.into());
        }
    }
    Ok(out)
}

/// 1 to 5 digits naming a port from 1 to 65535.
fn port_number(port: &[u8]) -> Option<u32> {
    if port.is_empty() || port.len() > 5 || !port.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n = port.iter().fold(0u32, |n, &d| n * 10 + u32::from(d - b'0'));
    (1..=65_535).contains(&n).then_some(n)
}
