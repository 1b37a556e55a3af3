//! Origins: the key under which breaker, budget and bulkhead state is kept.

use std::fmt;

/// Why a string is not a URL or origin with a host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OriginError {
    /// No `://` after the scheme.
    NoScheme,
    /// The scheme is not a letter followed by letters, digits, `+`, `-` or `.`.
    BadScheme,
    /// Nothing between `://` (or `userinfo@`) and the port or path.
    EmptyHost,
    /// The host holds a character a host cannot hold, or an unclosed `[`.
    BadHost,
    /// The port is not digits from 0 to 65535.
    BadPort,
}

impl fmt::Display for OriginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OriginError::NoScheme => "not a URL: expected scheme://host",
            OriginError::BadScheme => {
                "bad URL scheme: expected a letter followed by letters, digits, '+', '-' or '.'"
            }
            OriginError::EmptyHost => "bad URL: the host is empty",
            OriginError::BadHost => "bad URL: the host holds a character a host cannot hold",
            OriginError::BadPort => "bad URL: the port must be digits from 0 to 65535",
        })
    }
}

impl std::error::Error for OriginError {}

/// `scheme://host[:port]` of a URL or origin (`scheme://[userinfo@]host[:port][/path?query#frag]`):
/// scheme and host lower-cased, default ports (http/ws 80, https/wss 443) dropped,
/// IPv6 literals kept in brackets.
pub fn normalize(input: &str) -> Result<String, OriginError> {
    let (scheme, rest) = input
        .trim_ascii()
        .split_once("://")
        .ok_or(OriginError::NoScheme)?;
    let mut scheme_bytes = scheme.bytes();
    let scheme_ok = scheme_bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && scheme_bytes.all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
    if !scheme_ok {
        return Err(OriginError::BadScheme);
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, hp)| hp);
    let (host, port) = match host_port.strip_prefix('[') {
        Some(literal) => {
            let (address, tail) = literal.split_once(']').ok_or(OriginError::BadHost)?;
            if !address
                .bytes()
                .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.')
            {
                return Err(OriginError::BadHost);
            }
            let port = match tail {
                "" => None,
                _ => Some(tail.strip_prefix(':').ok_or(OriginError::BadHost)?),
            };
            let bracketed = host_port
                .get(..address.len() + 2)
                .ok_or(OriginError::BadHost)?;
            (if address.is_empty() { "" } else { bracketed }, port)
        }
        None => match host_port.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (host_port, None),
        },
    };
    if host.is_empty() {
        return Err(OriginError::EmptyHost);
    }
    if !host.starts_with('[') && !host.bytes().all(is_host_byte) {
        return Err(OriginError::BadHost);
    }
    let port = match port {
        None | Some("") => None,
        Some(digits) => Some(parse_port(digits)?),
    };
    let scheme = scheme.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "http" | "ws" => Some(80),
        "https" | "wss" => Some(443),
        _ => None,
    };
    let mut origin = scheme;
    origin.push_str("://");
    origin.push_str(&host.to_ascii_lowercase());
    if let Some(port) = port.filter(|p| Some(*p) != default_port) {
        origin.push(':');
        origin.push_str(&port.to_string());
    }
    Ok(origin)
}

/// RFC 3986 `reg-name` characters: unreserved, sub-delims and `%` of percent-encoding.
fn is_host_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=%".contains(&b)
}

fn parse_port(digits: &str) -> Result<u16, OriginError> {
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(OriginError::BadPort);
    }
    let value = digits.bytes().try_fold(0u32, |acc, b| {
        let next = acc * 10 + u32::from(b - b'0');
        (next <= 65_535).then_some(next)
    });
    value
        .and_then(|v| u16::try_from(v).ok())
        .ok_or(OriginError::BadPort)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ok(input: &str) -> String {
        normalize(input).expect(input)
    }

    #[test]
    fn keeps_scheme_host_and_port_only() {
        assert_eq!(ok("https://example.com/a/b?c=d#e"), "https://example.com");
        assert_eq!(ok("http://example.com:8080/x"), "http://example.com:8080");
        assert_eq!(ok("https://example.com?q"), "https://example.com");
        assert_eq!(ok("https://example.com#f"), "https://example.com");
        assert_eq!(ok("https://example.com"), "https://example.com");
    }

    #[test]
    fn lower_cases_scheme_and_host() {
        assert_eq!(ok("HTTPS://Example.COM/Path"), "https://example.com");
    }

    #[test]
    fn drops_default_ports_only() {
        assert_eq!(ok("http://a.test:80"), "http://a.test");
        assert_eq!(ok("https://a.test:443"), "https://a.test");
        assert_eq!(ok("ws://a.test:80"), "ws://a.test");
        assert_eq!(ok("wss://a.test:443"), "wss://a.test");
        assert_eq!(ok("http://a.test:443"), "http://a.test:443");
        assert_eq!(ok("https://a.test:80"), "https://a.test:80");
        assert_eq!(ok("ftp://a.test:21"), "ftp://a.test:21");
        assert_eq!(ok("http://a.test:0080"), "http://a.test");
        assert_eq!(ok("http://a.test:"), "http://a.test");
        assert_eq!(ok("http://a.test:0"), "http://a.test:0");
    }

    #[test]
    fn strips_userinfo() {
        assert_eq!(
            ok("https://user:pa:ss@Host.test:8443/x"),
            "https://host.test:8443"
        );
        assert_eq!(ok("https://a@b@host.test"), "https://host.test");
    }

    #[test]
    fn keeps_ipv6_in_brackets() {
        assert_eq!(ok("http://[::1]:8080/x"), "http://[::1]:8080");
        assert_eq!(ok("https://[2001:DB8::1]:443"), "https://[2001:db8::1]");
        assert_eq!(ok("http://[::ffff:127.0.0.1]"), "http://[::ffff:127.0.0.1]");
    }

    #[test]
    fn rejects_with_a_reason() {
        assert_eq!(normalize("example.com"), Err(OriginError::NoScheme));
        assert_eq!(normalize("/relative/path"), Err(OriginError::NoScheme));
        assert_eq!(normalize("://host"), Err(OriginError::BadScheme));
        assert_eq!(normalize("1http://host"), Err(OriginError::BadScheme));
        assert_eq!(normalize("ht tp://host"), Err(OriginError::BadScheme));
        assert_eq!(normalize("http://"), Err(OriginError::EmptyHost));
        assert_eq!(normalize("http:///path"), Err(OriginError::EmptyHost));
        assert_eq!(normalize("http://user@:80"), Err(OriginError::EmptyHost));
        assert_eq!(normalize("http://[]"), Err(OriginError::EmptyHost));
        assert_eq!(normalize("http://[::1"), Err(OriginError::BadHost));
        assert_eq!(normalize("http://[::1]x"), Err(OriginError::BadHost));
        assert_eq!(normalize("http://[zz::1]"), Err(OriginError::BadHost));
        assert_eq!(normalize("http://ex ample.com"), Err(OriginError::BadHost));
        assert_eq!(normalize("http://ex\\ample.com"), Err(OriginError::BadHost));
        assert_eq!(normalize("http://host:65536"), Err(OriginError::BadPort));
        assert_eq!(
            normalize("http://host:99999999999999999999"),
            Err(OriginError::BadPort)
        );
        assert_eq!(normalize("http://host:8a"), Err(OriginError::BadPort));
        assert_eq!(normalize("http://host:-1"), Err(OriginError::BadPort));
        assert_eq!(normalize("http://host:1:2"), Err(OriginError::BadPort));
        assert_eq!(ok("http://host:65535"), "http://host:65535");
    }

    #[test]
    fn errors_say_why() {
        assert!(OriginError::BadPort.to_string().contains("0 to 65535"));
        assert!(OriginError::EmptyHost.to_string().contains("empty"));
    }

    proptest! {
        #[test]
        fn never_panics(s in ".{0,60}") {
            let _ = normalize(&s);
        }

        #[test]
        fn never_panics_on_url_like_input(s in "[a-zA-Z]{0,5}://[a-zA-Z0-9@:\\[\\]./?#é%-]{0,30}") {
            if let Ok(origin) = normalize(&s) {
                prop_assert_eq!(normalize(&origin), Ok(origin.clone()));
                prop_assert!(!origin.contains(['?', '#', '@']));
                prop_assert_eq!(origin.matches('/').count(), 2);
            }
        }
    }
}
