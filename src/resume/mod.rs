//! `resume`: a GET's body that breaks after N bytes reached the caller is asked for again
//! from byte N (`Range`, `If-Range`), and the answer is spliced on only if it is the same
//! body's next bytes (RFC 9110 §13.1.5, §14, §8.8). The pure core; the shell splices the
//! parts into the caller's one `ReadableStream`, each resume an attempt of the call.
//!
//! | concern | file |
//! | --- | --- |
//! | whether a first response's body may be resumed; the request after N bytes; judging an answer | `body.rs` |
//! | why not: each reason's code and sentence | `refusal.rs` |
//! | the headers read and their grammar (entity tags, `Content-Range`, lists) | `headers.rs` |
//! | the policy section `resume: true \| false \| { maxResumes }` | `section.rs` |
//!
//! Compiled only with the `resume` feature: the lean build holds nothing of it.

#[cfg(feature = "resume")]
mod body;
#[cfg(feature = "resume")]
mod headers;
#[cfg(feature = "resume")]
mod refusal;
#[cfg(feature = "resume")]
pub mod section;
#[cfg(all(test, feature = "resume"))]
mod tests;

#[cfg(feature = "resume")]
pub use body::{Body, RangeRequest, Splice, Validator, may_resume};
#[cfg(feature = "resume")]
pub use headers::{ContentRange, EntityTag, Head};
#[cfg(feature = "resume")]
pub use refusal::Refusal;
#[cfg(feature = "resume")]
pub use section::{ResumePolicy, resume_policy};
