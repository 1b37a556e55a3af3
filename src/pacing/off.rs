//! Pacing in a build without it (the lean build): stand-ins with the names and signatures the
//! shared code uses. Its types cannot be made (each is uninhabited, of no size), so an
//! `Option` of one is always `None`, a variant that carries one cannot occur, and the code that
//! would handle them is typed, compiled and removed by the optimizer.

use crate::policy::Policy;
use crate::policy::field::Field;
use crate::policy::reader::{Check, Object, Rows};
use crate::stage::Stage;

/// What an answer's rate-limit headers say: nothing is read without pacing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quota {}

/// A send booked by the origin's pacing: none without pacing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ticket {}

/// Why a call must wait for its origin: never, without pacing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {}

impl Why {
    /// The JS name.
    #[inline(always)]
    pub fn as_str(self) -> &'static str {
        match self {}
    }
}

/// Pacing settings: none without pacing (`rateLimit` is `false` or absent). Of no size, so
/// that the policy's `Option` of it takes none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RateLimitPolicy {}

impl RateLimitPolicy {
    /// Longest a call waits for its origin before sending, in ms.
    #[inline(always)]
    pub fn max_wait(&self) -> u32 {
        match *self {}
    }
}

/// No `rateLimit` rows in the policy's schema.
pub const FIELDS: &[Field] = &[];

/// Off: the lean build paces nothing.
#[inline(always)]
pub fn default_policy() -> Option<RateLimitPolicy> {
    None
}

/// Off (a `rateLimit` other than `false` is refused before: it needs the full build).
#[inline(always)]
pub(crate) fn read<R: Rows>(_: &mut Check<R>, _: &Object) -> Option<RateLimitPolicy> {
    None
}

/// What rate-limit headers say: nothing read without pacing.
pub mod rate_limit {
    pub use super::Quota;
}

/// One origin's pacing without pacing: nothing known, nothing held, of no size; as a stage
/// it lets everything go and hears nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Pacer;

impl Pacer {
    /// No booking can exist.
    #[inline(always)]
    pub fn unbook(&mut self, ticket: Ticket) {
        match ticket {}
    }

    /// No wait.
    #[inline(always)]
    pub fn wait(&self, _: f64) -> Option<(f64, Why)> {
        None
    }

    /// No quota known.
    #[inline(always)]
    pub fn remaining(&self, _: f64) -> Option<u32> {
        None
    }
}

impl Stage for Pacer {
    type Rules = ();

    fn rules(_: &Policy) {}

    #[inline(always)]
    fn reset(&mut self) {}
}
