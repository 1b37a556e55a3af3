//! `resume`: whether a GET's body that breaks is fetched again from where it broke, and how
//! often at most: `resume: true | false | { maxResumes }`. Its rows ([`FIELDS`]) are written
//! once here; the schema reads them when the lead wires the section in. Until then
//! [`resume_policy`] checks the section alone, with the messages `src/policy/` gives.

use crate::policy::schema::{Field, Kind, Scope};
use crate::policy::{PolicyError, PolicyErrorKind, Value};

/// The `resume` defaults, each written once.
pub mod defaults {
    /// Resuming is off unless the policy sets `resume`.
    pub const RESUME_ENABLED: bool = false;
    /// Resumes of one body at most (JS `resume.maxResumes`).
    pub const MAX_RESUMES: u32 = 5;
}

/// The smallest and largest `resume.maxResumes`.
pub const MAX_RESUMES_RANGE: (u32, u32) = (1, 20);

/// The section's rows: the object, then its fields.
pub const FIELDS: [Field; 2] = [
    Field {
        path: "resume",
        kind: Kind::Feature {
            on: defaults::RESUME_ENABLED,
        },
        scope: Scope::Both,
        range_text: None,
    },
    Field {
        path: "resume.maxResumes",
        kind: Kind::Int {
            min: MAX_RESUMES_RANGE.0,
            max: MAX_RESUMES_RANGE.1,
            default: defaults::MAX_RESUMES,
        },
        scope: Scope::Both,
        range_text: None,
    },
];

/// Resume settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResumePolicy {
    /// Resumes of one body at most (1..=20); each is an attempt of the call as well.
    pub max_resumes: u32,
}

impl Default for ResumePolicy {
    fn default() -> Self {
        ResumePolicy {
            max_resumes: defaults::MAX_RESUMES,
        }
    }
}

/// The `resume` field's value (`None`: absent): `Ok(None)` off, `Ok(Some(_))` on.
pub fn resume_policy(value: Option<&Value>) -> Result<Option<ResumePolicy>, PolicyError> {
    let map = match value {
        None | Some(Value::Null) => {
            return Ok(defaults::RESUME_ENABLED.then(ResumePolicy::default));
        }
        Some(Value::Bool(false)) => return Ok(None),
        Some(Value::Bool(true)) => return Ok(Some(ResumePolicy::default())),
        Some(Value::Map(map)) => map,
        Some(other) => return Err(wrong("resume", "true, false or an object", other, false)),
    };
    let mut policy = ResumePolicy::default();
    for (key, v) in map {
        match (key.as_str(), v) {
            (_, Value::Null) => {}
            ("maxResumes", v) => {
                let (min, max) = MAX_RESUMES_RANGE;
                policy.max_resumes = int(v, min, max).ok_or_else(|| {
                    let mut expected = "an integer from ".to_owned();
                    super::headers::push_u64(&mut expected, min.into());
                    expected.push_str(" to ");
                    super::headers::push_u64(&mut expected, max.into());
                    wrong(
                        "resume.maxResumes",
                        &expected,
                        v,
                        matches!(v, Value::Number(_)),
                    )
                })?;
            }
            (key, _) => {
                let mut path = "resume.".to_owned();
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
            message.push_str(type_name(other));
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

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::List(_) => "an array",
        Value::Map(_) => "an object",
    }
}

/// A number about as JS shows it, for a message: exact below 2^53, else rounded to six
/// decimals (the policy's own messages are exact; this section's join them when wired).
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
    super::headers::push_u64(out, whole.min(u64::MAX as f64) as u64);
    let mut fraction = ((n - whole) * 1e6).round() as u64;
    if fraction > 0 && fraction < 1_000_000 {
        let mut digits = 6;
        while fraction.is_multiple_of(10) {
            fraction /= 10;
            digits -= 1;
        }
        out.push('.');
        let mut s = String::new();
        super::headers::push_u64(&mut s, fraction);
        for _ in s.len()..digits {
            out.push('0');
        }
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
        assert_eq!(resume_policy(None), Ok(None));
        assert_eq!(resume_policy(Some(&Value::Bool(false))), Ok(None));
        assert_eq!(
            resume_policy(Some(&Value::Bool(true))),
            Ok(Some(ResumePolicy { max_resumes: 5 }))
        );
        let set = map(&[("maxResumes", Value::Number(20.0))]);
        assert_eq!(
            resume_policy(Some(&set)),
            Ok(Some(ResumePolicy { max_resumes: 20 }))
        );
        for (value, kind, message) in [
            (
                Value::Number(1.0),
                PolicyErrorKind::Type,
                "resume must be true, false or an object (got a number)",
            ),
            (
                map(&[("maxResumes", Value::Number(21.0))]),
                PolicyErrorKind::Range,
                "resume.maxResumes must be an integer from 1 to 20 (got 21)",
            ),
            (
                map(&[("maxResumes", Value::Number(0.0))]),
                PolicyErrorKind::Range,
                "resume.maxResumes must be an integer from 1 to 20 (got 0)",
            ),
            (
                map(&[("maxResumes", Value::Number(2.5))]),
                PolicyErrorKind::Range,
                "resume.maxResumes must be an integer from 1 to 20 (got 2.5)",
            ),
            (
                map(&[("maxResumes", Value::String("3".into()))]),
                PolicyErrorKind::Type,
                "resume.maxResumes must be an integer from 1 to 20 (got a string)",
            ),
            (
                map(&[("maxResume", Value::Number(3.0))]),
                PolicyErrorKind::Type,
                "unknown policy field \"resume.maxResume\"",
            ),
        ] {
            let e = resume_policy(Some(&value)).expect_err("rejected");
            assert_eq!((e.kind, e.message.as_str()), (kind, message));
        }
    }

    #[test]
    fn the_rows_hold_the_defaults_and_range() {
        use crate::policy::schema::Kind;
        assert_eq!(FIELDS[0].path, "resume");
        assert_eq!(
            FIELDS[1].kind,
            Kind::Int {
                min: 1,
                max: 20,
                default: ResumePolicy::default().max_resumes
            }
        );
    }
}
