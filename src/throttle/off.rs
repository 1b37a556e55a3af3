//! The build without `throttle` (the lean one): the names the rest of the crate uses, each
//! standing for nothing. The types are uninhabited, so a value of one cannot exist: an
//! `Option` of one is always `None`, and the code that would handle one is typed, compiled
//! and removed. Nothing here adds a byte to the wasm.

use crate::policy::field::Field;
use crate::policy::reader::{Check, Object, Rows};

/// The section's rows of the schema: none, so the option is unknown but for `false`.
pub const FIELDS: &[Field] = &[];

/// Throttling settings: none can exist without throttling.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ThrottlePolicy {}

/// A refusal's probability: none can exist without throttling.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Probability {}

impl From<Probability> for f64 {
    fn from(probability: Probability) -> f64 {
        match probability {}
    }
}

/// The throttle of a policy without `throttle`: off.
#[inline(always)]
pub fn default_policy() -> Option<ThrottlePolicy> {
    None
}

/// The `throttle` field of a policy object: off (the build's table refuses any other value
/// before the check starts).
#[inline(always)]
pub(crate) fn throttle_policy<R: Rows>(_: &mut Check<R>, _: &Object) -> Option<ThrottlePolicy> {
    None
}

/// One origin's throttle: nothing to count, as no policy can turn it on.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Throttle;

impl Throttle {
    /// `(requests, accepts)` over the window: never asked.
    #[inline(always)]
    pub fn counts(&mut self, _: f64, policy: &ThrottlePolicy) -> (u32, u32) {
        match *policy {}
    }

    /// The probability of refusing a request now: never asked.
    #[inline(always)]
    pub fn reject_probability(&mut self, _: f64, policy: &ThrottlePolicy) -> f64 {
        match *policy {}
    }

    /// Decides one request: never asked.
    #[inline(always)]
    pub fn refuse(
        &mut self,
        _: f64,
        _: impl FnOnce() -> f64,
        policy: &ThrottlePolicy,
    ) -> Option<Probability> {
        match *policy {}
    }

    /// Counts a request sent: never asked.
    #[inline(always)]
    pub fn record(&mut self, _: f64, _: bool, policy: &ThrottlePolicy) {
        match *policy {}
    }
}
