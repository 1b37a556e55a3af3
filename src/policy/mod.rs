//! The policy: defaults, decoding, merging and validation.
//!
//! A policy arrives from JS as a plain object. [`PolicyInput`] keeps it raw
//! (decoded into a small self-describing value), [`PolicyInput::merge`] lays a
//! per-call policy over the client's, and [`Policy::from_input`] checks every field
//! and fills in the [`defaults`]. Types are checked here rather than by serde, so
//! every error names its field.
//!
//! | job | file |
//! | --- | --- |
//! | the top-level `Policy`, its own fields' defaults, every default gathered | `types.rs` |
//! | every field once: path, kind, range, default, scope | `schema.rs` |
//! | the raw input, decoding and merging | `input.rs` |
//! | a decoded value, as given | `value.rs` |
//! | validation: the policy's own fields, then each section | `check.rs` |
//! | which capabilities this build holds; an option of one it lacks | `build.rs` |
//! | the checking machinery: the first error, one object's fields | `reader.rs` |
//! | what a row says: a field's kind and scope | `field.rs` |
//! | the error a bad field gives | `error.rs` |
//! | each section: its types, defaults, checks and tests | the mission's in `sections/<section>.rs`; a capability's in its folder (`src/<feature>/section.rs`) |
//! | the words of errors | `messages.rs` |

mod build;
mod check;
mod error;
pub(crate) mod field;
mod input;
pub(crate) mod messages;
pub(crate) mod reader;
pub mod schema;
mod sections;
mod types;
pub(crate) mod value;

pub use crate::hedge::{HedgeDelay, HedgePolicy};
pub use crate::outbox::OutboxPolicy;
pub use crate::pacing::RateLimitPolicy;
pub use crate::resume::ResumePolicy;
pub use crate::throttle::ThrottlePolicy;
pub use build::CAPABILITIES;
pub use error::{PolicyError, PolicyErrorKind};
pub use input::PolicyInput;
pub use sections::breaker::{
    BreakerMode, BreakerPolicy, MAX_KEY_CHARS, MAX_WINDOW_CALLS, SlowCalls, TripRule, Window,
    WindowType, check_key,
};
pub use sections::bulkhead::BulkheadPolicy;
pub use sections::idempotency::IdempotencyKey;
pub use sections::retry::{RETRY_ON_MIN, RetryPolicy};
pub use sections::retry_budget::BudgetPolicy;
pub use types::*;
pub use value::Value;

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;
    use proptest::prelude::*;

    pub fn input(v: serde_json::Value) -> PolicyInput {
        serde_json::from_value(v).expect("any JSON decodes")
    }

    pub fn parse(v: serde_json::Value) -> Result<Policy, PolicyError> {
        Policy::from_input(&input(v))
    }

    pub fn err(v: serde_json::Value) -> PolicyError {
        parse(v).expect_err("policy must be rejected")
    }

    pub fn json_value() -> impl Strategy<Value = serde_json::Value> {
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
}
