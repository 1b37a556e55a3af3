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
    let authority = rest.strip_suffix('/').unwrap_or(rest);
    if authority.contains(['/', '?', '#', '\\']) {
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
    if rest[..end].contains('@') {
        return Err(NotOrigin::UserInfo);
    }
    let mut out = String::with_capacity(origin.len() + rest.len() - end);
    out.push_str(origin);
    out.push_str(&rest[end..]);
    Ok(out)
}

/// The scheme in lower case (`http` or `https`) and what follows `://`.
fn split_scheme(s: &str) -> Option<(&'static str, &str)> {
    for scheme in ["https", "http"] {
        let n = scheme.len();
        if s.len() >= n + 3
            && s.is_char_boundary(n)
            && s[..n].eq_ignore_ascii_case(scheme)
            && s[n..].starts_with("://")
        {
            return Some((scheme, &s[n + 3..]));
        }
    }
    None
}

/// Where the authority of `rest` (what follows `scheme://`) ends: at its first `/`, `?`, `#`
/// or `\` (the URL standard reads `\` as `/` in http URLs), else at its end.
fn authority_end(rest: &str) -> usize {
    rest.find(['/', '?', '#', '\\']).unwrap_or(rest.len())
}

/// `scheme://host[:port]` from an authority, checked and normalised.
fn normal(scheme: &str, authority: &str) -> Result<String, NotOrigin> {
    if authority.contains('@') {
        return Err(NotOrigin::UserInfo);
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (inside, after) = v6.split_once(']').ok_or(NotOrigin::Host)?;
        let ok = |b: u8| b.is_ascii_hexdigit() || b == b':' || b == b'.';
        if !inside.contains(':') || !inside.bytes().all(ok) {
            return Err(NotOrigin::Host);
        }
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':').ok_or(NotOrigin::Host)?),
        };
        (&authority[..inside.len() + 2], port)
    } else {
        match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if !host.starts_with('[') {
        let ok = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
        if host.split('.').any(|l| l.is_empty() || !l.bytes().all(ok)) {
            return Err(NotOrigin::Host);
        }
    }
    let mut out = String::with_capacity(scheme.len() + 3 + authority.len());
    out.push_str(scheme);
    out.push_str("://");
    out.push_str(&host.to_ascii_lowercase());
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
fn port_number(port: &str) -> Option<u16> {
    if port.is_empty() || port.len() > 5 || !port.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    port.parse::<u16>().ok().filter(|&n| n != 0)
}
