//! `events`: how an event stream reconnects: `events: true | false | { idleMs, maxReconnects }`
//! (the JS name; the Rust folder is `sse/`, as `events` is the `onEvent` module). Absent, the
//! defaults apply to `client.events()`; `false`: no reconnect, no idle rule. Its rows
//! ([`FIELDS`]) are written once here; the schema reads them when the lead wires the section
//! in. Until then [`events_policy`] checks the section alone, with the messages `src/policy/`
//! gives.

use crate::policy::schema::{Field, Kind, MAX_MS, Scope};
use crate::policy::{PolicyError, PolicyErrorKind, Value};

/// The `events` defaults, each written once.
pub mod defaults {
    /// Reconnecting is on for `client.events()` unless the policy says `events: false`.
    pub const EVENTS_ENABLED: bool = true;
    /// A stream silent this long (ms, comments and heartbeats count as bytes) is reconnected
    /// (JS `events.idleMs`): a 30 s heartbeat and a margin.
    pub const IDLE_MS: u32 = 45_000;
    /// Reconnects in a row without an event between them at most (JS `events.maxReconnects`).
    pub const MAX_RECONNECTS: u32 = 10;
}

/// The smallest and largest `events.idleMs` (a gap under a second is no sign of a dead
/// stream; the largest is the longest timer).
pub const IDLE_MS_RANGE: (u32, u32) = (1_000, MAX_MS);
/// The smallest and largest `events.maxReconnects`.
pub const MAX_RECONNECTS_RANGE: (u32, u32) = (0, 1_000);

const fn row(path: &'static str, kind: Kind) -> Field {
    Field {
        path,
        kind,
        scope: Scope::Both,
        range_text: None,
    }
}

/// The section's rows: the object, then its fields.
pub const FIELDS: [Field; 3] = [
    row(
        "events",
        Kind::Feature {
            on: defaults::EVENTS_ENABLED,
        },
    ),
    row(
        "events.idleMs",
        Kind::IntOrOff {
            min: IDLE_MS_RANGE.0,
            max: IDLE_MS_RANGE.1,
            default: defaults::IDLE_MS,
        },
    ),
    row(
        "events.maxReconnects",
        Kind::Int {
            min: MAX_RECONNECTS_RANGE.0,
            max: MAX_RECONNECTS_RANGE.1,
            default: defaults::MAX_RECONNECTS,
        },
    ),
];

/// Event stream settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventsPolicy {
    /// A stream silent longer than this (ms) is reconnected; `None` (`false`): never.
    pub idle_ms: Option<u32>,
    /// Reconnects in a row without an event between them at most (0..=1000).
    pub max_reconnects: u32,
}

impl Default for EventsPolicy {
    fn default() -> Self {
        EventsPolicy {
            idle_ms: Some(defaults::IDLE_MS),
            max_reconnects: defaults::MAX_RECONNECTS,
        }
    }
}

/// The `events` field's value (`None`: absent): `Ok(None)` no reconnecting, `Ok(Some(_))` on.
pub fn events_policy(value: Option<&Value>) -> Result<Option<EventsPolicy>, PolicyError> {
    let map = match value {
        None | Some(Value::Null) => {
            return Ok(defaults::EVENTS_ENABLED.then(EventsPolicy::default));
        }
        Some(Value::Bool(false)) => return Ok(None),
        Some(Value::Bool(true)) => return Ok(Some(EventsPolicy::default())),
        Some(Value::Map(map)) => map,
        Some(other) => {
            let e = wrong("events", "true, false or an object", other, false);
            return Err(e);
        }
    };
    let mut policy = EventsPolicy::default();
    for (key, v) in map {
        match (key.as_str(), v) {
            (_, Value::Null) => {}
            ("idleMs", Value::Bool(false)) => policy.idle_ms = None,
            ("idleMs", v) => {
                let (min, max) = IDLE_MS_RANGE;
                let number = matches!(v, Value::Number(_));
                policy.idle_ms = Some(int(v, min, max).ok_or_else(|| {
                    let mut expected = range(min, max);
                    if !number {
                        expected.push_str(", or false");
                    }
                    wrong("events.idleMs", &expected, v, number)
                })?);
            }
            ("maxReconnects", v) => {
                let (min, max) = MAX_RECONNECTS_RANGE;
                policy.max_reconnects = int(v, min, max).ok_or_else(|| {
                    let expected = range(min, max);
                    wrong(
                        "events.maxReconnects",
                        &expected,
                        v,
                        matches!(v, Value::Number(_)),
                    )
                })?;
            }
            (key, _) => {
                let mut path = "events.".to_owned();
                path.push_str(key);
                let mut message = "unknown policy field \"".to_owned();
                message.push_str(&path);
                message.push('"');
                return Err(PolicyError {
                    path,
                    message,
                    kind: PolicyErrorKind::Type,
                });
            }
        }
    }
    Ok(Some(policy))
}

/// "an integer from `min` to `max`".
fn range(min: u32, max: u32) -> String {
    let mut s = "an integer from ".to_owned();
    push_u64(&mut s, min.into());
    s.push_str(" to ");
    push_u64(&mut s, max.into());
    s
}

/// A whole number in `min..=max` (JS numbers arrive as f64: 3.0 counts, 3.5 does not).
fn int(v: &Value, min: u32, max: u32) -> Option<u32> {
    match v {
        Value::Number(n) if n.fract() == 0.0 && *n >= f64::from(min) && *n <= f64::from(max) => {
            Some(*n as u32)
        }
        _ => None,
    }
}

/// "`path` must be `expected` (got …)": with `right_type` (a number of the wrong value) a
/// range error showing the value, otherwise a type error naming the type given.
fn wrong(path: &str, expected: &str, got: &Value, right_type: bool) -> PolicyError {
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

/// Appends `n` in decimal, by hand (core's formatting machinery is kilobytes of wasm).
fn push_u64(out: &mut String, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend(buf[i..].iter().map(|&b| char::from(b)));
}

/// A number about as JS shows it, for a message: exact integers below 2^64, else rounded to
/// six decimals (the policy's own messages are exact; this section's join them when wired).
fn push_number(out: &mut String, n: f64) {
    if n.is_nan() {
        out.push_str("NaN");
        return;
    }
    if n < 0.0 {
        out.push('-');
    }
    let n = n.abs();
    if n.is_infinite() {
        out.push_str("Infinity");
        return;
    }
    let whole = n.trunc();
    push_u64(out, whole as u64);
    let mut fraction = ((n - whole) * 1e6).round() as u64;
    if fraction > 0 && fraction < 1_000_000 {
        let mut digits = 6;
        while fraction.is_multiple_of(10) {
            fraction /= 10;
            digits -= 1;
        }
        let mut s = String::new();
        push_u64(&mut s, fraction);
        out.push('.');
        out.extend(std::iter::repeat_n('0', digits - s.len()));
        out.push_str(&s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(entries: &[(&str, Value)]) -> Value {
        Value::Map(
            entries
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn the_policy_section_reads_true_false_or_an_object() {
        let on = EventsPolicy {
            idle_ms: Some(45_000),
            max_reconnects: 10,
        };
        assert_eq!(events_policy(None), Ok(Some(on.clone())));
        assert_eq!(events_policy(Some(&Value::Bool(true))), Ok(Some(on)));
        assert_eq!(events_policy(Some(&Value::Bool(false))), Ok(None));
        let set = map(&[
            ("idleMs", Value::Bool(false)),
            ("maxReconnects", Value::Number(0.0)),
        ]);
        assert_eq!(
            events_policy(Some(&set)),
            Ok(Some(EventsPolicy {
                idle_ms: None,
                max_reconnects: 0
            }))
        );
        let set = map(&[("idleMs", Value::Number(1_000.0))]);
        assert_eq!(
            events_policy(Some(&set)).map(|p| p.and_then(|p| p.idle_ms)),
            Ok(Some(1_000))
        );
        for (value, kind, message) in [
            (
                Value::String("on".into()),
                PolicyErrorKind::Type,
                "events must be true, false or an object (got a string)",
            ),
            (
                map(&[("idleMs", Value::Number(999.0))]),
                PolicyErrorKind::Range,
                "events.idleMs must be an integer from 1000 to 2147483647 (got 999)",
            ),
            (
                map(&[("idleMs", Value::Bool(true))]),
                PolicyErrorKind::Type,
                "events.idleMs must be an integer from 1000 to 2147483647, or false (got a boolean)",
            ),
            (
                map(&[("maxReconnects", Value::Number(1_001.0))]),
                PolicyErrorKind::Range,
                "events.maxReconnects must be an integer from 0 to 1000 (got 1001)",
            ),
            (
                map(&[("maxReconnects", Value::Number(-0.25))]),
                PolicyErrorKind::Range,
                "events.maxReconnects must be an integer from 0 to 1000 (got -0.25)",
            ),
            (
                map(&[("idle", Value::Number(1.0))]),
                PolicyErrorKind::Type,
                "unknown policy field \"events.idle\"",
            ),
        ] {
            let e = events_policy(Some(&value)).expect_err("rejected");
            assert_eq!((e.kind, e.message.as_str()), (kind, message));
        }
    }

    #[test]
    fn the_rows_hold_the_defaults_and_ranges() {
        use crate::policy::schema::{Kind, MAX_MS};
        let d = EventsPolicy::default();
        assert_eq!(FIELDS[0].path, "events");
        assert_eq!(
            FIELDS[1].kind,
            Kind::IntOrOff {
                min: 1_000,
                max: MAX_MS,
                default: d.idle_ms.unwrap_or(0)
            }
        );
        assert_eq!(
            FIELDS[2].kind,
            Kind::Int {
                min: 0,
                max: 1_000,
                default: d.max_reconnects
            }
        );
    }
}
