//! `stale`: serving the last good answer when the origin fails: how stale it may be, how much
//! is kept, and whether the store is private (see [`crate::stale`]).
//!
//! `stale: true | false | { maxStaleMs, capMs, maxBodyBytes, maxEntries, maxBytes, private }`.
//! Its rows ([`FIELDS`]) are written in the schema's words, for the schema to list; until it
//! does, [`check`] reads them itself, with the schema's sentences.

use crate::policy::schema::{Field, Kind, MAX_MS, Scope};
use crate::policy::{PolicyError, PolicyErrorKind, Value};

/// The `stale` defaults, each written once.
pub mod defaults {
    /// No answer is kept unless the policy sets `stale`.
    pub const STALE_ENABLED: bool = false;
    /// How far past its freshness an answer without `stale-if-error` is served, in ms: five
    /// minutes (JS `stale.maxStaleMs`).
    pub const STALE_MAX_STALE_MS: u32 = 300_000;
    /// The most any window may be, its own `stale-if-error` included, in ms: a day (JS
    /// `stale.capMs`).
    pub const STALE_CAP_MS: u32 = 86_400_000;
    /// The largest body kept, in bytes: 1 MiB (JS `stale.maxBodyBytes`).
    pub const STALE_MAX_BODY_BYTES: u32 = 1_048_576;
    /// Answers the in-memory store keeps at most (JS `stale.maxEntries`).
    pub const STALE_MAX_ENTRIES: u32 = 500;
    /// Bytes of bodies the in-memory store keeps at most: 16 MiB (JS `stale.maxBytes`).
    pub const STALE_MAX_BYTES: u32 = 16_777_216;
    /// The store is taken to be shared where the runtime's is (JS `stale.private`).
    pub const STALE_PRIVATE: bool = false;
}

/// The largest `stale.maxBodyBytes`: 64 MiB, as `outbox.maxBodyBytes`.
pub const MAX_BODY_BYTES: u32 = 67_108_864;
/// The largest `stale.maxBytes`: 1 GiB.
pub const MAX_BYTES: u32 = 1_073_741_824;

/// Stale-if-error settings (see [`crate::stale`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StalePolicy {
    /// How far past its freshness lifetime an answer without its own `stale-if-error` is
    /// served, in ms (0..=`cap_ms`).
    pub max_stale_ms: u32,
    /// The most any window may be, in ms.
    pub cap_ms: u32,
    /// The largest body kept, in bytes (0..=`max_bytes`).
    pub max_body_bytes: u32,
    /// Answers the in-memory store keeps at most (1..=100000).
    pub max_entries: u32,
    /// Bytes the in-memory store keeps at most.
    pub max_bytes: u32,
    /// `true`: the store serves one user only, so answers to requests with credentials and
    /// `private` answers are kept too. `false`: as the runtime's store is (a browser's is
    /// private; a Worker's cache and a server's memory are shared).
    pub private: bool,
}

impl Default for StalePolicy {
    fn default() -> Self {
        StalePolicy {
            max_stale_ms: defaults::STALE_MAX_STALE_MS,
            cap_ms: defaults::STALE_CAP_MS,
            max_body_bytes: defaults::STALE_MAX_BODY_BYTES,
            max_entries: defaults::STALE_MAX_ENTRIES,
            max_bytes: defaults::STALE_MAX_BYTES,
            private: defaults::STALE_PRIVATE,
        }
    }
}

impl StalePolicy {
    /// Whether a body of `bytes` may be kept (also for one counted as it streams).
    pub fn fits(&self, bytes: u64) -> bool {
        bytes <= u64::from(self.max_body_bytes)
    }

    /// Whether the store is shared, given whether the runtime's store is (`policy.private`
    /// says it is not).
    pub fn shared(&self, runtime_store_shared: bool) -> bool {
        runtime_store_shared && !self.private
    }
}

const fn row(path: &'static str, kind: Kind, scope: Scope, range: Option<&'static str>) -> Field {
    Field {
        path,
        kind,
        scope,
        range_text: range,
    }
}

const fn int(path: &'static str, min: u32, max: u32, default: u32, scope: Scope) -> Field {
    row(path, Kind::Int { min, max, default }, scope, None)
}

/// The section's rows, the object first (`maxEntries`, `maxBytes` and `private` size and
/// describe a client's store: client-only).
pub const FIELDS: &[Field] = &[
    row(
        "stale",
        Kind::Feature {
            on: defaults::STALE_ENABLED,
        },
        Scope::Both,
        None,
    ),
    row(
        "stale.maxStaleMs",
        Kind::Int {
            min: 0,
            max: MAX_MS,
            default: defaults::STALE_MAX_STALE_MS,
        },
        Scope::Both,
        Some("0..=capMs"),
    ),
    int(
        "stale.capMs",
        0,
        MAX_MS,
        defaults::STALE_CAP_MS,
        Scope::Both,
    ),
    row(
        "stale.maxBodyBytes",
        Kind::Int {
            min: 0,
            max: MAX_BODY_BYTES,
            default: defaults::STALE_MAX_BODY_BYTES,
        },
        Scope::Both,
        Some("0..=maxBytes, ..=67108864"),
    ),
    int(
        "stale.maxEntries",
        1,
        100_000,
        defaults::STALE_MAX_ENTRIES,
        Scope::Client,
    ),
    int(
        "stale.maxBytes",
        1,
        MAX_BYTES,
        defaults::STALE_MAX_BYTES,
        Scope::Client,
    ),
    row(
        "stale.private",
        Kind::Bool {
            default: defaults::STALE_PRIVATE,
        },
        Scope::Client,
        None,
    ),
];

/// The `stale` field's value checked: `None` when absent, `null` or `false`; the defaults for
/// `true`; an object's fields over them. The error names the first bad field and its range.
pub fn check(value: Option<&Value>) -> Result<Option<StalePolicy>, PolicyError> {
    let map = match value {
        None | Some(Value::Null) | Some(Value::Bool(false)) => return Ok(None),
        Some(Value::Bool(true)) => return Ok(Some(StalePolicy::default())),
        Some(Value::Map(map)) => map,
        Some(other) => return Err(fail("stale", "true, false or an object", other, false)),
    };
    let given = |key: &str| {
        map.iter()
            .rev()
            .find(|(k, v)| k == key && !matches!(v, Value::Null))
            .map(|(_, v)| v)
    };
    for (key, _) in map.iter() {
        if !FIELDS
            .iter()
            .any(|f| f.path.strip_prefix("stale.") == Some(key))
        {
            let mut message = "unknown policy field \"stale.".to_owned();
            message.push_str(key);
            message.push('"');
            return Err(PolicyError {
                path: format_path(key),
                message,
                kind: PolicyErrorKind::Type,
            });
        }
    }
    let int = |key: &str, max: Option<(&str, u32)>| -> Result<u32, PolicyError> {
        let path = format_path(key);
        let Some(Kind::Int {
            min,
            max: top,
            default,
        }) = FIELDS.iter().find(|f| f.path == path).map(|f| f.kind)
        else {
            return Ok(0);
        };
        let (label, top) = max.map_or(("", top), |(label, n)| (label, n.min(top)));
        match given(key) {
            None => Ok(default.min(top)),
            Some(Value::Number(n)) if n.fract() == 0.0 && *n >= f64::from(min) => {
                if *n <= f64::from(top) {
                    Ok(*n as u32)
                } else {
                    Err(fail(
                        &path,
                        &int_range(min, label, top),
                        &Value::Number(*n),
                        true,
                    ))
                }
            }
            Some(v) => Err(fail(
                &path,
                &int_range(min, label, top),
                v,
                matches!(v, Value::Number(_)),
            )),
        }
    };
    let cap_ms = int("capMs", None)?;
    let max_stale_ms = int("maxStaleMs", Some(("stale.capMs", cap_ms)))?;
    let max_bytes = int("maxBytes", None)?;
    let max_body_bytes = int("maxBodyBytes", Some(("stale.maxBytes", max_bytes)))?;
    let private = match given("private") {
        None => defaults::STALE_PRIVATE,
        Some(Value::Bool(b)) => *b,
        Some(v) => return Err(fail("stale.private", "true or false", v, false)),
    };
    Ok(Some(StalePolicy {
        max_stale_ms,
        cap_ms,
        max_body_bytes,
        max_entries: int("maxEntries", None)?,
        max_bytes,
        private,
    }))
}

fn format_path(key: &str) -> String {
    let mut path = "stale.".to_owned();
    path.push_str(key);
    path
}

/// "an integer from `min` to `max`", the upper bound labelled with the field that sets it.
fn int_range(min: u32, max_label: &str, max: u32) -> String {
    let mut s = "an integer from ".to_owned();
    s.push_str(&min.to_string());
    s.push_str(" to ");
    if max_label.is_empty() {
        s.push_str(&max.to_string());
    } else {
        s.push_str(max_label);
        s.push_str(" (");
        s.push_str(&max.to_string());
        s.push(')');
    }
    s
}

/// "`path` must be `expected` (got …)": a range error showing a number of the wrong value
/// (`right_type`), else a type error naming the type given.
fn fail(path: &str, expected: &str, got: &Value, right_type: bool) -> PolicyError {
    let mut message = path.to_owned();
    message.push_str(" must be ");
    message.push_str(expected);
    message.push_str(" (got ");
    let kind = match got {
        Value::Number(n) if right_type => {
            push_number(&mut message, *n);
            PolicyErrorKind::Range
        }
        other => {
            message.push_str(match other {
                Value::Null => "null",
                Value::Bool(_) => "a boolean",
                Value::Number(_) => "a number",
                Value::String(_) => "a string",
                Value::List(_) => "an array",
                Value::Map(_) => "an object",
            });
            PolicyErrorKind::Type
        }
    };
    message.push(')');
    PolicyError {
        path: path.to_owned(),
        message,
        kind,
    }
}

/// A number about as JS shows it: whole numbers below 2^53 exactly, `NaN`, `Infinity`;
/// others as Rust's shortest form (the schema's `push_number` will replace this when the
/// section is wired).
fn push_number(out: &mut String, n: f64) {
    if n.is_nan() {
        out.push_str("NaN");
    } else if n.is_infinite() {
        out.push_str(if n > 0.0 { "Infinity" } else { "-Infinity" });
    } else if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        out.push_str(&(n as i64).to_string());
    } else {
        out.push_str(&n.to_string());
    }
}
