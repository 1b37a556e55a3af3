//! The policy as given: decoded into a small self-describing [`Value`], and laid over
//! another field by field ([`PolicyInput::merge`]).

use super::schema;
use super::value::Value;
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// A policy as decoded, not yet validated. `null` and `undefined` fields count as absent;
/// top-level function fields (`onEvent`, `fetch`) are skipped while decoding (the shell
/// handles them).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PolicyInput {
    pub(super) root: Value,
}

impl PolicyInput {
    /// A policy from its decoded value (the shell builds it from the caller's plain copy).
    pub fn new(root: Value) -> Self {
        PolicyInput { root }
    }

    /// Checks that every field was given where it belongs (`per_call`: to a call, else to
    /// a client); see [`schema::check_scope`].
    pub fn check_scope(&self, per_call: bool) -> Result<(), super::PolicyError> {
        schema::check_scope(&self.root, per_call)
    }
}

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
            if self.top && schema::is_function(&key) {
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

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;

    use crate::policy::*;
    use proptest::prelude::*;
    use serde_json::json;

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
                max_cooldown_ms: 7,
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

    proptest! {
        #[test]
        fn merging_with_an_empty_policy_changes_nothing(a in json_value()) {
            let a = input(a);
            prop_assert_eq!(Policy::from_input(&a.merge(&PolicyInput::default())), Policy::from_input(&a));
        }
    }
}
