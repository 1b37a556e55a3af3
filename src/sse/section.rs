//! `events`: how an event stream reconnects: `events: true | false | { idleMs, maxReconnects }`
//! (the JS name; the Rust folder is `sse/`, as `events` is the `onEvent` module). Absent, the
//! defaults apply to `client.events()`; `false`: no reconnect, no idle rule. Its rows
//! ([`FIELDS`]) are the schema's ([`crate::policy::schema::FIELDS`]), read by the policy's
//! [`Check`] like every section's; a plain `fetch` call ignores the section.

use crate::policy::field::{Field, Kind, MAX_MS, field, int};
use crate::policy::messages::int_range;
use crate::policy::reader::{Check, Object, Rows};
use crate::policy::value::{Map, Value};

/// The `events` defaults, each written once ([`crate::policy::defaults`] holds them all).
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

/// The capability's row in the build's table ([`crate::policy::CAPABILITIES`]): its option,
/// what it does, and that this build has it.
pub const CAPABILITY: (&str, &str, bool) = ("events", "server-sent events that reconnect", true);

/// The `events` rows of the schema, the object first.
pub const FIELDS: &[Field] = &[
    field(
        "events",
        Kind::Feature {
            on: defaults::EVENTS_ENABLED,
        },
    ),
    field(
        "events.idleMs",
        Kind::IntOrOff {
            min: IDLE_MS_RANGE.0,
            max: IDLE_MS_RANGE.1,
            default: defaults::IDLE_MS,
        },
    ),
    int(
        "events.maxReconnects",
        MAX_RECONNECTS_RANGE.0,
        MAX_RECONNECTS_RANGE.1,
        defaults::MAX_RECONNECTS,
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

/// The `events` a policy starts with (its default: on, the defaults).
pub(crate) fn initial() -> Option<EventsPolicy> {
    defaults::EVENTS_ENABLED.then(EventsPolicy::default)
}

/// The policy's `events` from its fields `o`: `None` when off.
pub(crate) fn read<R: Rows>(c: &mut Check<R>, o: &Object) -> Option<EventsPolicy> {
    c.feature(o, "events").map(|m| events_policy(c, m))
}

fn events_policy<R: Rows>(c: &mut Check<R>, map: &Map) -> EventsPolicy {
    let o = c.object(map, "events");
    let idle_ms = match o.get("idleMs") {
        Some(Value::Bool(false)) => None,
        Some(Value::Number(_)) | None => Some(c.int(&o, "idleMs")),
        Some(other) => {
            let mut expected = int_range("", IDLE_MS_RANGE.0, "", IDLE_MS_RANGE.1);
            expected.push_str(", or false");
            c.fail(o.path("idleMs"), &expected, other, false);
            None
        }
    };
    EventsPolicy {
        idle_ms,
        max_reconnects: c.int(&o, "maxReconnects"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::PolicyErrorKind;
    use crate::policy::test_support::*;
    use serde_json::json;

    #[test]
    fn the_policy_section_reads_true_false_or_an_object() {
        let on = EventsPolicy {
            idle_ms: Some(45_000),
            max_reconnects: 10,
        };
        let events = |v| parse(v).map(|p| p.events);
        assert_eq!(events(json!({})), Ok(Some(on.clone())));
        assert_eq!(events(json!({"events": true})), Ok(Some(on)));
        assert_eq!(events(json!({"events": false})), Ok(None));
        assert_eq!(
            events(json!({"events": {"idleMs": false, "maxReconnects": 0}})),
            Ok(Some(EventsPolicy {
                idle_ms: None,
                max_reconnects: 0
            }))
        );
        assert_eq!(
            events(json!({"events": {"idleMs": 1000}})).map(|p| p.and_then(|p| p.idle_ms)),
            Ok(Some(1_000))
        );
        for (value, kind, message) in [
            (
                json!("on"),
                PolicyErrorKind::Type,
                "events must be true, false or an object (got a string)",
            ),
            (
                json!({"idleMs": 999}),
                PolicyErrorKind::Range,
                "events.idleMs must be an integer from 1000 to 2147483647 (got 999)",
            ),
            (
                json!({"idleMs": true}),
                PolicyErrorKind::Type,
                "events.idleMs must be an integer from 1000 to 2147483647, or false (got a boolean)",
            ),
            (
                json!({"maxReconnects": 1001}),
                PolicyErrorKind::Range,
                "events.maxReconnects must be an integer from 0 to 1000 (got 1001)",
            ),
            (
                json!({"maxReconnects": -0.25}),
                PolicyErrorKind::Range,
                "events.maxReconnects must be an integer from 0 to 1000 (got -0.25)",
            ),
            (
                json!({"idle": 1}),
                PolicyErrorKind::Type,
                "unknown policy field \"events.idle\": did you mean \"events.idleMs\"?",
            ),
        ] {
            let e = err(json!({ "events": value }));
            assert_eq!((e.kind, e.message.as_str()), (kind, message));
        }
    }

    #[test]
    fn the_rows_hold_the_defaults_and_ranges() {
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
