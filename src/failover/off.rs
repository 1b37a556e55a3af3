//! The lean build's failover (no feature `failover`): the names the engine and the shell call,
//! so that they compile the same code. A route is its call's one origin; no
//! [`FailoverPolicy`] can be made, so `Option<FailoverPolicy>` is always `None`; a call's
//! [`AlternateOrigins`] are none, of no size.

use crate::policy::reader::{Check, Object, Rows};
use crate::policy::schema::Field;
use std::convert::Infallible;
use std::marker::PhantomData;

/// Failover settings: none in this build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailoverPolicy {}

impl FailoverPolicy {
    /// The alternates of `primary`: none can be listed here.
    pub fn alternates(&self, _primary: &str) -> AlternateOrigins<'_> {
        match *self {}
    }
}

/// The alternates of a call's origin: none in this build, of no size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AlternateOrigins<'a>(PhantomData<&'a str>);

impl AlternateOrigins<'_> {
    /// Whether there are none: always.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        true
    }
}

/// An alternate origin an attempt goes to: none can exist in this build, so the shell's code
/// for one is left out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Alternate<'a>(Infallible, PhantomData<&'a str>);

impl<'a> Alternate<'a> {
    /// The origin (none exists).
    pub fn origin(self) -> &'a str {
        match self.0 {}
    }

    /// Anything: no alternate exists, so code given one is never reached.
    pub fn absurd<T>(self) -> T {
        match self.0 {}
    }
}

/// Where in its route a call's attempt goes: always its own origin, of no size.
#[derive(Debug)]
pub struct At<'a>(PhantomData<&'a str>);

impl<'a> At<'a> {
    /// At the call's own origin.
    #[inline(always)]
    pub fn new(_route: &Route<'a>) -> Self {
        At(PhantomData)
    }

    /// The index: 0, the call's own origin.
    #[inline(always)]
    pub fn get(&self) -> usize {
        0
    }

    /// Stays at the call's own origin.
    #[inline(always)]
    pub fn set(&self, _route: &Route<'a>, _i: usize) {}

    /// The call's own origin.
    #[inline(always)]
    pub fn origin(&self, route: &Route<'a>) -> &'a str {
        route.primary
    }
}

/// The origins of a call: its own only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route<'a> {
    primary: &'a str,
}

impl<'a> Route<'a> {
    /// The route of a call to `primary`: that origin alone.
    #[inline(always)]
    pub fn new(primary: &'a str, _alternates: AlternateOrigins<'a>) -> Self {
        Route { primary }
    }

    /// The call's own origin, whatever `i`.
    #[inline(always)]
    pub fn origin(&self, _i: usize) -> &'a str {
        self.primary
    }

    /// The alternate at `i` (none: every attempt goes to the call's own URL).
    #[inline(always)]
    pub fn alternate(&self, _i: usize) -> Option<Alternate<'a>> {
        None
    }

    /// Where the first attempt goes: the call's origin.
    #[inline(always)]
    pub fn first(&self, _is_open: impl Fn(&str) -> bool) -> usize {
        0
    }

    /// Where a retry goes: the call's origin.
    #[inline(always)]
    pub fn after(&self, _current: usize, _is_open: impl Fn(&str) -> bool) -> usize {
        0
    }

    /// Whether it has no alternates: always.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        true
    }
}

/// The `failover` rows of the schema: none in this build (`failover` is an option it lacks).
pub const FIELDS: &[Field] = &[];

/// The capability's row in the build's table ([`crate::policy::CAPABILITIES`]): absent here.
pub const CAPABILITY: (&str, &str, bool) = ("failover", "failover origins", false);

/// The `failover` a policy starts with: none.
#[inline(always)]
pub(crate) fn initial() -> Option<FailoverPolicy> {
    None
}

/// The policy's `failover`: none (an option this build lacks is refused before: `build.rs`).
#[inline(always)]
pub(crate) fn read<R: Rows>(_: &mut Check<R>, _: &Object) -> Option<FailoverPolicy> {
    None
}
