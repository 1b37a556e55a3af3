//! `coalesce`'s part of the policy (the build with the capability): its default, its type, its
//! schema row and its check.

use super::defaults;
use crate::policy::Value;
use crate::policy::reader::{Check, Object, Rows};
use crate::policy::schema::{Field, Kind, Scope};

/// The policy's `coalesce` field: whether an identical GET or HEAD in flight on the client is
/// joined, not sent again.
pub type Coalesce = bool;

/// The policy's `coalesce` when not given.
pub const DEFAULT: Coalesce = defaults::COALESCE;

/// The schema's rows of `coalesce` ([`crate::policy::schema::FIELDS`] gathers them).
pub const FIELDS: &[Field] = &[Field {
    path: "coalesce",
    kind: Kind::Bool {
        default: defaults::COALESCE,
    },
    scope: Scope::Both,
    range_text: None,
}];

/// `coalesce`: `true` or `false`, its default when absent.
pub(crate) fn coalesce<R: Rows>(c: &mut Check<R>, o: &Object) -> Coalesce {
    match o.get("coalesce") {
        None => DEFAULT,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            c.fail(o.path("coalesce"), "true or false", other, false);
            DEFAULT
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::policy::PolicyErrorKind;
    use crate::policy::test_support::*;
    use serde_json::json;

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
}
