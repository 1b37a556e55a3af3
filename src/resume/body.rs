//! A body being read and resumed: what the first response allows (whether its body may be
//! resumed, the validator to send), the range request after N bytes reached the caller, and
//! whether an answer may be spliced on (RFC 9110 §13.1.5 `If-Range`, §14 ranges, §8.8
//! validators). Decide, then do: [`Body::check`] judges an answer, [`Body::learn`] records it.

use super::headers::{ContentRange, EntityTag, Head, number, push_u64, tokens};
use super::refusal::Refusal;
use super::section::ResumePolicy;

/// What proves a part belongs to the same body: sent as `If-Range`, compared on the answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Validator {
    /// A strong entity tag, quotes included (`"abc"`).
    ETag(String),
    /// A `Last-Modified` date that is a strong validator (§8.8.2.2), as the server wrote it.
    LastModified(String),
}

impl Validator {
    /// The `If-Range` value: the tag or the date exactly as the first response gave it.
    pub fn as_str(&self) -> &str {
        match self {
            Validator::ETag(s) | Validator::LastModified(s) => s,
        }
    }
}

/// The headers of a range request that resumes a body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeRequest {
    /// `Range`: `bytes=N-`, or `bytes=N-M` inside a range the caller asked for.
    pub range: String,
    /// `If-Range`: the validator; a server whose resource changed answers `200`, not `206`.
    pub if_range: String,
}

/// An answer that may be spliced on: its body is the bytes `first..end` of the representation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Splice {
    /// The offset of its first byte: where the body broke.
    pub first: u64,
    /// The offset past its last byte.
    pub end: u64,
    /// The representation's length, if the answer says.
    pub complete: Option<u64>,
}

/// A body that may be resumed: where it lies in the representation and what validates it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Body {
    validator: Validator,
    /// The offset of the body's first byte (0 for a `200`; a `206`'s first byte).
    start: u64,
    /// The offset past the body's last byte, if known.
    end: Option<u64>,
    /// The representation's length, if known.
    complete: Option<u64>,
    /// The first response was a `206`: a resume asks for the rest of its range, not more.
    ranged: bool,
}

impl Body {
    /// The body of the first response to a request with `method`, if it may be resumed.
    pub fn from_first(method: &str, head: &Head) -> Result<Body, Refusal> {
        if !method.eq_ignore_ascii_case("GET") {
            return Err(Refusal::NotGet);
        }
        if head.status != 200 && head.status != 206 {
            return Err(Refusal::Status(head.status));
        }
        if !identity(head.content_encoding) {
            return Err(Refusal::Encoded);
        }
        if let Some(units) = head.accept_ranges {
            let mut any = false;
            let mut bytes = false;
            for unit in tokens(units) {
                any = true;
                bytes |= unit.eq_ignore_ascii_case("bytes");
            }
            if any && !bytes {
                return Err(Refusal::RangesRefused);
            }
        }
        let validator = validator(head)?;
        let length = head.content_length.map(|v| number(v.trim_ascii()));
        if head.status == 206 {
            let Some(ContentRange::Bytes {
                first,
                last,
                complete,
            }) = head.content_range.and_then(ContentRange::parse)
            else {
                return Err(Refusal::NotOneRange);
            };
            if length.is_some_and(|n| n != Some(last - first + 1)) {
                return Err(Refusal::LengthMismatch);
            }
            return Ok(Body {
                validator,
                start: first,
                end: Some(last + 1),
                complete,
                ranged: true,
            });
        }
        let length = length.flatten();
        Ok(Body {
            validator,
            start: 0,
            end: length,
            complete: length,
            ranged: false,
        })
    }

    /// The validator sent as `If-Range` and compared on each answer.
    pub fn validator(&self) -> &Validator {
        &self.validator
    }

    /// Bytes left after `received` reached the caller, if the body's end is known.
    pub fn remaining(&self, received: u64) -> Option<u64> {
        let end = self.end?;
        Some(end.saturating_sub(self.start.saturating_add(received)))
    }

    /// The range request that resumes the body after `received` bytes reached the caller;
    /// `Ok(None)` when the body's known end is reached (nothing is left to ask for).
    pub fn request(&self, received: u64) -> Result<Option<RangeRequest>, Refusal> {
        let at = self.offset(received)?;
        if self.end == Some(at) {
            return Ok(None);
        }
        let mut range = "bytes=".to_owned();
        push_u64(&mut range, at);
        range.push('-');
        if let (true, Some(end)) = (self.ranged, self.end) {
            push_u64(&mut range, end - 1);
        }
        Ok(Some(RangeRequest {
            range,
            if_range: self.validator.as_str().to_owned(),
        }))
    }

    /// Whether the answer to [`Body::request`]`(received)` may be spliced on: a `206` whose
    /// `Content-Range` starts exactly where the body broke, ends within the body, agrees with
    /// the known length and carries the same validator. The engine has judged the answer as
    /// an attempt first (a `503` is retried, not refused here).
    pub fn check(&self, received: u64, answer: &Head) -> Result<Splice, Refusal> {
        let at = self.offset(received)?;
        match answer.status {
            206 => {}
            200 => return Err(Refusal::Whole),
            416 => return Err(Refusal::Unsatisfiable),
            status => return Err(Refusal::AnswerStatus(status)),
        }
        if !identity(answer.content_encoding) {
            return Err(Refusal::Encoded);
        }
        if !self.same_validator(answer) {
            return Err(Refusal::Changed);
        }
        let Some(ContentRange::Bytes {
            first,
            last,
            complete,
        }) = answer.content_range.and_then(ContentRange::parse)
        else {
            return Err(Refusal::BadContentRange);
        };
        if first != at {
            return Err(Refusal::WrongStart {
                expected: at,
                got: first,
            });
        }
        if let Some(end) = self.end
            && last >= end
        {
            return Err(Refusal::WrongEnd {
                expected: end - 1,
                got: last,
            });
        }
        if let (Some(expected), Some(got)) = (self.complete, complete)
            && expected != got
        {
            return Err(Refusal::LengthChanged { expected, got });
        }
        if let Some(length) = answer.content_length
            && number(length.trim_ascii()) != Some(last - first + 1)
        {
            return Err(Refusal::LengthMismatch);
        }
        Ok(Splice {
            first,
            end: last + 1,
            complete,
        })
    }

    /// Records what a spliced answer taught: the representation's length, where unknown.
    pub fn learn(&mut self, splice: &Splice) {
        if self.complete.is_none() {
            self.complete = splice.complete;
        }
        if self.end.is_none() && !self.ranged {
            self.end = splice.complete;
        }
    }

    /// The representation's offset after `received` bytes; more than the body holds is an
    /// overrun.
    fn offset(&self, received: u64) -> Result<u64, Refusal> {
        match self.start.checked_add(received) {
            Some(at) if self.end.is_none_or(|end| at <= end) => Ok(at),
            _ => Err(Refusal::Overrun),
        }
    }

    fn same_validator(&self, answer: &Head) -> bool {
        match &self.validator {
            Validator::ETag(ours) => {
                let ours = EntityTag {
                    weak: false,
                    opaque: ours,
                };
                answer
                    .etag
                    .and_then(EntityTag::parse)
                    .is_some_and(|theirs| ours.strong_eq(theirs))
            }
            Validator::LastModified(ours) => answer
                .last_modified
                .is_some_and(|theirs| theirs.trim_ascii() == ours),
        }
    }
}

/// Whether another resume may be made after `resumes` were (`resume.maxResumes`).
pub fn may_resume(resumes: u32, policy: &ResumePolicy) -> Result<(), Refusal> {
    if resumes < policy.max_resumes {
        Ok(())
    } else {
        Err(Refusal::Exhausted { resumes })
    }
}

/// No `Content-Encoding`, or only `identity`.
fn identity(encoding: Option<&str>) -> bool {
    encoding.is_none_or(|v| tokens(v).all(|t| t.eq_ignore_ascii_case("identity")))
}

/// The validator of a first response: its strong `ETag`; with no entity tag, its
/// `Last-Modified` if that is a strong validator (at least a second before the response's
/// `Date`, §8.8.2.2). A weak tag ends it: `If-Range` may carry neither a weak tag nor, when
/// the client has a tag, a date (§13.1.5). An `ETag` that is no entity tag (unquoted, a
/// list) counts as none.
fn validator(head: &Head) -> Result<Validator, Refusal> {
    match head.etag.and_then(EntityTag::parse) {
        Some(tag) if tag.weak => Err(Refusal::WeakValidator),
        Some(tag) => Ok(Validator::ETag(tag.opaque.to_owned())),
        None => match head.last_modified.map(str::trim_ascii) {
            Some(modified) if strong_date(modified, head.date) => {
                Ok(Validator::LastModified(modified.to_owned()))
            }
            Some(_) => Err(Refusal::WeakValidator),
            None => Err(Refusal::NoValidator),
        },
    }
}

/// Whether `Last-Modified: modified` is at least one second before `Date: date`. The dates are
/// read by [`crate::retry_after::parse`], which measures a date from a given "now": the
/// modification is measured from the epoch, the response's date from the modification.
fn strong_date(modified: &str, date: Option<&str>) -> bool {
    let is_date = |s: &str| s.bytes().any(|b| b.is_ascii_alphabetic());
    let Some(date) = date.map(str::trim_ascii).filter(|d| is_date(d)) else {
        return false;
    };
    if !is_date(modified) {
        return false;
    }
    let Some(modified_ms) = crate::retry_after::parse(modified, 0.0) else {
        return false;
    };
    crate::retry_after::parse(date, modified_ms).is_some_and(|gap| gap >= 1000.0)
}
