//! The policy: defaults, decoding, merging and validation.
//!
//! A policy arrives from JS as a plain object. [`PolicyInput`] keeps it raw
//! (decoded through any serde `Deserializer` into a small self-describing
//! value), [`PolicyInput::merge`] lays a per-call policy over the client's, and
//! [`Policy::from_input`] checks every field and fills in the [`defaults`].
//! Types are checked here rather than by serde, so every error names its field.

use crate::backoff::Jitter;
use crate::breaker::MAX_WINDOW_CALLS;
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// Every default of the policy, written once, with the JS field it fills.
pub mod defaults {
    use super::{BreakerMode, IdempotencyKey, WindowType};
    use crate::backoff::Jitter;

    /// Per-attempt timeout in ms (JS `timeoutMs`).
    pub const TIMEOUT_MS: u32 = 10_000;
    /// Whole-call deadline in ms, attempts, waits and reading the body included (JS `totalTimeoutMs`).
    pub const TOTAL_TIMEOUT_MS: u32 = 30_000;
    /// Longest wait for the next chunk of a response body in ms (JS `bodyTimeoutMs`).
    pub const BODY_TIMEOUT_MS: u32 = 10_000;

    /// Retries are on unless the policy says `retry: false`.
    pub const RETRY_ENABLED: bool = true;
    /// Attempts per call, the first one included (JS `retry.maxAttempts`).
    pub const MAX_ATTEMPTS: u32 = 3;
    /// Backoff window of the first retry in ms (JS `retry.baseDelayMs`).
    pub const BASE_DELAY_MS: u32 = 100;
    /// Largest backoff window in ms (JS `retry.maxDelayMs`).
    pub const MAX_DELAY_MS: u32 = 10_000;
    /// How the wait is drawn from the window (JS `retry.jitter`).
    pub const JITTER: Jitter = Jitter::Full;
    /// Response statuses worth retrying (JS `retry.retryOn`).
    pub const RETRY_ON: [u16; 6] = [408, 429, 500, 502, 503, 504];
    /// Longest `Retry-After` honoured in ms; a longer one ends the call (JS `retry.maxRetryAfterMs`).
    pub const MAX_RETRY_AFTER_MS: u32 = 30_000;

    /// The circuit breaker is on unless the policy says `breaker: false`.
    pub const BREAKER_ENABLED: bool = true;
    /// When the breaker trips (JS `breaker.mode`), unless the policy names only the
    /// other mode's fields (`failureThreshold` alone means "consecutive").
    pub const BREAKER_MODE: BreakerMode = BreakerMode::FailureRate;
    /// Consecutive failures that open the breaker (JS `breaker.failureThreshold`).
    pub const FAILURE_THRESHOLD: u32 = 5;
    /// How long an open breaker rejects calls, in ms (JS `breaker.cooldownMs`).
    pub const COOLDOWN_MS: u32 = 5_000;
    /// Concurrent trial calls while half-open (JS `breaker.halfOpenMaxCalls`).
    pub const HALF_OPEN_MAX_CALLS: u32 = 1;
    /// Failure share of the window that opens the breaker (JS `breaker.failureRateThreshold`).
    pub const FAILURE_RATE_THRESHOLD: f64 = 0.5;
    /// Calls the window must hold before the rate counts (JS `breaker.minimumCalls`).
    pub const MINIMUM_CALLS: u32 = 10;
    /// What the failure-rate window spans (JS `breaker.windowType`).
    pub const WINDOW_TYPE: WindowType = WindowType::Time;
    /// Calls in a count window (JS `breaker.windowSize`).
    pub const WINDOW_SIZE: u32 = 20;
    /// Span of a time window in ms (JS `breaker.windowMs`).
    pub const WINDOW_MS: u32 = 30_000;

    /// The retry budget is on unless the policy says `retryBudget: false`.
    pub const RETRY_BUDGET_ENABLED: bool = true;
    /// Tokens in a full budget (JS `retryBudget.capacity`).
    pub const BUDGET_CAPACITY: u32 = 500;
    /// Tokens a retry after an error status costs (JS `retryBudget.retryCost`).
    pub const RETRY_COST: u32 = 5;
    /// Tokens a retry after a network error or timeout costs (JS `retryBudget.timeoutRetryCost`).
    pub const TIMEOUT_RETRY_COST: u32 = 10;
    /// Tokens a first-attempt success gives back (JS `retryBudget.noRetryIncrement`).
    pub const NO_RETRY_INCREMENT: u32 = 1;

    /// The bulkhead is off unless the policy sets `bulkhead`.
    pub const BULKHEAD_ENABLED: bool = false;
    /// Calls in flight per origin (JS `bulkhead.maxConcurrent`).
    pub const MAX_CONCURRENT: u32 = 10;
    /// Calls waiting for a slot per origin (JS `bulkhead.maxQueue`).
    pub const MAX_QUEUE: u32 = 0;

    /// Automatic keys for POST and PATCH, to the page's own origin only in browsers (JS `idempotencyKey`).
    pub const IDEMPOTENCY_KEY: IdempotencyKey = IdempotencyKey::Auto;
    /// Header that carries the key (JS `idempotencyHeader`).
    pub const IDEMPOTENCY_HEADER: &str = "Idempotency-Key";
    /// Origins whose state is kept (JS `maxOrigins`).
    pub const MAX_ORIGINS: u32 = 1000;
}

/// Largest millisecond value accepted: the largest `setTimeout` delay.
const MAX_MS: u32 = 2_147_483_647;

/// A validated policy: every field concrete, every value in range.
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    /// Per-attempt timeout in ms.
    pub timeout_ms: u32,
    /// Whole-call deadline in ms.
    pub total_timeout_ms: u32,
    /// Longest wait for a body chunk in ms; `None` (`bodyTimeoutMs: false`) leaves the body
    /// unbounded by this and by the deadline (streams).
    pub body_timeout_ms: Option<u32>,
    /// Retry settings; `None` makes one attempt only.
    pub retry: Option<RetryPolicy>,
    /// Circuit breaker settings; `None` turns the breaker off.
    pub breaker: Option<BreakerPolicy>,
    /// Retry budget settings; `None` turns the budget off.
    pub retry_budget: Option<BudgetPolicy>,
    /// Bulkhead settings; `None` turns the bulkhead off.
    pub bulkhead: Option<BulkheadPolicy>,
    /// Which idempotency key to send.
    pub idempotency_key: IdempotencyKey,
    /// Name of the idempotency key header.
    pub idempotency_header: String,
    /// How many origins the registry keeps.
    pub max_origins: u32,
}

/// Retry settings.
#[derive(Clone, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Attempts per call, the first one included (1..=20).
    pub max_attempts: u32,
    /// Backoff window of the first retry in ms.
    pub base_delay_ms: u32,
    /// Largest backoff window in ms (at least `base_delay_ms`).
    pub max_delay_ms: u32,
    /// How the wait is drawn from the window.
    pub jitter: Jitter,
    /// Response statuses worth retrying (each in 400..=599).
    pub retry_on: Vec<u16>,
    /// Longest `Retry-After` honoured in ms.
    pub max_retry_after_ms: u32,
}

/// When a closed breaker opens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BreakerMode {
    /// After `failure_threshold` failures in a row.
    Consecutive,
    /// When the failure share of a window reaches `failure_rate_threshold`.
    FailureRate,
}

/// What a failure-rate window spans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowType {
    /// The last `window_size` calls.
    Count,
    /// The calls of the last `window_ms` milliseconds.
    Time,
}

/// Circuit breaker settings. Fields of the mode not chosen are kept but unused.
#[derive(Clone, Debug, PartialEq)]
pub struct BreakerPolicy {
    /// When the breaker trips.
    pub mode: BreakerMode,
    /// Consecutive failures that trip it (consecutive mode).
    pub failure_threshold: u32,
    /// How long it stays open, in ms.
    pub cooldown_ms: u32,
    /// Concurrent trial calls while half-open.
    pub half_open_max_calls: u32,
    /// Failure share that trips it, in (0, 1] (failure-rate mode).
    pub failure_rate_threshold: f64,
    /// Calls the window must hold before the rate counts (failure-rate mode; then at most
    /// `window_size` for a count window, at most [`MAX_WINDOW_CALLS`] for a time window).
    pub minimum_calls: u32,
    /// What the window spans (failure-rate mode).
    pub window_type: WindowType,
    /// Calls in a count window.
    pub window_size: u32,
    /// Span of a time window in ms.
    pub window_ms: u32,
}

/// Retry budget settings (tokens).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BudgetPolicy {
    /// Tokens in a full budget.
    pub capacity: u32,
    /// Cost of a retry after an error status.
    pub retry_cost: u32,
    /// Cost of a retry after a network error or timeout.
    pub timeout_retry_cost: u32,
    /// Tokens a first-attempt success gives back.
    pub no_retry_increment: u32,
}

/// Bulkhead settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BulkheadPolicy {
    /// Calls in flight per origin.
    pub max_concurrent: u32,
    /// Calls waiting for a slot per origin; more are rejected at once.
    pub max_queue: u32,
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

impl Default for Policy {
    fn default() -> Self {
        Policy {
            timeout_ms: defaults::TIMEOUT_MS,
            total_timeout_ms: defaults::TOTAL_TIMEOUT_MS,
            body_timeout_ms: Some(defaults::BODY_TIMEOUT_MS),
            retry: defaults::RETRY_ENABLED.then(RetryPolicy::default),
            breaker: defaults::BREAKER_ENABLED.then(BreakerPolicy::default),
            retry_budget: defaults::RETRY_BUDGET_ENABLED.then(BudgetPolicy::default),
            bulkhead: defaults::BULKHEAD_ENABLED.then(BulkheadPolicy::default),
            idempotency_key: defaults::IDEMPOTENCY_KEY,
            idempotency_header: defaults::IDEMPOTENCY_HEADER.to_owned(),
            max_origins: defaults::MAX_ORIGINS,
        }
    }
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: defaults::MAX_ATTEMPTS,
            base_delay_ms: defaults::BASE_DELAY_MS,
            max_delay_ms: defaults::MAX_DELAY_MS,
            jitter: defaults::JITTER,
            retry_on: defaults::RETRY_ON.to_vec(),
            max_retry_after_ms: defaults::MAX_RETRY_AFTER_MS,
        }
    }
}

impl Default for BreakerPolicy {
    fn default() -> Self {
        BreakerPolicy {
            mode: defaults::BREAKER_MODE,
            failure_threshold: defaults::FAILURE_THRESHOLD,
            cooldown_ms: defaults::COOLDOWN_MS,
            half_open_max_calls: defaults::HALF_OPEN_MAX_CALLS,
            failure_rate_threshold: defaults::FAILURE_RATE_THRESHOLD,
            minimum_calls: defaults::MINIMUM_CALLS,
            window_type: defaults::WINDOW_TYPE,
            window_size: defaults::WINDOW_SIZE,
            window_ms: defaults::WINDOW_MS,
        }
    }
}

impl Default for BudgetPolicy {
    fn default() -> Self {
        BudgetPolicy {
            capacity: defaults::BUDGET_CAPACITY,
            retry_cost: defaults::RETRY_COST,
            timeout_retry_cost: defaults::TIMEOUT_RETRY_COST,
            no_retry_increment: defaults::NO_RETRY_INCREMENT,
        }
    }
}

impl Default for BulkheadPolicy {
    fn default() -> Self {
        BulkheadPolicy {
            max_concurrent: defaults::MAX_CONCURRENT,
            max_queue: defaults::MAX_QUEUE,
        }
    }
}

/// Whether a policy error is about a value's type or its range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyErrorKind {
    /// Right type, value outside the accepted range (JS `RangeError`).
    Range,
    /// Wrong type, or a field that does not exist (JS `TypeError`).
    Type,
}

/// A policy field that cannot be accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyError {
    /// The field's JS path, e.g. `retry.maxAttempts` (empty for the policy itself).
    pub path: String,
    /// The whole sentence: field, accepted range, and what was given.
    pub message: String,
    /// Type or range.
    pub kind: PolicyErrorKind,
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PolicyError {}

/// A policy as decoded, not yet validated. `null` and `undefined` fields count as absent;
/// a top-level `onEvent` is skipped while decoding (the shell handles it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PolicyInput {
    root: Value,
}

/// A decoded JS value, kept as given until validation.
#[derive(Clone, Debug, Default, PartialEq)]
enum Value {
    #[default]
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    List(Vec<Value>),
    /// Entries in order, keys unique (a repeated key keeps its last value, as in `JSON.parse`).
    Map(Vec<(String, Value)>),
}

type Map = [(String, Value)];

impl<'de> Deserialize<'de> for PolicyInput {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let root = d.deserialize_any(ValueVisitor { top: true })?;
        Ok(PolicyInput { root })
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ValueVisitor { top: false })
    }
}

/// Decodes any value; `top` skips the policy's `onEvent` (a JS function is not data).
struct ValueVisitor {
    top: bool,
}

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a policy value (null, boolean, number, string, array or object)")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v as f64))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v as f64))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Value, E> {
        Ok(Value::Number(v as f64))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Value, E> {
        Ok(Value::Number(v as f64))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Number(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Value>()? {
            items.push(item);
        }
        Ok(Value::List(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries: Vec<(String, Value)> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            if self.top && key == "onEvent" {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            let value = map.next_value::<Value>()?;
            match entries.iter_mut().find(|(k, _)| *k == key) {
                Some(entry) => entry.1 = value,
                None => entries.push((key, value)),
            }
        }
        Ok(Value::Map(entries))
    }
}

impl PolicyInput {
    /// This policy with `over` laid on top, field by field: nested objects merge field by
    /// field, an absent or `null` field keeps this one's value, `false` turns a feature off,
    /// an object over `false` turns it on with defaults plus its fields, and `true` over an
    /// object keeps that object (on, with its settings).
    pub fn merge(&self, over: &PolicyInput) -> PolicyInput {
        PolicyInput {
            root: merge(&self.root, &over.root),
        }
    }
}

fn merge(base: &Value, over: &Value) -> Value {
    match (base, over) {
        (_, Value::Null) | (Value::Map(_), Value::Bool(true)) => base.clone(),
        (Value::Map(b), Value::Map(o)) => {
            let mut out = b.clone();
            for (key, value) in o {
                match out.iter_mut().find(|(k, _)| k == key) {
                    Some(entry) => entry.1 = merge(&entry.1, value),
                    None => out.push((key.clone(), value.clone())),
                }
            }
            Value::Map(out)
        }
        _ => over.clone(),
    }
}

impl Policy {
    /// Validates a decoded policy and fills in the defaults.
    pub fn from_input(input: &PolicyInput) -> Result<Policy, PolicyError> {
        let mut c = Check { error: None };
        let map: &Map = match &input.root {
            Value::Null => &[],
            Value::Map(m) => m,
            other => {
                c.fail(String::new(), "an object", other, false);
                &[]
            }
        };
        let o = c.object(
            map,
            "",
            &[
                "timeoutMs",
                "totalTimeoutMs",
                "bodyTimeoutMs",
                "retry",
                "breaker",
                "retryBudget",
                "bulkhead",
                "idempotencyKey",
                "idempotencyHeader",
                "maxOrigins",
            ],
        );
        let timeout_ms = c.int(&o, "timeoutMs", 1, MAX_MS, defaults::TIMEOUT_MS);
        let total_timeout_ms = c.int(&o, "totalTimeoutMs", 1, MAX_MS, defaults::TOTAL_TIMEOUT_MS);
        let body_timeout_ms = match o.get("bodyTimeoutMs") {
            Some(Value::Bool(false)) => None,
            Some(Value::Number(_)) | None => {
                Some(c.int(&o, "bodyTimeoutMs", 1, MAX_MS, defaults::BODY_TIMEOUT_MS))
            }
            Some(other) => {
                c.fail(
                    "bodyTimeoutMs".to_owned(),
                    "an integer from 1 to 2147483647, or false",
                    other,
                    false,
                );
                None
            }
        };
        let retry = c
            .feature(&o, "retry", defaults::RETRY_ENABLED)
            .map(|m| retry_policy(&mut c, m));
        let breaker = c
            .feature(&o, "breaker", defaults::BREAKER_ENABLED)
            .map(|m| breaker_policy(&mut c, m));
        let retry_budget = c
            .feature(&o, "retryBudget", defaults::RETRY_BUDGET_ENABLED)
            .map(|m| budget_policy(&mut c, m));
        let bulkhead = c
            .feature(&o, "bulkhead", defaults::BULKHEAD_ENABLED)
            .map(|m| bulkhead_policy(&mut c, m));
        let policy = Policy {
            timeout_ms,
            total_timeout_ms,
            body_timeout_ms,
            retry,
            breaker,
            retry_budget,
            bulkhead,
            idempotency_key: idempotency_key(&mut c, &o),
            idempotency_header: idempotency_header(&mut c, &o),
            max_origins: c.int(&o, "maxOrigins", 1, 1_000_000, defaults::MAX_ORIGINS),
        };
        match c.error {
            Some(error) => Err(error),
            None => Ok(policy),
        }
    }
}

fn retry_policy(c: &mut Check, map: &Map) -> RetryPolicy {
    let o = c.object(
        map,
        "retry",
        &[
            "maxAttempts",
            "baseDelayMs",
            "maxDelayMs",
            "jitter",
            "retryOn",
            "maxRetryAfterMs",
        ],
    );
    let base_delay_ms = c.int(&o, "baseDelayMs", 0, MAX_MS, defaults::BASE_DELAY_MS);
    let max_delay_ms = c.int(&o, "maxDelayMs", 0, MAX_MS, defaults::MAX_DELAY_MS);
    if max_delay_ms < base_delay_ms {
        c.fail(
            "retry.maxDelayMs".to_owned(),
            &int_range("retry.baseDelayMs", base_delay_ms, "", MAX_MS),
            &Value::Number(max_delay_ms.into()),
            true,
        );
    }
    RetryPolicy {
        max_attempts: c.int(&o, "maxAttempts", 1, 20, defaults::MAX_ATTEMPTS),
        base_delay_ms,
        max_delay_ms,
        jitter: c
            .choice(&o, "jitter", &["full", "equal", "decorrelated", "none"])
            .map_or(defaults::JITTER, |i| {
                [
                    Jitter::Full,
                    Jitter::Equal,
                    Jitter::Decorrelated,
                    Jitter::None,
                ][i]
            }),
        retry_on: statuses(c, o.get("retryOn")),
        max_retry_after_ms: c.int(
            &o,
            "maxRetryAfterMs",
            0,
            MAX_MS,
            defaults::MAX_RETRY_AFTER_MS,
        ),
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

fn breaker_policy(c: &mut Check, map: &Map) -> BreakerPolicy {
    let o = c.object(
        map,
        "breaker",
        &[
            "mode",
            "failureThreshold",
            "cooldownMs",
            "halfOpenMaxCalls",
            "failureRateThreshold",
            "minimumCalls",
            "windowType",
            "windowSize",
            "windowMs",
        ],
    );
    let mode = breaker_mode(c, &o);
    let policy = BreakerPolicy {
        mode,
        failure_threshold: c.int(&o, "failureThreshold", 1, 1000, defaults::FAILURE_THRESHOLD),
        cooldown_ms: c.int(&o, "cooldownMs", 1, MAX_MS, defaults::COOLDOWN_MS),
        half_open_max_calls: c.int(
            &o,
            "halfOpenMaxCalls",
            1,
            1000,
            defaults::HALF_OPEN_MAX_CALLS,
        ),
        failure_rate_threshold: rate_value(c, o.get("failureRateThreshold")),
        minimum_calls: c.int(&o, "minimumCalls", 1, 10_000, defaults::MINIMUM_CALLS),
        window_type: c
            .choice(&o, "windowType", &["count", "time"])
            .map_or(defaults::WINDOW_TYPE, |i| {
                [WindowType::Count, WindowType::Time][i]
            }),
        window_size: c.int(&o, "windowSize", 1, 1000, defaults::WINDOW_SIZE),
        window_ms: c.int(&o, "windowMs", 1, MAX_MS, defaults::WINDOW_MS),
    };
    reachable_minimum_calls(c, &policy);
    policy
}

/// The fields only the failure-rate mode reads.
const RATE_FIELDS: [&str; 5] = [
    "failureRateThreshold",
    "minimumCalls",
    "windowType",
    "windowSize",
    "windowMs",
];

/// The breaker's mode: as given; else the mode whose fields the policy names
/// (`failureThreshold` alone keeps its meaning: consecutive failures); else the default.
/// A field of the other mode is an error naming it, never silently ignored.
fn breaker_mode(c: &mut Check, o: &Object) -> BreakerMode {
    let given = c
        .choice(o, "mode", &["consecutive", "failure-rate"])
        .map(|i| [BreakerMode::Consecutive, BreakerMode::FailureRate][i]);
    let threshold = o.get("failureThreshold");
    let rate_field = RATE_FIELDS.iter().find_map(|k| o.get(k).map(|v| (*k, v)));
    let mode = given.unwrap_or(match (threshold, rate_field) {
        (Some(_), _) => BreakerMode::Consecutive,
        (None, Some(_)) => BreakerMode::FailureRate,
        _ => defaults::BREAKER_MODE,
    });
    let stray = match mode {
        BreakerMode::Consecutive => rate_field,
        BreakerMode::FailureRate => threshold.map(|v| ("failureThreshold", v)),
    };
    if let Some((key, value)) = stray {
        let (expected, other) = match mode {
            BreakerMode::Consecutive => ("\"failure-rate\"", "\"consecutive\""),
            BreakerMode::FailureRate => ("\"consecutive\"", "\"failure-rate\""),
        };
        let mut message = String::from("a field of the ");
        message.push_str(expected);
        message.push_str(" mode only, absent when the breaker's mode is ");
        message.push_str(other);
        c.fail(o.path(key), &message, value, false);
    }
    mode
}

/// In failure-rate mode the window must be able to hold `minimumCalls` calls, or the
/// breaker could never open: a count window holds `windowSize` calls, a time window at
/// most [`MAX_WINDOW_CALLS`]. Other modes do not use these fields.
fn reachable_minimum_calls(c: &mut Check, policy: &BreakerPolicy) {
    if policy.mode != BreakerMode::FailureRate {
        return;
    }
    let (most, expected) = match policy.window_type {
        WindowType::Count => (
            policy.window_size as usize,
            int_range("", 1, "breaker.windowSize", policy.window_size),
        ),
        WindowType::Time => {
            let mut expected = int_range("", 1, "", MAX_WINDOW_CALLS as u32);
            expected.push_str(" when breaker.windowType is \"time\"");
            (MAX_WINDOW_CALLS, expected)
        }
    };
    if policy.minimum_calls as usize > most {
        c.fail(
            "breaker.minimumCalls".to_owned(),
            &expected,
            &Value::Number(policy.minimum_calls.into()),
            true,
        );
    }
}

fn rate_value(c: &mut Check, v: Option<&Value>) -> f64 {
    match v {
        None => defaults::FAILURE_RATE_THRESHOLD,
        Some(Value::Number(n)) if *n > 0.0 && *n <= 1.0 => *n,
        Some(other) => {
            c.fail(
                "breaker.failureRateThreshold".to_owned(),
                "a number greater than 0 and at most 1",
                other,
                matches!(other, Value::Number(_)),
            );
            defaults::FAILURE_RATE_THRESHOLD
        }
    }
}

fn budget_policy(c: &mut Check, map: &Map) -> BudgetPolicy {
    let o = c.object(
        map,
        "retryBudget",
        &[
            "capacity",
            "retryCost",
            "timeoutRetryCost",
            "noRetryIncrement",
        ],
    );
    let capacity = c.int(&o, "capacity", 1, 1_000_000, defaults::BUDGET_CAPACITY);
    let mut share = |key: &str, default: u32| -> u32 {
        let n = c.int(&o, key, 0, 1_000_000, default);
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
        retry_cost: share("retryCost", defaults::RETRY_COST),
        timeout_retry_cost: share("timeoutRetryCost", defaults::TIMEOUT_RETRY_COST),
        no_retry_increment: share("noRetryIncrement", defaults::NO_RETRY_INCREMENT),
    }
}

fn bulkhead_policy(c: &mut Check, map: &Map) -> BulkheadPolicy {
    let o = c.object(map, "bulkhead", &["maxConcurrent", "maxQueue"]);
    BulkheadPolicy {
        max_concurrent: c.int(&o, "maxConcurrent", 1, 100_000, defaults::MAX_CONCURRENT),
        max_queue: c.int(&o, "maxQueue", 0, 100_000, defaults::MAX_QUEUE),
    }
}

fn idempotency_key(c: &mut Check, o: &Object) -> IdempotencyKey {
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

fn idempotency_header(c: &mut Check, o: &Object) -> String {
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

/// Most fields one policy object has.
const MAX_FIELDS: usize = 10;

/// The fields of one policy object, as given (`null` counts as absent).
struct Object<'a> {
    /// The object's JS path (empty for the policy itself).
    prefix: &'static str,
    /// Its field names.
    keys: &'static [&'static str],
    /// The value of each field of `keys`, if given.
    values: [Option<&'a Value>; MAX_FIELDS],
}

impl<'a> Object<'a> {
    /// The value of field `key` (one of `keys`), if given.
    fn get(&self, key: &str) -> Option<&'a Value> {
        let i = self.keys.iter().position(|k| *k == key)?;
        self.values.get(i).copied().flatten()
    }

    /// The JS path of field `key`.
    fn path(&self, key: &str) -> String {
        let mut path = self.prefix.to_owned();
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(key);
        path
    }
}

/// Validation state: the first error found. Checking goes on after an error (with
/// defaults in place of bad values) but only the first error is kept, so the error
/// reported is the one of the first bad field in checking order. Plain values instead of
/// a `Result` per field keep the wasm small.
struct Check {
    error: Option<PolicyError>,
}

impl Check {
    /// Looks up the fields named `keys` in `map`. Any other key is an error.
    #[inline(never)]
    fn object<'a>(
        &mut self,
        map: &'a Map,
        prefix: &'static str,
        keys: &'static [&'static str],
    ) -> Object<'a> {
        let mut object = Object {
            prefix,
            keys,
            values: [None; MAX_FIELDS],
        };
        for (key, value) in map {
            let slot = keys
                .iter()
                .position(|k| k == key)
                .and_then(|i| object.values.get_mut(i));
            match slot {
                Some(slot) => *slot = (!matches!(value, Value::Null)).then_some(value),
                None if self.error.is_none() => {
                    let path = object.path(key);
                    let mut message = "unknown policy field ".to_owned();
                    push_quoted(&mut message, &path, false);
                    self.error = Some(PolicyError {
                        path,
                        message,
                        kind: PolicyErrorKind::Type,
                    });
                }
                None => {}
            }
        }
        object
    }

    /// An integer field in `min..=max` (`default` if absent or bad); JS numbers arrive as
    /// f64, so 3.0 counts and 3.5 does not.
    #[inline(never)]
    fn int(&mut self, o: &Object, key: &str, min: u32, max: u32, default: u32) -> u32 {
        match o.get(key) {
            None => default,
            Some(v) => as_int(v, min, max).unwrap_or_else(|| {
                self.int_error(o.path(key), v, min, max);
                default
            }),
        }
    }

    /// `v` at `path` is not an integer in `min..=max`.
    #[inline(never)]
    fn int_error(&mut self, path: String, v: &Value, min: u32, max: u32) {
        let expected = int_range("", min, "", max);
        self.fail(path, &expected, v, matches!(v, Value::Number(_)));
    }

    /// A string field that must be one of `names`: the index of the one given.
    #[inline(never)]
    fn choice(&mut self, o: &Object, key: &str, names: &[&str]) -> Option<usize> {
        let v = o.get(key)?;
        if let Value::String(s) = v
            && let Some(i) = names.iter().position(|name| name == s)
        {
            return Some(i);
        }
        let mut expected = "one of ".to_owned();
        for (i, name) in names.iter().enumerate() {
            if i > 0 {
                expected.push_str(", ");
            }
            push_quoted(&mut expected, name, false);
        }
        self.fail(o.path(key), &expected, v, matches!(v, Value::String(_)));
        None
    }

    /// A feature field: absent (its default), `false` (off), `true` (on, defaults) or an
    /// object; the object's fields if on.
    #[inline(never)]
    fn feature<'a>(&mut self, o: &Object<'a>, key: &str, on_by_default: bool) -> Option<&'a Map> {
        match o.get(key) {
            None if on_by_default => Some(&[]),
            None | Some(Value::Bool(false)) => None,
            Some(Value::Bool(true)) => Some(&[]),
            Some(Value::Map(m)) => Some(m),
            Some(other) => {
                self.fail(o.path(key), "true, false or an object", other, false);
                None
            }
        }
    }

    /// Records "`path` must be `expected` (got …)" unless an error is recorded already. With
    /// `right_type` (a number or string of the wrong value) it is a range error showing the
    /// value; otherwise a type error naming the type given.
    #[inline(never)]
    fn fail(&mut self, path: String, expected: &str, got: &Value, right_type: bool) {
        if self.error.is_some() {
            return;
        }
        let mut message = if path.is_empty() {
            "policy".to_owned()
        } else {
            path.clone()
        };
        message.push_str(" must be ");
        message.push_str(expected);
        message.push_str(" (got ");
        let kind = match got {
            Value::Number(n) if right_type => {
                push_number(&mut message, *n);
                PolicyErrorKind::Range
            }
            Value::String(s) if right_type => {
                push_quoted(&mut message, s, true);
                PolicyErrorKind::Range
            }
            _ => {
                message.push_str(type_name(got));
                PolicyErrorKind::Type
            }
        };
        message.push(')');
        self.error = Some(PolicyError {
            path,
            message,
            kind,
        });
    }
}

fn as_int(v: &Value, min: u32, max: u32) -> Option<u32> {
    match v {
        Value::Number(n) if n.fract() == 0.0 && *n >= f64::from(min) && *n <= f64::from(max) => {
            Some(*n as u32)
        }
        _ => None,
    }
}

/// "an integer from `min` to `max`"; a bound with a label (another field's path) is shown
/// as `label (n)`.
#[inline(never)]
fn int_range(min_label: &str, min: u32, max_label: &str, max: u32) -> String {
    let mut s = "an integer from ".to_owned();
    push_bound(&mut s, min_label, min);
    s.push_str(" to ");
    push_bound(&mut s, max_label, max);
    s
}

fn push_bound(s: &mut String, label: &str, n: u32) {
    if label.is_empty() {
        push_u64(s, n.into());
    } else {
        s.push_str(label);
        s.push_str(" (");
        push_u64(s, n.into());
        s.push(')');
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::List(_) => "an array",
        Value::Map(_) => "an object",
    }
}

/// Appends `n` in decimal, with at least `width` digits (zeros in front).
fn push_digits(out: &mut String, mut n: u64, width: usize) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    while n > 0 || buf.len() - i < width.max(1) {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    for &b in &buf[i..] {
        out.push(char::from(b));
    }
}

fn push_u64(out: &mut String, n: u64) {
    push_digits(out, n, 1);
}

/// 2^64: from here on a number is shown in exponent form.
const U64_END: f64 = 18_446_744_073_709_551_616.0;

/// Appends a number about as JS prints it: `NaN`, `Infinity`, `-3`, `3.5`, `1e-7`,
/// `1e+21`. Integers below 2^64 are exact; other numbers are rounded to 15 significant
/// digits (12 in exponent form). Written by hand: core's float formatting is kilobytes
/// of wasm.
fn push_number(out: &mut String, n: f64) {
    if n.is_nan() {
        out.push_str("NaN");
        return;
    }
    let mut n = n;
    if n < 0.0 {
        out.push('-');
        n = -n;
    }
    if n.is_infinite() {
        out.push_str("Infinity");
        return;
    }
    let scientific = n >= U64_END || (n > 0.0 && n < 1e-6);
    let mut exp = 0i32;
    if scientific {
        while n >= 10.0 {
            n /= 10.0;
            exp += 1;
        }
        while n < 1.0 {
            n *= 10.0;
            exp -= 1;
        }
    }
    // Here n < 2^64: its integer part fits a u64.
    let mut whole = n as u64;
    let frac = n - whole as f64;
    let mut fraction = 0;
    let mut places = 0;
    if frac > 0.0 {
        let mut whole_digits = 0;
        let mut rest = whole;
        while rest > 0 {
            whole_digits += 1;
            rest /= 10;
        }
        // Zeros right after the point (a number below 1).
        let mut zeros = 0;
        let mut f = frac;
        while whole == 0 && f < 0.1 {
            f *= 10.0;
            zeros += 1;
        }
        let significant: usize = if scientific { 12 } else { 15 };
        places = (significant + zeros)
            .saturating_sub(whole_digits)
            .clamp(1, 19);
        let scale = 10u64.pow(places as u32);
        fraction = (frac * scale as f64 + 0.5) as u64;
        if fraction >= scale {
            whole += 1;
            fraction -= scale;
        }
        while fraction > 0 && fraction % 10 == 0 {
            fraction /= 10;
            places -= 1;
        }
    }
    if scientific && whole >= 10 {
        // Rounding carried 9.99… up to 10.
        whole /= 10;
        exp += 1;
    }
    push_u64(out, whole);
    if fraction > 0 {
        out.push('.');
        push_digits(out, fraction, places);
    }
    if scientific {
        out.push_str(if exp < 0 { "e-" } else { "e+" });
        push_u64(out, exp.unsigned_abs().into());
    }
}

/// Appends `s` quoted and escaped for an error message (backslash escapes as in Rust
/// string literals for quotes, backslashes and control characters); with `cut`, after
/// 40 characters the rest is dropped and `…` follows the closing quote.
fn push_quoted(out: &mut String, s: &str, cut: bool) {
    out.push('"');
    for (i, ch) in s.chars().enumerate() {
        if cut && i == 40 {
            out.push_str("\"…");
            return;
        }
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0' => out.push_str("\\0"),
            c if c < ' ' || c == '\x7f' => {
                out.push_str("\\u{");
                let code = c as u32;
                if code >= 16 {
                    out.push(char::from(b"0123456789abcdef"[(code >> 4) as usize]));
                }
                out.push(char::from(b"0123456789abcdef"[(code & 15) as usize]));
                out.push('}');
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn input(v: serde_json::Value) -> PolicyInput {
        serde_json::from_value(v).expect("any JSON decodes")
    }

    fn parse(v: serde_json::Value) -> Result<Policy, PolicyError> {
        Policy::from_input(&input(v))
    }

    fn err(v: serde_json::Value) -> PolicyError {
        parse(v).expect_err("policy must be rejected")
    }

    #[test]
    fn empty_and_null_policies_are_the_defaults() {
        assert_eq!(parse(json!({})), Ok(Policy::default()));
        assert_eq!(parse(json!(null)), Ok(Policy::default()));
        assert_eq!(
            Policy::from_input(&PolicyInput::default()),
            Ok(Policy::default())
        );
    }

    #[test]
    fn defaults_are_the_documented_values() {
        let p = Policy::default();
        assert_eq!((p.timeout_ms, p.total_timeout_ms), (10_000, 30_000));
        assert_eq!(p.body_timeout_ms, Some(10_000));
        let r = p.retry.expect("retry on by default");
        assert_eq!(
            (r.max_attempts, r.base_delay_ms, r.max_delay_ms),
            (3, 100, 10_000)
        );
        assert_eq!(r.jitter, Jitter::Full);
        assert_eq!(r.retry_on, vec![408, 429, 500, 502, 503, 504]);
        assert_eq!(r.max_retry_after_ms, 30_000);
        let b = p.breaker.expect("breaker on by default");
        assert_eq!(b.mode, BreakerMode::FailureRate);
        assert_eq!(
            (b.failure_threshold, b.cooldown_ms, b.half_open_max_calls),
            (5, 5_000, 1)
        );
        assert_eq!((b.failure_rate_threshold, b.minimum_calls), (0.5, 10));
        assert_eq!(
            (b.window_type, b.window_size, b.window_ms),
            (WindowType::Time, 20, 30_000)
        );
        let g = p.retry_budget.expect("budget on by default");
        assert_eq!(
            (
                g.capacity,
                g.retry_cost,
                g.timeout_retry_cost,
                g.no_retry_increment
            ),
            (500, 5, 10, 1)
        );
        assert_eq!(p.bulkhead, None);
        assert_eq!(
            BulkheadPolicy::default(),
            BulkheadPolicy {
                max_concurrent: 10,
                max_queue: 0
            }
        );
        assert_eq!(p.idempotency_key, IdempotencyKey::Auto);
        assert_eq!(p.idempotency_header, "Idempotency-Key");
        assert_eq!(p.max_origins, 1000);
    }

    #[test]
    fn true_means_defaults_and_false_means_off() {
        let p =
            parse(json!({"retry": true, "breaker": false, "retryBudget": false, "bulkhead": true}))
                .expect("valid");
        assert_eq!(p.retry, Some(RetryPolicy::default()));
        assert_eq!(p.breaker, None);
        assert_eq!(p.retry_budget, None);
        assert_eq!(p.bulkhead, Some(BulkheadPolicy::default()));
    }

    #[test]
    fn every_field_is_read() {
        let p = parse(json!({
            "timeoutMs": 1, "totalTimeoutMs": 2147483647,
            "retry": {"maxAttempts": 20, "baseDelayMs": 0, "maxDelayMs": 0, "jitter": "decorrelated",
                      "retryOn": [], "maxRetryAfterMs": 0},
            "breaker": {"mode": "failure-rate", "cooldownMs": 1,
                        "halfOpenMaxCalls": 1000, "failureRateThreshold": 1, "minimumCalls": 1000,
                        "windowType": "time", "windowSize": 1000, "windowMs": 1},
            "retryBudget": {"capacity": 7, "retryCost": 7, "timeoutRetryCost": 0, "noRetryIncrement": 3},
            "bulkhead": {"maxConcurrent": 100000, "maxQueue": 100000},
            "idempotencyKey": "k-1", "idempotencyHeader": "X-Key", "maxOrigins": 1000000,
            "onEvent": "ignored by the core"
        }))
        .expect("valid");
        let expected = Policy {
            timeout_ms: 1,
            total_timeout_ms: 2_147_483_647,
            body_timeout_ms: Some(defaults::BODY_TIMEOUT_MS),
            retry: Some(RetryPolicy {
                max_attempts: 20,
                base_delay_ms: 0,
                max_delay_ms: 0,
                jitter: Jitter::Decorrelated,
                retry_on: vec![],
                max_retry_after_ms: 0,
            }),
            breaker: Some(BreakerPolicy {
                mode: BreakerMode::FailureRate,
                failure_threshold: defaults::FAILURE_THRESHOLD,
                cooldown_ms: 1,
                half_open_max_calls: 1000,
                failure_rate_threshold: 1.0,
                minimum_calls: 1000,
                window_type: WindowType::Time,
                window_size: 1000,
                window_ms: 1,
            }),
            retry_budget: Some(BudgetPolicy {
                capacity: 7,
                retry_cost: 7,
                timeout_retry_cost: 0,
                no_retry_increment: 3,
            }),
            bulkhead: Some(BulkheadPolicy {
                max_concurrent: 100_000,
                max_queue: 100_000,
            }),
            idempotency_key: IdempotencyKey::Fixed("k-1".into()),
            idempotency_header: "X-Key".into(),
            max_origins: 1_000_000,
        };
        assert_eq!(p, expected);
    }

    #[test]
    fn range_errors_name_the_field_and_the_range() {
        let e = err(json!({"retry": {"maxAttempts": 0}}));
        assert_eq!(
            e.to_string(),
            "retry.maxAttempts must be an integer from 1 to 20 (got 0)"
        );
        assert_eq!(
            (e.path.as_str(), e.kind),
            ("retry.maxAttempts", PolicyErrorKind::Range)
        );
        let e = err(json!({"retry": {"maxAttempts": 21}}));
        assert_eq!(
            e.message,
            "retry.maxAttempts must be an integer from 1 to 20 (got 21)"
        );
        let e = err(json!({"timeoutMs": 0}));
        assert_eq!(
            e.message,
            "timeoutMs must be an integer from 1 to 2147483647 (got 0)"
        );
        let e = err(json!({"totalTimeoutMs": 2147483648u64}));
        assert_eq!(e.path, "totalTimeoutMs");
        let e = err(json!({"maxOrigins": 1000001}));
        assert_eq!(
            e.message,
            "maxOrigins must be an integer from 1 to 1000000 (got 1000001)"
        );
    }

    #[test]
    fn each_bound_is_enforced() {
        let cases = [
            json!({"retry": {"baseDelayMs": -1}}),
            json!({"retry": {"maxRetryAfterMs": 2147483648u64}}),
            json!({"breaker": {"failureThreshold": 0}}),
            json!({"breaker": {"failureThreshold": 1001}}),
            json!({"breaker": {"cooldownMs": 0}}),
            json!({"breaker": {"halfOpenMaxCalls": 0}}),
            json!({"breaker": {"halfOpenMaxCalls": 1001}}),
            json!({"breaker": {"minimumCalls": 0}}),
            json!({"breaker": {"minimumCalls": 10001}}),
            json!({"breaker": {"windowSize": 0}}),
            json!({"breaker": {"windowSize": 1001}}),
            json!({"breaker": {"windowMs": 0}}),
            json!({"retryBudget": {"capacity": 0}}),
            json!({"retryBudget": {"capacity": 1000001}}),
            json!({"bulkhead": {"maxConcurrent": 0}}),
            json!({"bulkhead": {"maxConcurrent": 100001}}),
            json!({"bulkhead": {"maxQueue": 100001}}),
            json!({"maxOrigins": 0}),
        ];
        for case in cases {
            let e = parse(case.clone()).expect_err(&case.to_string());
            assert_eq!(e.kind, PolicyErrorKind::Range, "{case}");
        }
    }

    #[test]
    fn integers_may_come_as_floats_but_must_be_whole_and_finite() {
        let p = Policy::from_input(&PolicyInput {
            root: Value::Map(vec![("timeoutMs".into(), Value::Number(3.0))]),
        });
        assert_eq!(p.map(|p| p.timeout_ms), Ok(3));
        for (n, shown) in [
            (3.5, "3.5"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ] {
            let e = Policy::from_input(&PolicyInput {
                root: Value::Map(vec![("timeoutMs".into(), Value::Number(n))]),
            })
            .expect_err("not an integer");
            assert_eq!(e.kind, PolicyErrorKind::Range);
            assert_eq!(
                e.message,
                format!("timeoutMs must be an integer from 1 to 2147483647 (got {shown})")
            );
        }
    }

    #[test]
    fn type_errors_name_the_field_and_the_type() {
        let e = err(json!({"retry": {"maxAttempts": "3"}}));
        assert_eq!(
            e.message,
            "retry.maxAttempts must be an integer from 1 to 20 (got a string)"
        );
        assert_eq!(e.kind, PolicyErrorKind::Type);
        let e = err(json!({"retry": 3}));
        assert_eq!(
            e.message,
            "retry must be true, false or an object (got a number)"
        );
        assert_eq!(e.kind, PolicyErrorKind::Type);
        let e = err(json!({"retry": {"jitter": 1}}));
        assert_eq!(e.kind, PolicyErrorKind::Type);
        assert_eq!(e.path, "retry.jitter");
        let e = err(json!({"retry": {"retryOn": 503}}));
        assert_eq!(
            e.message,
            "retry.retryOn must be an array of integer statuses from 400 to 599 (got a number)"
        );
        let e = err(json!({"idempotencyKey": 1}));
        assert_eq!(
            (e.path.as_str(), e.kind),
            ("idempotencyKey", PolicyErrorKind::Type)
        );
        let e = err(json!({"idempotencyHeader": ["x"]}));
        assert_eq!(
            (e.path.as_str(), e.kind),
            ("idempotencyHeader", PolicyErrorKind::Type)
        );
        let e = err(json!({"breaker": {"failureRateThreshold": "half"}}));
        assert_eq!(e.kind, PolicyErrorKind::Type);
        let e = err(json!([1]));
        assert_eq!(e.message, "policy must be an object (got an array)");
    }

    #[test]
    fn unknown_fields_are_named() {
        let e = err(json!({"retyr": true}));
        assert_eq!(e.message, r#"unknown policy field "retyr""#);
        assert_eq!(e.kind, PolicyErrorKind::Type);
        let e = err(json!({"retry": {"maxAttemps": 2}}));
        assert_eq!(e.message, r#"unknown policy field "retry.maxAttemps""#);
        assert_eq!(e.path, "retry.maxAttemps");
        let e = err(json!({"breaker": {"retry": true}}));
        assert_eq!(e.path, "breaker.retry");
    }

    #[test]
    fn on_event_is_skipped_only_at_the_top() {
        assert_eq!(
            parse(json!({"onEvent": {"any": "thing"}})),
            Ok(Policy::default())
        );
        assert_eq!(err(json!({"retry": {"onEvent": 1}})).path, "retry.onEvent");
    }

    #[test]
    fn null_fields_count_as_absent() {
        assert_eq!(
            parse(json!({"retry": null, "timeoutMs": null})),
            Ok(Policy::default())
        );
    }

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
    fn failure_rate_minimum_calls_must_fit_the_count_window() {
        // The default minimumCalls (10) cannot be reached in a window of 5 calls.
        let e = err(json!({"breaker": {"windowType": "count", "windowSize": 5}}));
        assert_eq!(
            e.message,
            "breaker.minimumCalls must be an integer from 1 to breaker.windowSize (5) (got 10)"
        );
        assert_eq!(
            (e.path.as_str(), e.kind),
            ("breaker.minimumCalls", PolicyErrorKind::Range)
        );
        let e =
            err(json!({"breaker": {"windowType": "count", "windowSize": 20, "minimumCalls": 21}}));
        assert_eq!(e.path, "breaker.minimumCalls");
        let p =
            parse(json!({"breaker": {"windowType": "count", "windowSize": 5, "minimumCalls": 5}}))
                .expect("minimumCalls equal to windowSize is reachable");
        assert_eq!(
            p.breaker.map(|b| (b.window_size, b.minimum_calls)),
            Some((5, 5))
        );
    }

    #[test]
    fn failure_rate_minimum_calls_must_fit_a_time_window() {
        let e = err(
            json!({"breaker": {"mode": "failure-rate", "windowType": "time", "minimumCalls": 1001}}),
        );
        assert_eq!(
            e.message,
            r#"breaker.minimumCalls must be an integer from 1 to 1000 when breaker.windowType is "time" (got 1001)"#
        );
        assert_eq!(e.kind, PolicyErrorKind::Range);
        // A time window ignores windowSize.
        assert!(
            parse(
                json!({"breaker": {"mode": "failure-rate", "windowType": "time", "windowSize": 5,
                                     "minimumCalls": 1000}})
            )
            .is_ok()
        );
    }

    #[test]
    fn the_mode_follows_the_fields_given_and_the_other_modes_fields_are_refused() {
        let mode = |v| parse(v).map(|p| p.breaker.map(|b| b.mode));
        assert_eq!(
            mode(json!({"breaker": {"failureThreshold": 3}})),
            Ok(Some(BreakerMode::Consecutive)),
            "failureThreshold alone keeps its meaning"
        );
        assert_eq!(
            mode(json!({"breaker": {"minimumCalls": 4}})),
            Ok(Some(BreakerMode::FailureRate))
        );
        assert_eq!(
            mode(json!({"breaker": {"cooldownMs": 50}})),
            Ok(Some(defaults::BREAKER_MODE))
        );
        let path = |v| parse(v).map(|_| ()).map_err(|e| e.path);
        assert_eq!(
            path(json!({"breaker": {"failureThreshold": 3, "failureRateThreshold": 0.5}})),
            Err("breaker.failureRateThreshold".to_owned())
        );
        assert_eq!(
            path(json!({"breaker": {"mode": "consecutive", "minimumCalls": 5}})),
            Err("breaker.minimumCalls".to_owned())
        );
        assert_eq!(
            path(json!({"breaker": {"mode": "failure-rate", "failureThreshold": 5}})),
            Err("breaker.failureThreshold".to_owned())
        );
        let e = err(json!({"breaker": {"mode": "consecutive", "windowSize": 5}}));
        assert_eq!(
            e.message,
            "breaker.windowSize must be a field of the \"failure-rate\" mode only, absent when \
             the breaker's mode is \"consecutive\" (got a number)"
        );
        // A call's fields are merged over the client's before the mode is decided.
        let client = input(json!({"breaker": {"failureThreshold": 3}}));
        let call = input(json!({"breaker": {"cooldownMs": 10}}));
        let merged = Policy::from_input(&client.merge(&call)).expect("valid");
        assert_eq!(
            merged.breaker.map(|b| b.mode),
            Some(BreakerMode::Consecutive)
        );
        let call = input(json!({"breaker": {"mode": "failure-rate"}}));
        assert_eq!(
            Policy::from_input(&client.merge(&call)).map_err(|e| e.path),
            Err("breaker.failureThreshold".to_owned())
        );
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
    fn failure_rate_is_in_zero_exclusive_one_inclusive() {
        for bad in [json!(0), json!(-0.1), json!(1.01)] {
            let e = err(json!({"breaker": {"failureRateThreshold": bad}}));
            assert_eq!(e.kind, PolicyErrorKind::Range);
            assert!(e.message.starts_with(
                "breaker.failureRateThreshold must be a number greater than 0 and at most 1"
            ));
        }
        let p = parse(json!({"breaker": {"failureRateThreshold": 0.001}})).expect("valid");
        assert_eq!(p.breaker.map(|b| b.failure_rate_threshold), Some(0.001));
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

    #[test]
    fn long_strings_are_cut_in_messages() {
        let e = err(json!({"retry": {"jitter": "x".repeat(1000)}}));
        assert!(e.message.len() < 200, "{}", e.message);
        assert!(e.message.ends_with("…)"));
    }

    #[test]
    fn merge_overrides_field_by_field() {
        let client =
            input(json!({"timeoutMs": 500, "retry": {"maxAttempts": 5, "baseDelayMs": 10}}));
        let call = input(json!({"retry": {"baseDelayMs": 20}, "totalTimeoutMs": 900}));
        let p = Policy::from_input(&client.merge(&call)).expect("valid");
        assert_eq!((p.timeout_ms, p.total_timeout_ms), (500, 900));
        let r = p.retry.expect("on");
        assert_eq!((r.max_attempts, r.base_delay_ms), (5, 20));
    }

    #[test]
    fn merge_false_turns_off_and_object_over_false_turns_on_with_defaults() {
        let client = input(json!({"retry": {"maxAttempts": 5}, "breaker": false}));
        let call = input(json!({"retry": false, "breaker": {"cooldownMs": 7}}));
        let p = Policy::from_input(&client.merge(&call)).expect("valid");
        assert_eq!(p.retry, None);
        assert_eq!(
            p.breaker,
            Some(BreakerPolicy {
                cooldown_ms: 7,
                ..BreakerPolicy::default()
            })
        );
    }

    #[test]
    fn merge_true_over_an_object_keeps_it_and_null_keeps_the_base() {
        let client = input(json!({"retry": {"maxAttempts": 5}, "timeoutMs": 50}));
        let call = input(json!({"retry": true, "timeoutMs": null}));
        let p = Policy::from_input(&client.merge(&call)).expect("valid");
        assert_eq!(p.retry.map(|r| r.max_attempts), Some(5));
        assert_eq!(p.timeout_ms, 50);
        let off = input(json!({"retry": false}));
        let p = Policy::from_input(&off.merge(&input(json!({"retry": true})))).expect("valid");
        assert_eq!(p.retry, Some(RetryPolicy::default()));
    }

    #[test]
    fn merge_replaces_lists_and_keeps_unknown_fields_for_validation() {
        let client = input(json!({"retry": {"retryOn": [500, 503]}}));
        let call = input(json!({"retry": {"retryOn": [429]}}));
        let p = Policy::from_input(&client.merge(&call)).expect("valid");
        assert_eq!(p.retry.map(|r| r.retry_on), Some(vec![429]));
        let bad = client.merge(&input(json!({"retry": {"tries": 1}})));
        assert_eq!(
            Policy::from_input(&bad).map_err(|e| e.path),
            Err("retry.tries".to_owned())
        );
    }

    #[test]
    fn a_repeated_key_keeps_its_last_value() {
        let p: PolicyInput =
            serde_json::from_str(r#"{"timeoutMs": 1, "timeoutMs": 2}"#).expect("json");
        assert_eq!(Policy::from_input(&p).map(|p| p.timeout_ms), Ok(2));
    }

    fn number(n: f64) -> String {
        let mut s = String::new();
        push_number(&mut s, n);
        s
    }

    #[test]
    fn numbers_are_shown_as_js_shows_them() {
        for (n, shown) in [
            (0.0, "0"),
            (-0.0, "0"),
            (3.0, "3"),
            (-1.0, "-1"),
            (3.5, "3.5"),
            (-0.1, "-0.1"),
            (1.01, "1.01"),
            (0.001, "0.001"),
            (0.000001, "0.000001"),
            (123456.1, "123456.1"),
            (2147483648.0, "2147483648"),
            (9007199254740993.0, "9007199254740992"),
            (4503599627370495.5, "4503599627370495.5"),
            (18446744073709549568.0, "18446744073709549568"),
            (1e21, "1e+21"),
            (1.5e300, "1.5e+300"),
            (1e-7, "1e-7"),
            (-2.5e-10, "-2.5e-10"),
            (5e-324, "4.94065645841e-324"),
            (f64::MAX, "1.79769313486e+308"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ] {
            assert_eq!(number(n), shown, "{n:e}");
        }
    }

    #[test]
    fn strings_are_quoted_and_escaped_as_rust_debug_does() {
        for s in [
            "",
            "full",
            "a\"b\\c",
            "tab\t nl\n cr\r nul\0 bell\x07 del\x7f esc\x1b",
            "é😀",
        ] {
            let mut out = String::new();
            push_quoted(&mut out, s, false);
            assert_eq!(out, format!("{s:?}"));
        }
        let mut out = String::new();
        push_quoted(&mut out, &"é".repeat(41), true);
        assert_eq!(out, format!("{:?}…", "é".repeat(40)));
    }

    fn json_value() -> impl Strategy<Value = serde_json::Value> {
        let names = prop::sample::select(vec![
            "timeoutMs",
            "totalTimeoutMs",
            "retry",
            "breaker",
            "retryBudget",
            "bulkhead",
            "idempotencyKey",
            "idempotencyHeader",
            "maxOrigins",
            "onEvent",
            "maxAttempts",
            "baseDelayMs",
            "maxDelayMs",
            "jitter",
            "retryOn",
            "capacity",
            "retryCost",
            "mode",
            "windowType",
            "failureRateThreshold",
            "minimumCalls",
            "windowSize",
            "maxQueue",
            "x",
        ]);
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            any::<u64>().prop_map(serde_json::Value::from),
            any::<f64>().prop_map(serde_json::Value::from),
            "[ -~é]{0,12}".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(4, 48, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
                prop::collection::vec((names.clone(), inner), 0..6).prop_map(|kv| {
                    serde_json::Value::Object(
                        kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
                    )
                }),
            ]
        })
    }

    proptest! {
        #[test]
        fn decoding_and_validating_never_panics(a in json_value(), b in json_value()) {
            let a = input(a);
            let b = input(b);
            for p in [&a, &b, &a.merge(&b)] {
                match Policy::from_input(p) {
                    Ok(policy) => {
                        let r = policy.retry.clone().unwrap_or_default();
                        prop_assert!(r.base_delay_ms <= r.max_delay_ms);
                        if let Some(g) = policy.retry_budget {
                            prop_assert!(g.retry_cost <= g.capacity && g.timeout_retry_cost <= g.capacity);
                        }
                        if let Some(b) = policy.breaker.filter(|b| b.mode == BreakerMode::FailureRate) {
                            let most = match b.window_type {
                                WindowType::Count => b.window_size as usize,
                                WindowType::Time => MAX_WINDOW_CALLS,
                            };
                            prop_assert!(b.minimum_calls as usize <= most);
                        }
                        if let Some(r) = &policy.retry {
                            prop_assert!(r.retry_on.iter().all(|s| (400..=599).contains(s)));
                        }
                    }
                    Err(e) => prop_assert!(e.message.contains(&e.path)),
                }
            }
        }

        #[test]
        fn shown_numbers_read_back_as_the_number(n in any::<f64>()) {
            let shown = number(n);
            if n.fract() == 0.0 && n.abs() < U64_END {
                // Exactly (Rust and JS show only the shortest digits that read back, then zeros).
                let expected = (n as i128).to_string();
                prop_assert_eq!(&shown, &expected);
            }
            if n.is_finite() {
                let back: f64 = shown.parse().expect("a number");
                prop_assert!((back - n).abs() <= n.abs() * 1e-11, "{} shown as {}", n, shown);
            }
        }

        #[test]
        fn merging_with_an_empty_policy_changes_nothing(a in json_value()) {
            let a = input(a);
            prop_assert_eq!(Policy::from_input(&a.merge(&PolicyInput::default())), Policy::from_input(&a));
        }
    }
}
