//! Why a body cannot be resumed: each reason a code for JS and one sentence for its error.
//! Imports nothing of ours.

/// Why a broken body cannot be resumed, from the first response or from the answer to a
/// range request. The caller's stream errors with [`Refusal::message`]; the numbers a reason
/// carries are for the error's fields, not for its sentence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The request was not a `GET`: only a `GET` is asked again for a part.
    NotGet,
    /// The first response was neither a `200` nor a `206`.
    Status(u16),
    /// The first response was a `206` without one byte range (multipart, or no readable
    /// `Content-Range`).
    NotOneRange,
    /// A `Content-Encoding` other than `identity`: ranges count encoded bytes, the caller
    /// reads decoded ones.
    Encoded,
    /// `Accept-Ranges: none` (or only units other than `bytes`).
    RangesRefused,
    /// Neither an `ETag` nor a `Last-Modified`: nothing proves a part is of the same body.
    NoValidator,
    /// A weak `ETag` (then `If-Range` may carry no date either), or a `Last-Modified` that is
    /// not a strong validator (RFC 9110 §13.1.5, §8.8.2.2).
    WeakValidator,
    /// The body broke more often than `resume.maxResumes` allows.
    Exhausted {
        /// The resumes made.
        resumes: u32,
    },
    /// More bytes arrived than the response said it holds.
    Overrun,
    /// The answer was a `200`: the server ignored the range, or the resource changed.
    Whole,
    /// The answer was a `416`: the range asked for is past the representation's end.
    Unsatisfiable,
    /// The answer's status was neither `206`, `200` nor `416`.
    AnswerStatus(u16),
    /// The answer was a `206` without a `Content-Range` of one byte range.
    BadContentRange,
    /// The answer's range does not start at the byte the body broke at.
    WrongStart {
        /// The offset asked for.
        expected: u64,
        /// The offset the answer starts at.
        got: u64,
    },
    /// The answer's range ends past the end of what the first response covered.
    WrongEnd {
        /// The last offset (inclusive) the first response covered.
        expected: u64,
        /// The answer's last offset (inclusive).
        got: u64,
    },
    /// The answer's complete length differs from the first response's.
    LengthChanged {
        /// The length known from the first response (or an earlier part).
        expected: u64,
        /// The answer's complete length.
        got: u64,
    },
    /// The answer's `Content-Length` differs from the length of its `Content-Range`.
    LengthMismatch,
    /// The answer's validator (`ETag` or `Last-Modified`) differs from the first response's,
    /// or is missing: the resource changed.
    Changed,
}

impl Refusal {
    /// The code for JS: the error's `reason`.
    pub fn code(self) -> &'static str {
        match self {
            Refusal::NotGet => "not-get",
            Refusal::Status(_) => "status",
            Refusal::NotOneRange => "not-one-range",
            Refusal::Encoded => "encoded",
            Refusal::RangesRefused => "ranges-refused",
            Refusal::NoValidator => "no-validator",
            Refusal::WeakValidator => "weak-validator",
            Refusal::Exhausted { .. } => "exhausted",
            Refusal::Overrun => "overrun",
            Refusal::Whole => "whole",
            Refusal::Unsatisfiable => "unsatisfiable",
            Refusal::AnswerStatus(_) => "answer-status",
            Refusal::BadContentRange => "bad-content-range",
            Refusal::WrongStart { .. } => "wrong-start",
            Refusal::WrongEnd { .. } => "wrong-end",
            Refusal::LengthChanged { .. } => "length-changed",
            Refusal::LengthMismatch => "length-mismatch",
            Refusal::Changed => "changed",
        }
    }

    /// The sentence the caller's stream errors with.
    pub fn message(self) -> &'static str {
        match self {
            Refusal::NotGet => "the body cannot be resumed: only a GET's body is asked for again",
            Refusal::Status(_) => {
                "the body cannot be resumed: the response was neither a 200 nor a 206"
            }
            Refusal::NotOneRange => {
                "the body cannot be resumed: the 206 response did not hold one byte range"
            }
            Refusal::Encoded => {
                "the body cannot be resumed: it has a Content-Encoding, and byte ranges count the encoded bytes"
            }
            Refusal::RangesRefused => {
                "the body cannot be resumed: the server refuses byte ranges (Accept-Ranges)"
            }
            Refusal::NoValidator => {
                "the body cannot be resumed: the response has neither an ETag nor a Last-Modified to check a part against"
            }
            Refusal::WeakValidator => {
                "the body cannot be resumed: its ETag is weak, or its Last-Modified is not a strong validator"
            }
            Refusal::Exhausted { .. } => "the body broke more often than resume.maxResumes allows",
            Refusal::Overrun => "the body is longer than its response said",
            Refusal::Whole => {
                "the body could not be resumed: the server sent the whole body again (200): it ignored the range, or the resource changed"
            }
            Refusal::Unsatisfiable => {
                "the body could not be resumed: the server found the range past the end (416)"
            }
            Refusal::AnswerStatus(_) => {
                "the body could not be resumed: the server answered the range with neither a 206 nor a 200"
            }
            Refusal::BadContentRange => {
                "the body could not be resumed: the 206 answer has no Content-Range of one byte range"
            }
            Refusal::WrongStart { .. } => {
                "the body could not be resumed: the part sent does not start where the body broke"
            }
            Refusal::WrongEnd { .. } => {
                "the body could not be resumed: the part sent ends past the body's end"
            }
            Refusal::LengthChanged { .. } => {
                "the body could not be resumed: the resource's length changed"
            }
            Refusal::LengthMismatch => {
                "the body could not be resumed: the part's Content-Length disagrees with its Content-Range"
            }
            Refusal::Changed => {
                "the body could not be resumed: the resource changed (its ETag or Last-Modified differs)"
            }
        }
    }
}
