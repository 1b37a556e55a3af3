//! `share`: the name of the peers a client shares its origins' health with (see
//! [`crate::share`]); `false` or absent: none.

use crate::policy::reader::{Check, Object, Rows};
use crate::policy::value::Value;

/// `share`: the name of the peers a client shares its origins' health with (see
/// [`crate::share`]); `false` or absent: none.
pub(in crate::policy) fn share_name<R: Rows>(c: &mut Check<R>, o: &Object) -> Option<String> {
    match o.get("share") {
        Some(Value::String(s)) if (1..=64).contains(&s.chars().count()) => Some(s.clone()),
        None | Some(Value::Bool(false)) => None,
        Some(other) => {
            c.fail(
                "share".to_owned(),
                "a name of 1 to 64 characters, or false",
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
        for (bad, kind) in [
            (json!(""), PolicyErrorKind::Range),
            (json!("x".repeat(65)), PolicyErrorKind::Range),
            (json!(true), PolicyErrorKind::Type),
            (json!(3), PolicyErrorKind::Type),
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
