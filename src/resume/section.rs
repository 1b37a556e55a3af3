//! `resume`: whether a GET's body that breaks is fetched again from where it broke, and how
//! often at most: `resume: true | false | { maxResumes }` (see [`crate::resume`]): the
//! policy's section, its schema rows and its row in the build's table of capabilities.

use crate::policy::field::{Field, Kind, field, int};
use crate::policy::reader::{Check, Object, Rows};

/// The `resume` defaults, each written once ([`crate::policy::defaults`] holds them all).
pub mod defaults {
    /// Resuming is off unless the policy sets `resume`.
    pub const RESUME_ENABLED: bool = false;
    /// Resumes of one body at most (JS `resume.maxResumes`).
    pub const MAX_RESUMES: u32 = 5;
}

/// The smallest and largest `resume.maxResumes`.
pub const MAX_RESUMES_RANGE: (u32, u32) = (1, 20);

/// The capability's row in the build's table ([`crate::policy::CAPABILITIES`]): its option,
/// what it does, and that this build has it.
pub const CAPABILITY: (&str, &str, bool) = ("resume", "resumed downloads", true);

/// The `resume` rows of the schema ([`crate::policy::schema::FIELDS`]), the object first.
pub const FIELDS: &[Field] = &[
    field(
        "resume",
        Kind::Feature {
            on: defaults::RESUME_ENABLED,
        },
    ),
    int(
        "resume.maxResumes",
        MAX_RESUMES_RANGE.0,
        MAX_RESUMES_RANGE.1,
        defaults::MAX_RESUMES,
    ),
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

/// The `resume` a policy starts with (its default: off).
pub(crate) fn initial() -> Option<ResumePolicy> {
    defaults::RESUME_ENABLED.then(ResumePolicy::default)
}

/// The policy's `resume` from its fields `o`: `None` when off.
pub(crate) fn read<R: Rows>(c: &mut Check<R>, o: &Object) -> Option<ResumePolicy> {
    c.feature(o, "resume").map(|map| {
        let o = c.object(map, "resume");
        ResumePolicy {
            max_resumes: c.int(&o, "maxResumes"),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::PolicyErrorKind;
    use crate::policy::test_support::*;
    use serde_json::json;

    #[test]
    fn the_policy_section_reads_true_false_or_an_object() {
        let resume = |v| parse(json!({ "resume": v })).map(|p| p.resume);
        assert_eq!(parse(json!({})).map(|p| p.resume), Ok(None));
        assert_eq!(resume(json!(false)), Ok(None));
        assert_eq!(resume(json!(null)), Ok(None));
        assert_eq!(
            resume(json!(true)),
            Ok(Some(ResumePolicy { max_resumes: 5 }))
        );
        assert_eq!(
            resume(json!({"maxResumes": 20})),
            Ok(Some(ResumePolicy { max_resumes: 20 }))
        );
        for (value, kind, message) in [
            (
                json!(1),
                PolicyErrorKind::Type,
                "resume must be true, false or an object (got a number)",
            ),
            (
                json!({"maxResumes": 21}),
                PolicyErrorKind::Range,
                "resume.maxResumes must be an integer from 1 to 20 (got 21)",
            ),
            (
                json!({"maxResumes": 0}),
                PolicyErrorKind::Range,
                "resume.maxResumes must be an integer from 1 to 20 (got 0)",
            ),
            (
                json!({"maxResumes": 2.5}),
                PolicyErrorKind::Range,
                "resume.maxResumes must be an integer from 1 to 20 (got 2.5)",
            ),
            (
                json!({"maxResumes": "3"}),
                PolicyErrorKind::Type,
                "resume.maxResumes must be an integer from 1 to 20 (got a string)",
            ),
            (
                json!({"maxResume": 3}),
                PolicyErrorKind::Type,
                "unknown policy field \"resume.maxResume\": did you mean \"resume.maxResumes\"?",
            ),
        ] {
            let e = err(json!({ "resume": value }));
            assert_eq!((e.kind, e.message.as_str()), (kind, message), "{value}");
        }
    }

    #[test]
    fn the_rows_hold_the_defaults_and_range() {
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
