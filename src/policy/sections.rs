//! Each part of the policy checked on its own: retry, breaker, budget, bulkhead, keys.

use super::check::{Check, Object, as_int};
use super::input::{Map, Value};
use super::messages::{int_range, push_u64};
use super::schema;
use super::*;
use crate::backoff::Jitter;

pub(super) fn retry_policy(c: &mut Check, map: &Map) -> RetryPolicy {
    let o = c.object(map, "retry");
    let base_delay_ms = c.int(&o, "baseDelayMs");
    let max_delay_ms = c.int(&o, "maxDelayMs");
    if max_delay_ms < base_delay_ms {
        c.fail(
            "retry.maxDelayMs".to_owned(),
            &int_range("retry.baseDelayMs", base_delay_ms, "", schema::MAX_MS),
            &Value::Number(max_delay_ms.into()),
            true,
        );
    }
    RetryPolicy {
        max_attempts: c.int(&o, "maxAttempts"),
        base_delay_ms,
        max_delay_ms,
        jitter: c
            .choice(&o, "jitter")
            .map_or(defaults::JITTER, |i| Jitter::ALL[i]),
        retry_on: statuses(c, o.get("retryOn")),
        max_retry_after_ms: c.int(&o, "maxRetryAfterMs"),
    }
}

/// Lowest status `retry.retryOn` accepts: only error statuses are worth retrying (a 1xx,
/// 2xx or 3xx in the list would repeat calls that did not fail).
pub const RETRY_ON_MIN: u32 = 400;
/// Highest status `retry.retryOn` accepts.
const RETRY_ON_MAX: u32 = 599;

fn statuses(c: &mut Check, v: Option<&Value>) -> Vec<u16> {
    let items = match v {
        None => return defaults::RETRY_ON.to_vec(),
        Some(Value::List(items)) => items,
        Some(other) => {
            c.fail(
                "retry.retryOn".to_owned(),
                "an array of integer statuses from 400 to 599",
                other,
                false,
            );
            return Vec::new();
        }
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match as_int(item, RETRY_ON_MIN, RETRY_ON_MAX) {
            Some(status) => out.push(status as u16),
            None => {
                let mut path = "retry.retryOn[".to_owned();
                push_u64(&mut path, i as u64);
                path.push(']');
                c.int_error(path, item, RETRY_ON_MIN, RETRY_ON_MAX);
                break;
            }
        }
    }
    out
}

pub(super) fn budget_policy(c: &mut Check, map: &Map) -> BudgetPolicy {
    let o = c.object(map, "retryBudget");
    let capacity = c.int(&o, "capacity");
    let mut share = |key: &str| -> u32 {
        let n = c.int(&o, key);
        if n > capacity {
            c.fail(
                o.path(key),
                &int_range("", 0, "retryBudget.capacity", capacity),
                &Value::Number(n.into()),
                true,
            );
        }
        n
    };
    BudgetPolicy {
        capacity,
        retry_cost: share("retryCost"),
        timeout_retry_cost: share("timeoutRetryCost"),
        no_retry_increment: share("noRetryIncrement"),
    }
}

pub(super) fn bulkhead_policy(c: &mut Check, map: &Map) -> BulkheadPolicy {
    let o = c.object(map, "bulkhead");
    BulkheadPolicy {
        max_concurrent: c.int(&o, "maxConcurrent"),
        max_queue: c.int(&o, "maxQueue"),
    }
}

pub(super) fn rate_limit_policy(c: &mut Check, map: &Map) -> RateLimitPolicy {
    let o = c.object(map, "rateLimit");
    RateLimitPolicy {
        max_wait_ms: c.int(&o, "maxWaitMs"),
    }
}

pub(super) fn throttle_policy(c: &mut Check, map: &Map) -> ThrottlePolicy {
    let o = c.object(map, "throttle");
    let k = match o.get("k") {
        None => defaults::THROTTLE_K,
        Some(Value::Number(n)) if (1.0..=100.0).contains(n) => *n,
        Some(other) => {
            c.fail(
                "throttle.k".to_owned(),
                "a number in 1..=100",
                other,
                matches!(other, Value::Number(_)),
            );
            defaults::THROTTLE_K
        }
    };
    ThrottlePolicy {
        k,
        window_ms: c.int(&o, "windowMs"),
    }
}

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
/// [`crate::share`]), given alone or as `{ name, durableObject }` (the Durable Object that
/// carries the notes is the shell's); `false` or absent: none.
pub(super) fn share_name(c: &mut Check, o: &Object) -> Option<String> {
    static NO_NAME: Value = Value::Null;
    let (path, given) = match o.get("share") {
        None | Some(Value::Bool(false)) => return None,
        Some(Value::Map(map)) => (
            "share.name",
            c.object(map, "share").get("name").unwrap_or(&NO_NAME),
        ),
        Some(other) => ("share", other),
    };
    match given {
        Value::String(s) if (1..=64).contains(&s.chars().count()) => Some(s.clone()),
        other => {
            let expected = if path == "share" {
                "a name of 1 to 64 characters, { name, durableObject }, or false"
            } else {
                "a name of 1 to 64 characters"
            };
            c.fail(
                path.to_owned(),
                expected,
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
    use crate::backoff::Jitter;

    use serde_json::json;

    #[test]
    fn max_delay_below_base_names_both() {
        let e = err(json!({"retry": {"baseDelayMs": 500, "maxDelayMs": 100}}));
        assert_eq!(
            e.message,
            "retry.maxDelayMs must be an integer from retry.baseDelayMs (500) to 2147483647 (got 100)"
        );
        assert_eq!(
            (e.path.as_str(), e.kind),
            ("retry.maxDelayMs", PolicyErrorKind::Range)
        );
        assert!(parse(json!({"retry": {"baseDelayMs": 100, "maxDelayMs": 100}})).is_ok());
    }

    #[test]
    fn budget_costs_are_bounded_by_capacity() {
        let e = err(json!({"retryBudget": {"capacity": 4}}));
        assert_eq!(
            e.message,
            "retryBudget.retryCost must be an integer from 0 to retryBudget.capacity (4) (got 5)"
        );
        let e =
            err(json!({"retryBudget": {"capacity": 10, "retryCost": 1, "timeoutRetryCost": 11}}));
        assert_eq!(e.path, "retryBudget.timeoutRetryCost");
        let e = err(json!({"retryBudget": {"noRetryIncrement": 501}}));
        assert_eq!(e.path, "retryBudget.noRetryIncrement");
        assert!(
            parse(json!({"retryBudget": {"capacity": 10, "retryCost": 10, "timeoutRetryCost": 0}}))
                .is_ok()
        );
    }

    #[test]
    fn enumerations_list_their_choices() {
        let e = err(json!({"retry": {"jitter": "fulll"}}));
        assert_eq!(
            e.message,
            r#"retry.jitter must be one of "full", "equal", "decorrelated", "none" (got "fulll")"#
        );
        assert_eq!(e.kind, PolicyErrorKind::Range);
        for (name, jitter) in [
            ("full", Jitter::Full),
            ("equal", Jitter::Equal),
            ("none", Jitter::None),
        ] {
            let p = parse(json!({"retry": {"jitter": name}})).expect("valid");
            assert_eq!(p.retry.map(|r| r.jitter), Some(jitter));
        }
        assert_eq!(
            err(json!({"breaker": {"mode": "rate"}})).path,
            "breaker.mode"
        );
        assert_eq!(
            err(json!({"breaker": {"windowType": "calls"}})).path,
            "breaker.windowType"
        );
    }

    #[test]
    fn retry_on_items_are_checked_one_by_one() {
        let e = err(json!({"retry": {"retryOn": [503, 99]}}));
        assert_eq!(
            e.message,
            "retry.retryOn[1] must be an integer from 400 to 599 (got 99)"
        );
        assert_eq!(
            err(json!({"retry": {"retryOn": [600]}})).path,
            "retry.retryOn[0]"
        );
        assert_eq!(
            err(json!({"retry": {"retryOn": ["503"]}})).kind,
            PolicyErrorKind::Type
        );
        let p = parse(json!({"retry": {"retryOn": [400, 599]}})).expect("valid");
        assert_eq!(p.retry.map(|r| r.retry_on), Some(vec![400, 599]));
    }

    #[test]
    fn retry_on_takes_error_statuses_only() {
        // A success, a redirect or an informational status is never worth retrying.
        for (status, shown) in [(200, "200"), (100, "100"), (204, "204"), (399, "399")] {
            let e = err(json!({"retry": {"retryOn": [503, status]}}));
            assert_eq!(
                e.message,
                format!("retry.retryOn[1] must be an integer from 400 to 599 (got {shown})")
            );
            assert_eq!(
                (e.path.as_str(), e.kind),
                ("retry.retryOn[1]", PolicyErrorKind::Range)
            );
        }
        assert!(parse(json!({"retry": {"retryOn": [400]}})).is_ok());
    }

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
        // The object form (its durableObject is held by the shell, never data here).
        assert_eq!(
            parse(json!({"share": {"name": "api"}})).map(|p| p.share),
            Ok(Some("api".into()))
        );
        assert!(
            err(json!({"share": {"name": "api", "other": 1}}))
                .message
                .contains("share.other")
        );
        for (bad, kind) in [
            (json!(""), PolicyErrorKind::Range),
            (json!("x".repeat(65)), PolicyErrorKind::Range),
            (json!(true), PolicyErrorKind::Type),
            (json!(3), PolicyErrorKind::Type),
            (json!({}), PolicyErrorKind::Type),
            (json!({"name": ""}), PolicyErrorKind::Range),
            (json!({"name": 5}), PolicyErrorKind::Type),
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
