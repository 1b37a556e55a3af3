//! `outbox`'s part of the policy: keyed writes without a definite answer, kept and delivered
//! later: the outbox's name, how many entries, how long and how large (its store and
//! `onReplay` are the shell's; see [`crate::outbox`]). Its schema rows ([`FIELDS`]), its
//! defaults, its check and the words of its scope rule.

use crate::policy::Policy;
use crate::policy::field::{Field, Kind, MAX_MS, Scope, field, int};
use crate::policy::reader::{Check, Object, Rows};
use crate::policy::value::{Map, Value};

/// The `outbox` defaults, each written once ([`crate::policy::defaults`] holds them all).
pub mod defaults {
    /// Keyed writes without a definite answer are kept and delivered later (JS `outbox`).
    pub const OUTBOX_ENABLED: bool = false;
    /// The outbox's name: clients of one name share its entries (JS `outbox.name`).
    pub const OUTBOX_NAME: &str = "default";
    /// Entries kept at most, dead letters included (JS `outbox.maxEntries`).
    pub const OUTBOX_MAX_ENTRIES: u32 = 1000;
    /// How long an entry is replayed before it is a dead letter, in ms: a day, the
    /// shortest time servers such as Stripe's keep a key (JS `outbox.maxAgeMs`).
    pub const OUTBOX_MAX_AGE_MS: u32 = 86_400_000;
    /// The largest body kept, in bytes (JS `outbox.maxBodyBytes`).
    pub const OUTBOX_MAX_BODY_BYTES: u32 = 1_048_576;
}

/// Outbox settings (see [`crate::outbox`]).
#[derive(Clone, Debug, PartialEq)]
pub struct OutboxPolicy {
    /// Its name (1 to 64 characters): the store and the replay lock are per name.
    pub name: String,
    /// Entries kept at most (1..=100000).
    pub max_entries: u32,
    /// How long an entry is replayed before it is a dead letter, in ms.
    pub max_age_ms: u32,
    /// The largest body kept, in bytes (0..=67108864).
    pub max_body_bytes: u32,
}

/// `outbox`: the outbox's settings (its store and `onReplay` are the shell's).
impl Default for OutboxPolicy {
    fn default() -> Self {
        OutboxPolicy {
            name: defaults::OUTBOX_NAME.to_owned(),
            max_entries: defaults::OUTBOX_MAX_ENTRIES,
            max_age_ms: defaults::OUTBOX_MAX_AGE_MS,
            max_body_bytes: defaults::OUTBOX_MAX_BODY_BYTES,
        }
    }
}

impl OutboxPolicy {
    /// The outbox of a policy that does not name one.
    pub fn by_default() -> Option<OutboxPolicy> {
        defaults::OUTBOX_ENABLED.then(OutboxPolicy::default)
    }
}

impl Policy {
    /// The outbox settings `outbox: true` gives.
    pub fn default_outbox() -> Option<OutboxPolicy> {
        Some(OutboxPolicy::default())
    }
}

/// The schema's rows of `outbox` ([`crate::policy::schema::FIELDS`] holds them in its place).
pub const FIELDS: &[Field] = &[
    Field {
        path: "outbox",
        kind: Kind::Feature {
            on: defaults::OUTBOX_ENABLED,
        },
        scope: Scope::Client,
        range_text: None,
    },
    field("outbox.name", Kind::Name),
    int(
        "outbox.maxEntries",
        1,
        100_000,
        defaults::OUTBOX_MAX_ENTRIES,
    ),
    int(
        "outbox.maxAgeMs",
        1_000,
        MAX_MS,
        defaults::OUTBOX_MAX_AGE_MS,
    ),
    int(
        "outbox.maxBodyBytes",
        0,
        67_108_864,
        defaults::OUTBOX_MAX_BODY_BYTES,
    ),
    field("outbox.store", Kind::Held),
    field("outbox.onReplay", Kind::Function),
];

/// Why `outbox` given to one call is a `TypeError` (it is client only).
pub const CLIENT_ONLY: &str = "outbox keeps a client's writes for later: give it to new \
    ResilientClient(...), not to one call (a call opts out with idempotencyKey: false)";

/// The policy's `outbox` in `o`, checked: `None` when off.
pub(crate) fn check<R: Rows>(c: &mut Check<R>, o: &Object) -> Option<OutboxPolicy> {
    c.feature(o, "outbox").map(|m| outbox_policy(c, m))
}

fn outbox_policy<R: Rows>(c: &mut Check<R>, map: &Map) -> OutboxPolicy {
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

#[cfg(test)]
mod tests {
    use crate::policy::test_support::*;
    use crate::policy::{Policy, PolicyErrorKind};
    use serde_json::json;

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
}
