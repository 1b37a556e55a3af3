//! `share`: the name of the peers a client shares its origins' health with (see
//! [`crate::share`]), alone or as `{ name, durableObject }`; `false` or absent: none. Its
//! schema rows ([`FIELDS`]), its check ([`share_name`]) and why it is a client's alone
//! ([`client_only`]).

use crate::policy::Value;
use crate::policy::field::{Field, Kind, Scope};
use crate::policy::reader::{Check, Object, Rows};

/// The name clients of one share have in common (JS `share`, or `share.name`).
pub type ShareName = String;

/// The schema's rows of `share` (`crate::policy::schema::FIELDS` holds them in their place).
pub const FIELDS: &[Field] = &[
    Field {
        path: "share",
        kind: Kind::Name,
        scope: Scope::Client,
        range_text: None,
    },
    Field {
        path: "share.name",
        kind: Kind::Name,
        scope: Scope::Both,
        range_text: None,
    },
    Field {
        path: "share.durableObject",
        kind: Kind::Held,
        scope: Scope::Both,
        range_text: None,
    },
];

/// Why the client-only field `key` may not be given to one call, when it is `share`
/// (inlined: the scope check reads as the one `match` it was).
#[inline(always)]
pub fn client_only(key: &str) -> Option<&'static str> {
    match key {
        "share" => Some(
            "share names the peers a client's origin health is shared with: give it to new \
             ResilientClient(...), not to one call",
        ),
        _ => None,
    }
}

/// `share`: the name of the peers a client shares its origins' health with (see
/// [`crate::share`]), given alone or as `{ name, durableObject }` (the Durable Object that
/// carries the notes is the shell's); `false` or absent: none.
pub(crate) fn share_name<R: Rows>(c: &mut Check<R>, o: &Object) -> Option<ShareName> {
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

#[cfg(test)]
mod tests {
    use crate::policy::PolicyErrorKind;
    use crate::policy::test_support::*;
    use serde_json::json;

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
}
