//! Each part of the policy checked on its own: retry, breaker, budget, bulkhead, keys.

pub mod breaker;
pub mod bulkhead;
pub mod rate_limit;
pub mod retry;
pub mod retry_budget;
pub mod throttle;

use crate::policy::messages::int_range;
use crate::policy::reader::{Check, Object};
use crate::policy::schema;
use crate::policy::value::{Map, Value};
use crate::policy::*;

pub(super) fn hedge_policy(c: &mut Check, map: &Map) -> HedgePolicy {
    let o = c.object(map, "hedge");
    let max = schema::MAX_MS;
    let delay = match o.get("delayMs") {
        None => HedgeDelay::Auto,
        Some(Value::String(s)) if s == "auto" => HedgeDelay::Auto,
        Some(Value::Number(n)) if n.fract() == 0.0 && (0.0..=f64::from(max)).contains(n) => {
            HedgeDelay::Fixed(*n as u32)
        }
        Some(other) => {
            let mut expected = int_range("", 0, "", max);
            expected.push_str(", or \"auto\"");
            let right_type = matches!(other, Value::String(_) | Value::Number(_));
            c.fail("hedge.delayMs".to_owned(), &expected, other, right_type);
            HedgeDelay::Auto
        }
    };
    let min_delay_ms = c.int(&o, "minDelayMs");
    let max_delay_ms = c.int(&o, "maxDelayMs");
    if max_delay_ms < min_delay_ms {
        c.fail(
            "hedge.maxDelayMs".to_owned(),
            &int_range("hedge.minDelayMs", min_delay_ms, "", schema::MAX_MS),
            &Value::Number(f64::from(max_delay_ms)),
            true,
        );
    }
    HedgePolicy {
        delay,
        max_hedges: c.int(&o, "maxHedges"),
        min_delay_ms,
        max_delay_ms,
    }
}

pub(super) fn idempotency_key(c: &mut Check, o: &Object) -> IdempotencyKey {
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

pub(super) fn idempotency_header(c: &mut Check, o: &Object) -> String {
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

/// `outbox`: the outbox's settings (its store and `onReplay` are the shell's).
pub(super) fn outbox_policy(c: &mut Check, map: &Map) -> OutboxPolicy {
    let o = c.object(map, "outbox");
    let name = match o.get("name") {
        None => defaults::OUTBOX_NAME.to_owned(),
        Some(Value::String(s)) if (1..=64).contains(&s.chars().count()) => s.clone(),
        Some(other) => {
            let right_type = matches!(other, Value::String(_));
            c.fail(
                "outbox.name".to_owned(),
                "a name of 1 to 64 characters",
                other,
                right_type,
            );
            defaults::OUTBOX_NAME.to_owned()
        }
    };
    OutboxPolicy {
        name,
        max_entries: c.int(&o, "maxEntries"),
        max_age_ms: c.int(&o, "maxAgeMs"),
        max_body_bytes: c.int(&o, "maxBodyBytes"),
    }
}

/// `share`: the name of the peers a client shares its origins' health with (see
/// [`crate::share`]); `false` or absent: none.
pub(super) fn share_name(c: &mut Check, o: &Object) -> Option<String> {
    match o.get("share") {
        Some(Value::String(s)) if (1..=64).contains(&s.chars().count()) => Some(s.clone()),
        None | Some(Value::Bool(false)) => None,
        Some(other) => {
            c.fail(
                "share".to_owned(),
                "a name of 1 to 64 characters, or false",
                other,
                matches!(other, Value::String(_)),
            );
            None
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
    use super::super::test_support::*;
    use super::*;

    use serde_json::json;

    #[test]
    fn body_timeout_is_milliseconds_or_false() {
        let body = |v| parse(json!({ "bodyTimeoutMs": v })).map(|p| p.body_timeout_ms);
        assert_eq!(body(json!(1)), Ok(Some(1)));
        assert_eq!(body(json!(false)), Ok(None));
        for bad in [json!(0), json!(-1), json!(1.5), json!(true), json!("10")] {
            let e = parse(json!({ "bodyTimeoutMs": bad })).expect_err("rejected");
            assert_eq!(e.path, "bodyTimeoutMs", "{bad}");
        }
    }

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
    fn hedge_is_off_by_default_and_checks_its_fields() {
        assert_eq!(parse(json!({})).map(|p| p.hedge), Ok(None));
        let on = parse(json!({"hedge": true})).map(|p| p.hedge);
        assert_eq!(
            on,
            Ok(Some(HedgePolicy {
                delay: HedgeDelay::Auto,
                max_hedges: 1,
                min_delay_ms: 10,
                max_delay_ms: 2000
            }))
        );
        let fixed = parse(json!({"hedge": {"delayMs": 50, "maxHedges": 3}})).map(|p| p.hedge);
        assert_eq!(
            fixed.map(|h| h.map(|h| (h.delay, h.max_hedges))),
            Ok(Some((HedgeDelay::Fixed(50), 3)))
        );
        for (bad, kind, words) in [
            (
                json!({"delayMs": "soon"}),
                PolicyErrorKind::Range,
                "hedge.delayMs must be an integer from 0 to 2147483647, or \"auto\" (got \"soon\")",
            ),
            (
                json!({"delayMs": 1.5}),
                PolicyErrorKind::Range,
                "hedge.delayMs",
            ),
            (
                json!({"delayMs": true}),
                PolicyErrorKind::Type,
                "hedge.delayMs",
            ),
            (
                json!({"maxHedges": 4}),
                PolicyErrorKind::Range,
                "hedge.maxHedges must be an integer from 1 to 3 (got 4)",
            ),
            (
                json!({"minDelayMs": 500, "maxDelayMs": 100}),
                PolicyErrorKind::Range,
                "hedge.maxDelayMs must be an integer from hedge.minDelayMs (500) to 2147483647 (got 100)",
            ),
        ] {
            let e = err(json!({ "hedge": bad }));
            assert_eq!(e.kind, kind, "{bad}");
            assert!(e.message.contains(words), "{}", e.message);
        }
    }

    #[test]
    fn outbox_is_off_by_default_and_checked() {
        assert_eq!(parse(json!({})).map(|p| p.outbox), Ok(None));
        let on = parse(json!({"outbox": true})).map(|p| p.outbox);
        assert_eq!(on, Ok(Policy::default_outbox()));
        let named = parse(json!({"outbox": {"name": "orders", "maxEntries": 5}}));
        let named = named.map(|p| p.outbox.map(|o| (o.name, o.max_entries, o.max_age_ms)));
        assert_eq!(named, Ok(Some(("orders".into(), 5, 86_400_000))));
        for (bad, kind, words) in [
            (
                json!({"name": ""}),
                PolicyErrorKind::Range,
                "outbox.name must be a name of 1 to 64 characters",
            ),
            (
                json!({"name": 7}),
                PolicyErrorKind::Type,
                "outbox.name must be a name of 1 to 64 characters (got a number)",
            ),
            (
                json!({"maxEntries": 0}),
                PolicyErrorKind::Range,
                "outbox.maxEntries must be an integer from 1 to 100000",
            ),
            (
                json!({"maxAgeMs": 999}),
                PolicyErrorKind::Range,
                "outbox.maxAgeMs must be an integer from 1000 to 2147483647",
            ),
            (
                json!({"maxBodyBytes": 67108865}),
                PolicyErrorKind::Range,
                "outbox.maxBodyBytes must be an integer from 0 to 67108864",
            ),
            (
                json!({"size": 1}),
                PolicyErrorKind::Type,
                "unknown policy field \"outbox.size\"",
            ),
        ] {
            let e = err(json!({ "outbox": bad }));
            assert_eq!(e.kind, kind, "{bad}");
            assert!(e.message.contains(words), "{}", e.message);
        }
    }

    #[test]
    fn coalesce_is_a_boolean() {
        assert_eq!(parse(json!({})).map(|p| p.coalesce), Ok(false));
        assert_eq!(
            parse(json!({"coalesce": true})).map(|p| p.coalesce),
            Ok(true)
        );
        let e = err(json!({"coalesce": "yes"}));
        assert_eq!(
            (e.kind, e.message.as_str()),
            (
                PolicyErrorKind::Type,
                "coalesce must be true or false (got a string)"
            )
        );
    }

    #[test]
    fn share_is_a_name_up_to_64_or_false() {
        assert_eq!(parse(json!({})).map(|p| p.share), Ok(None));
        assert_eq!(parse(json!({"share": false})).map(|p| p.share), Ok(None));
        assert_eq!(
            parse(json!({"share": "api"})).map(|p| p.share),
            Ok(Some("api".into()))
        );
        assert!(parse(json!({"share": "é".repeat(64)})).is_ok());
        for (bad, kind) in [
            (json!(""), PolicyErrorKind::Range),
            (json!("x".repeat(65)), PolicyErrorKind::Range),
            (json!(true), PolicyErrorKind::Type),
            (json!(3), PolicyErrorKind::Type),
        ] {
            let e = err(json!({ "share": bad }));
            assert_eq!(e.kind, kind, "{bad}");
            assert!(
                e.message.contains("share") && e.message.contains("1 to 64"),
                "{}",
                e.message
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
