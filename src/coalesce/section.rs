//! `coalesce`: whether identical GETs and HEADs in flight on one client are sent once.

use crate::policy::reader::{Check, Object, Rows};

/// The `coalesce` default, written once ([`crate::policy::defaults`] holds them all).
pub mod defaults {
    /// Identical GETs and HEADs in flight on one client are sent once (JS `coalesce`).
    pub const COALESCE: bool = false;
}

/// `coalesce`: `true` or `false`, its default (the schema's) when absent.
pub(crate) fn coalesce<R: Rows>(c: &mut Check<R>, o: &Object) -> bool {
    c.flag(o, "coalesce")
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
