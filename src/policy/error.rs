//! A policy field that cannot be accepted: the error every check reports.

use std::fmt;

/// Whether a policy error is about a value's type or its range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyErrorKind {
    /// Right type, value outside the accepted range (JS `RangeError`).
    Range,
    /// Wrong type, or a field that does not exist (JS `TypeError`).
    Type,
}

/// A policy field that cannot be accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyError {
    /// The field's JS path, e.g. `retry.maxAttempts` (empty for the policy itself).
    pub path: String,
    /// The whole sentence: field, accepted range, and what was given.
    pub message: String,
    /// Type or range.
    pub kind: PolicyErrorKind,
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PolicyError {}
