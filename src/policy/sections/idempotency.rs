//! `idempotencyKey` and `idempotencyHeader`: which key a call sends (none, automatic for POST
//! and PATCH, or the caller's), and under which header name browsers let scripts set.

use crate::policy::reader::{Check, Object, Rows};
use crate::policy::value::Value;

/// The `idempotencyKey` and `idempotencyHeader` defaults, each written once ([`crate::policy::defaults`] holds them all).
pub mod defaults {
    use super::IdempotencyKey;

    /// Automatic keys for POST and PATCH, to the page's own origin only in browsers (JS `idempotencyKey`).
    pub const IDEMPOTENCY_KEY: IdempotencyKey = IdempotencyKey::Auto;
    /// Header that carries the key (JS `idempotencyHeader`).
    pub const IDEMPOTENCY_HEADER: &str = "Idempotency-Key";
}

/// Which idempotency key a call sends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IdempotencyKey {
    /// No key (`false`).
    Off,
    /// The default: a fresh UUID for POST and PATCH, where CORS lets it go (in a browser,
    /// to the page's own origin only).
    Auto,
    /// A fresh UUID for POST and PATCH, cross-origin too (`true`, given explicitly).
    On,
    /// This key, for any method (a string).
    Fixed(String),
}

pub(in crate::policy) fn idempotency_key<R: Rows>(c: &mut Check<R>, o: &Object) -> IdempotencyKey {
    match o.get("idempotencyKey") {
        None => defaults::IDEMPOTENCY_KEY,
        Some(Value::Bool(true)) => IdempotencyKey::On,
        Some(Value::Bool(false)) => IdempotencyKey::Off,
        Some(Value::String(s))
            if (1..=255).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_graphic()) =>
        {
            IdempotencyKey::Fixed(s.clone())
        }
        Some(other) => {
            c.fail(
                "idempotencyKey".to_owned(),
                "true, false or a string of 1 to 255 visible ASCII characters",
                other,
                matches!(other, Value::String(_)),
            );
            defaults::IDEMPOTENCY_KEY
        }
    }
}

pub(in crate::policy) fn idempotency_header<R: Rows>(c: &mut Check<R>, o: &Object) -> String {
    match o.get("idempotencyHeader") {
        Some(Value::String(s))
            if (1..=64).contains(&s.len())
                && s.bytes().all(is_tchar)
                && !is_forbidden_header(s) =>
        {
            s.clone()
        }
        None => defaults::IDEMPOTENCY_HEADER.to_owned(),
        Some(other) => {
            c.fail(
                "idempotencyHeader".to_owned(),
                "an HTTP token (letters, digits and !#$%&'*+-.^_`|~) of 1 to 64 characters that \
                 browsers let scripts set (not Sec-*, Proxy-* or another forbidden request header)",
                other,
                matches!(other, Value::String(_)),
            );
            defaults::IDEMPOTENCY_HEADER.to_owned()
        }
    }
}

/// The Fetch standard's forbidden request-header names: a browser silently
/// drops them, so a key sent under one would not be sent at all, and a POST
/// retried as if it carried a key would be repeated without one.
fn is_forbidden_header(name: &str) -> bool {
    const FORBIDDEN: [&str; 21] = [
        "accept-charset",
        "accept-encoding",
        "access-control-request-headers",
        "access-control-request-method",
        "connection",
        "content-length",
        "cookie",
        "cookie2",
        "date",
        "dnt",
        "expect",
        "host",
        "keep-alive",
        "origin",
        "referer",
        "set-cookie",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "via",
    ];
    let prefixed = |p: &str| {
        name.get(..p.len())
            .is_some_and(|h| h.eq_ignore_ascii_case(p))
    };
    prefixed("sec-") || prefixed("proxy-") || FORBIDDEN.iter().any(|f| f.eq_ignore_ascii_case(name))
}

/// RFC 9110 `tchar`: the characters of a header name.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::PolicyErrorKind;
    use crate::policy::test_support::*;
    use serde_json::json;

    #[test]
    fn idempotency_key_strings_are_visible_ascii_up_to_255() {
        assert_eq!(
            parse(json!({"idempotencyKey": false})).map(|p| p.idempotency_key),
            Ok(IdempotencyKey::Off)
        );
        assert_eq!(
            parse(json!({"idempotencyKey": true})).map(|p| p.idempotency_key),
            Ok(IdempotencyKey::On)
        );
        assert_eq!(
            parse(json!({})).map(|p| p.idempotency_key),
            Ok(IdempotencyKey::Auto),
            "the default is not an explicit true (cross-origin keys in browsers)"
        );
        let long = "k".repeat(255);
        assert!(parse(json!({"idempotencyKey": long})).is_ok());
        for bad in [
            String::new(),
            "k".repeat(256),
            "a b".into(),
            "ké".into(),
            "tab\t".into(),
        ] {
            let e = err(json!({"idempotencyKey": bad}));
            assert_eq!(
                (e.path.as_str(), e.kind),
                ("idempotencyKey", PolicyErrorKind::Range),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn idempotency_header_is_a_token_up_to_64() {
        assert!(parse(json!({"idempotencyHeader": "x-!#$%&'*+-.^_`|~9"})).is_ok());
        assert!(parse(json!({"idempotencyHeader": "h".repeat(64)})).is_ok());
        for bad in [
            String::new(),
            "h".repeat(65),
            "Idem Key".into(),
            "a:b".into(),
            "(x)".into(),
        ] {
            let e = err(json!({"idempotencyHeader": bad}));
            assert_eq!(e.kind, PolicyErrorKind::Range, "{bad:?}");
        }
    }

    #[test]
    fn idempotency_header_is_not_one_browsers_forbid() {
        for bad in [
            "Sec-Idem",
            "proxy-key",
            "Cookie",
            "HOST",
            "Content-Length",
            "Via",
        ] {
            let e = err(json!({"idempotencyHeader": bad}));
            assert_eq!(e.kind, PolicyErrorKind::Range, "{bad}");
            assert!(
                e.message.contains("idempotencyHeader") && e.message.contains("forbidden"),
                "{}",
                e.message
            );
        }
        for good in [
            "Idempotency-Key",
            "X-Request-Key",
            "Secret-Key",
            "Proxied",
            "Hosting",
        ] {
            assert!(parse(json!({"idempotencyHeader": good})).is_ok(), "{good}");
        }
    }
}
