//! Resumed downloads (Cargo feature `resume`, JS option `resume`): a GET's body that breaks
//! after N bytes reached the caller is asked for again from byte N (`Range`, `If-Range`), and
//! the answer is spliced into the caller's one `ReadableStream` only if it is the same body's
//! next bytes (RFC 9110 §13.1.5, §14, §8.8). Each resume is an attempt of the call: it counts
//! against its attempts, deadline and budget, waits its backoff, and its origin's breaker
//! admits and hears it (the engine's [`crate::engine::run_course`] continues the call). Everything
//! of the capability is here:
//!
//! | concern | file |
//! | --- | --- |
//! | whether a first response's body may be resumed; the request after N bytes; judging an answer | `body.rs` |
//! | why not: each reason's code and sentence | `refusal.rs` |
//! | a body that broke, as the engine hears it | `broke.rs` |
//! | the headers read and their grammar (entity tags, `Content-Range`, lists) | `headers.rs` |
//! | the policy section `resume: true \| false \| { maxResumes }`: rows, defaults, check | `section.rs` |
//! | the shell's part (wasm32): a response's resumer, the TypeScript declarations | `shell.rs` |
//! | the splice in JS (joined into `js/joined/arguments.js` by scripts/join-js.mjs) | `resume.js` |
//! | the lean build's stand-ins: the same names, uninhabited or always off | `off.rs` |

#[cfg(feature = "resume")]
mod body;
#[cfg(feature = "resume")]
mod broke;
#[cfg(feature = "resume")]
mod headers;
#[cfg(not(feature = "resume"))]
mod off;
#[cfg(feature = "resume")]
mod refusal;
#[cfg(feature = "resume")]
mod section;
#[cfg(target_arch = "wasm32")]
pub(crate) mod shell;
#[cfg(all(test, feature = "resume"))]
mod tests;

#[cfg(feature = "resume")]
pub use body::{Body, RangeRequest, Splice, Validator, may_resume};
#[cfg(feature = "resume")]
pub use broke::Broke;
#[cfg(feature = "resume")]
pub use headers::{ContentRange, EntityTag, Head};
#[cfg(not(feature = "resume"))]
pub use off::*;
#[cfg(feature = "resume")]
pub use refusal::Refusal;
#[cfg(feature = "resume")]
pub use section::{CAPABILITY, FIELDS, MAX_RESUMES_RANGE, ResumePolicy, defaults};
#[cfg(feature = "resume")]
pub(crate) use section::{initial, read};
