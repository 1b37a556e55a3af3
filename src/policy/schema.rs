//! Every policy field, once: its JS path, what it holds (type, range, default) and where
//! it may be given (client, call, or both). The validator reads its field lists, ranges
//! and defaults from here, the scope rule too; the TypeScript declarations and the README's
//! options table are tested against it (tests/core_ts_defaults.rs).

use super::error::{PolicyError, PolicyErrorKind};
pub use super::field::{Field, Kind, MAX_MS, Scope, key_in};
use super::field::{bounded, field, find, int, joined, rows};
use super::reader::Rows;
use super::sections::breaker::{BreakerMode, WindowType};
use super::types::defaults as d;
use super::value::Value;
use crate::backoff::Jitter;

/// Every field, objects before their fields: the policy's own rows and each capability's
/// section's (in its folder), in this order.
const SECTIONS: &[&[Field]] = &[
    HEAD,
    crate::pacing::FIELDS,
    crate::throttle::FIELDS,
    crate::hedge::FIELDS,
    crate::failover::FIELDS,
    TAIL,
    crate::coalesce::FIELDS,
    CLIENT,
    crate::share::FIELDS,
    crate::outbox::FIELDS,
    crate::stale::FIELDS,
    crate::resume::FIELDS,
    crate::sse::FIELDS,
    LAST,
];

/// Every field, objects before their fields (`SECTIONS` joined, at compile time).
pub const FIELDS: &[Field] = &joined::<{ rows(SECTIONS) }>(SECTIONS);

/// The policy's own rows before the capabilities'.
const HEAD: &[Field] = &[
    int("timeoutMs", 1, MAX_MS, d::TIMEOUT_MS),
    int("totalTimeoutMs", 1, MAX_MS, d::TOTAL_TIMEOUT_MS),
    field(
        "bodyTimeoutMs",
        Kind::IntOrOff {
            min: 1,
            max: MAX_MS,
            default: d::BODY_TIMEOUT_MS,
        },
    ),
    field(
        "retry",
        Kind::Feature {
            on: d::RETRY_ENABLED,
        },
    ),
    int("retry.maxAttempts", 1, 20, d::MAX_ATTEMPTS),
    int("retry.baseDelayMs", 0, MAX_MS, d::BASE_DELAY_MS),
    bounded(
        "retry.maxDelayMs",
        Kind::Int {
            min: 0,
            max: MAX_MS,
            default: d::MAX_DELAY_MS,
        },
        ">= baseDelayMs, ..=2147483647",
    ),
    field("retry.jitter", Kind::Choice(&Jitter::NAMES)),
    field("retry.retryOn", Kind::Statuses),
    int("retry.maxRetryAfterMs", 0, MAX_MS, d::MAX_RETRY_AFTER_MS),
    field("retry.shouldRetry", Kind::Function),
    field(
        "breaker",
        Kind::Feature {
            on: d::BREAKER_ENABLED,
        },
    ),
    field("breaker.mode", Kind::Choice(&BreakerMode::NAMES)),
    int("breaker.failureThreshold", 1, 1000, d::FAILURE_THRESHOLD),
    int("breaker.cooldownMs", 1, MAX_MS, d::COOLDOWN_MS),
    bounded(
        "breaker.maxCooldownMs",
        Kind::OptInt {
            min: 1,
            max: MAX_MS,
        },
        ">= cooldownMs, ..=2147483647",
    ),
    int("breaker.halfOpenMaxCalls", 1, 1000, d::HALF_OPEN_MAX_CALLS),
    field("breaker.failureRateThreshold", Kind::Rate),
    bounded(
        "breaker.minimumCalls",
        Kind::Int {
            min: 1,
            max: 10_000,
            default: d::MINIMUM_CALLS,
        },
        "1..=windowSize for a count window, 1..=1000 for a time window",
    ),
    field(
        "breaker.slowCallMs",
        Kind::OptInt {
            min: 1,
            max: MAX_MS,
        },
    ),
    field("breaker.slowCallRateThreshold", Kind::Rate),
    field("breaker.windowType", Kind::Choice(&WindowType::NAMES)),
    int("breaker.windowSize", 1, 1000, d::WINDOW_SIZE),
    int("breaker.windowMs", 1, MAX_MS, d::WINDOW_MS),
    field("breaker.isFailure", Kind::Function),
    field("breaker.key", Kind::Function),
    field(
        "retryBudget",
        Kind::Feature {
            on: d::RETRY_BUDGET_ENABLED,
        },
    ),
    int("retryBudget.capacity", 1, 1_000_000, d::BUDGET_CAPACITY),
    bounded(
        "retryBudget.retryCost",
        Kind::Int {
            min: 0,
            max: 1_000_000,
            default: d::RETRY_COST,
        },
        "0..=capacity",
    ),
    bounded(
        "retryBudget.timeoutRetryCost",
        Kind::Int {
            min: 0,
            max: 1_000_000,
            default: d::TIMEOUT_RETRY_COST,
        },
        "0..=capacity",
    ),
    bounded(
        "retryBudget.noRetryIncrement",
        Kind::Int {
            min: 0,
            max: 1_000_000,
            default: d::NO_RETRY_INCREMENT,
        },
        "0..=capacity",
    ),
    field(
        "bulkhead",
        Kind::Feature {
            on: d::BULKHEAD_ENABLED,
        },
    ),
    int("bulkhead.maxConcurrent", 1, 100_000, d::MAX_CONCURRENT),
    int("bulkhead.maxQueue", 0, 100_000, d::MAX_QUEUE),
];

/// The policy's own rows after the capabilities'.
const TAIL: &[Field] = &[
    Field {
        path: "idempotencyKey",
        kind: Kind::Key,
        scope: Scope::StringPerCall,
        range_text: None,
    },
    field("idempotencyHeader", Kind::Header),
];

/// The policy's own rows after coalescing's.
const CLIENT: &[Field] = &[Field {
    path: "maxOrigins",
    kind: Kind::Int {
        min: 1,
        max: 1_000_000,
        default: d::MAX_ORIGINS,
    },
    scope: Scope::Client,
    range_text: None,
}];

/// The callbacks, after every capability's rows (js/policy-arg.js lists them in this order).
const LAST: &[Field] = &[
    field("onEvent", Kind::Function),
    field("fetch", Kind::Function),
];

/// The schema as the rows a check reads ([`FIELDS`]).
pub(super) struct Schema;

impl Rows for Schema {
    const FIELDS: &'static [Field] = FIELDS;
}

/// The field at `path`; every path the validator asks for is in [`FIELDS`].
pub fn get(path: &str) -> Option<&'static Field> {
    find(FIELDS, path)
}

/// A top-level field that holds a function (taken out in JS, skipped when decoding).
pub fn is_function(key: &str) -> bool {
    get(key).is_some_and(|f| f.kind == Kind::Function)
}

/// Checks where the fields of one raw policy were given (`per_call`: to a call, else to a
/// client): a client-only field given to a call, or a key string given to a client, is a
/// `TypeError` saying where it belongs. A field given as `null` counts as given.
pub fn check_scope(root: &Value, per_call: bool) -> Result<(), PolicyError> {
    let Value::Map(map) = root else {
        return Ok(());
    };
    for (key, value) in map {
        let message = match get(key).map(|f| f.scope) {
            Some(Scope::Client) if per_call && crate::outbox::BUILT && key == "outbox" => {
                crate::outbox::CLIENT_ONLY
            }
            // A capability's client-only field says why (its folder's `client_only`).
            Some(Scope::Client) if per_call => crate::share::client_only(key).unwrap_or(
                "maxOrigins sizes a client's registry: give it to new ResilientClient(...), not to one call",
            ),
            // A client-only field of an object given to a call (`stale`'s store).
            Some(Scope::Both) if per_call && nested_client_only(key, value) => {
                let Value::Map(inner) = value else { continue };
                let Some((field, _)) = inner.iter().find(|(k, _)| client_scoped(key, k)) else {
                    continue;
                };
                let mut path = key.clone();
                path.push('.');
                path.push_str(field);
                return Err(PolicyError {
                    path,
                    message: crate::stale::CLIENT_ONLY.to_owned(),
                    kind: PolicyErrorKind::Type,
                });
            }
            Some(Scope::StringPerCall) if !per_call && matches!(value, Value::String(_)) => {
                "idempotencyKey: a key string names one operation; give it per call, not to a \
                 ResilientClient (whose every POST would then share it)"
            }
            _ => continue,
        };
        return Err(PolicyError {
            path: key.clone(),
            message: message.to_owned(),
            kind: PolicyErrorKind::Type,
        });
    }
    Ok(())
}

/// Whether `key.field` is a client-only field of the object at `key`.
fn client_scoped(key: &str, field: &str) -> bool {
    FIELDS.iter().any(|f| {
        f.scope == Scope::Client
            && f.path.strip_prefix(key).and_then(|r| r.strip_prefix('.')) == Some(field)
    })
}

/// Whether `value`, given at `key` to one call, is an object with a client-only field (only
/// `stale` has such fields).
fn nested_client_only(key: &str, value: &Value) -> bool {
    // Without `stale` there is none (its message is empty): the check is gone.
    !crate::stale::CLIENT_ONLY.is_empty()
        && key == "stale"
        && matches!(value, Value::Map(inner) if inner.iter().any(|(k, _)| client_scoped(key, k)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_unique_and_objects_come_before_their_fields() {
        for (i, f) in FIELDS.iter().enumerate() {
            assert!(get(f.path) == Some(f), "{} twice", f.path);
            if let Some((parent, _)) = f.path.rsplit_once('.') {
                let at = FIELDS.iter().position(|p| p.path == parent);
                assert!(at.is_some_and(|at| at < i), "{} before its object", f.path);
                assert!(matches!(
                    get(parent).map(|p| p.kind),
                    Some(Kind::Feature { .. } | Kind::Name)
                ));
            }
        }
    }

    #[test]
    fn int_defaults_are_in_range() {
        for f in FIELDS {
            if let Kind::Int { min, max, default } | Kind::IntOrOff { min, max, default } = f.kind {
                assert!((min..=max).contains(&default), "{}", f.path);
            }
        }
    }

    #[test]
    fn keys_of_an_object_are_its_own_fields_only() {
        let retry: Vec<&str> = FIELDS.iter().filter_map(|f| key_in(f, "retry")).collect();
        assert_eq!(
            retry,
            [
                "maxAttempts",
                "baseDelayMs",
                "maxDelayMs",
                "jitter",
                "retryOn",
                "maxRetryAfterMs",
                "shouldRetry"
            ]
        );
        let top: Vec<&str> = FIELDS.iter().filter_map(|f| key_in(f, "")).collect();
        assert!(top.contains(&"retry") && !top.contains(&"maxAttempts"));
    }
}
