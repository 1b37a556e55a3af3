//! The lean build's resume (no feature `resume`): the names the shared code calls, each
//! uninhabited or always off, so that it compiles the same code and the optimizer removes
//! what would resume a body. `Option<ResumePolicy>` is always `None` here.

use crate::policy::reader::{Check, Object, Rows};
use crate::policy::schema::Field;

/// Resume settings: none in this build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResumePolicy {}

/// The `resume` defaults: off, with no way on in this build.
pub mod defaults {
    /// Resuming is off (the full build has it: `resilient-fetch/full`).
    pub const RESUME_ENABLED: bool = false;
}

/// The `resume` rows of the schema: none in this build (`resume` is an option it lacks).
pub const FIELDS: &[Field] = &[];

/// The capability's row in the build's table ([`crate::policy::CAPABILITIES`]): absent here.
pub const CAPABILITY: (&str, &str, bool) = ("resume", "resumed downloads", false);

/// The `resume` a policy starts with: off.
#[inline(always)]
pub(crate) fn initial() -> Option<ResumePolicy> {
    None
}

/// The policy's `resume`: off (an option this build lacks is refused before: `build.rs`).
#[inline(always)]
pub(crate) fn read<R: Rows>(_: &mut Check<R>, _: &Object) -> Option<ResumePolicy> {
    None
}

/// A body that broke: none in this build, so the engine's branch for one is removed.
pub struct Broke<O>(std::convert::Infallible, std::marker::PhantomData<O>);

impl<O> Broke<O> {
    /// Never called: no value exists.
    #[inline(always)]
    pub fn parts(self) -> (crate::classify::AttemptOutcome, O) {
        match self.0 {}
    }
}
