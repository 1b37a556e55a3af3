//! The lean build's hedge (no feature `hedge`): the names the shared code calls, each
//! uninhabited or always off, so that it compiles the same code and the optimizer removes
//! what would handle a hedge. No value of these types can exist: `Option<HedgePolicy>` is
//! always `None`, a match arm on an [`Sent`] is dead, a [`Held`] list is always empty.

use crate::engine::attempt::{Answered, Flight};
use crate::engine::{Ctx, Env, Transport};
use crate::events::Event;
use crate::policy::reader::{Check, Object, Rows};
use crate::policy::schema::Field;
use std::convert::Infallible;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Hedging settings: none in this build.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HedgePolicy {}

/// When a hedge goes: never in this build.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HedgeDelay {}

/// The `hedge` defaults: off, with no way on in this build.
pub mod defaults {
    /// Hedged reads are off (the full build has them: `resilient-fetch/full`).
    pub const HEDGE_ENABLED: bool = false;
}

/// The `hedge` rows of the schema: none in this build (`hedge` is an option it lacks).
pub const FIELDS: &[Field] = &[];

/// The capability's row in the build's table ([`crate::policy::CAPABILITIES`]): absent here.
pub const CAPABILITY: (&str, &str, bool) = ("hedge", "hedged reads", false);

/// The `hedge` a policy starts with: off.
#[inline(always)]
pub(crate) fn initial() -> Option<HedgePolicy> {
    None
}

/// The policy's `hedge`: off (an option this build lacks is refused before: `build.rs`).
#[inline(always)]
pub(crate) fn read<R: Rows>(_: &mut Check<R>, _: &Object) -> Option<HedgePolicy> {
    None
}

/// Whether a budget may pay for a hedge: no hedge goes in this build (so the shared
/// admission code may ask it in both builds).
#[inline(always)]
pub fn budget_allows(_tokens: u32, _capacity: u32) -> bool {
    false
}

/// Whether a request may be hedged: never in this build.
#[inline(always)]
pub fn may_hedge(_method: &str, _has_body: bool) -> bool {
    false
}

/// A hedge sent (`Event::Hedge`): none in this build.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sent {}

impl Sent {
    /// Its attempt and the delay that passed, in ms.
    pub fn parts(&self) -> (u32, f64) {
        match *self {}
    }
}

/// A hedge's own bulkhead slot: none in this build.
#[derive(Debug)]
pub enum Slot {}

/// Given back when dropped, as the full build's is (never: none exists).
impl Drop for Slot {
    fn drop(&mut self) {
        match *self {}
    }
}

/// The bulkhead slots hedges hold: always none in this build.
#[derive(Debug)]
pub struct Held<T>(PhantomData<T>);

impl<T> Default for Held<T> {
    #[inline(always)]
    fn default() -> Self {
        Held(PhantomData)
    }
}

impl<T> Held<T> {
    /// Keeps a hedge's slot: never here (`false`: no hedge takes a slot).
    #[inline(always)]
    pub fn add(&mut self, _slot: T) -> bool {
        false
    }

    /// The youngest hedge's slot, taken out: none.
    #[inline(always)]
    pub fn youngest(&mut self) -> Option<T> {
        None
    }

    /// Takes out the slot `is` matches: none is held.
    #[inline(always)]
    pub fn remove(&mut self, _is: impl Fn(&T) -> bool) {}
}

/// The hedged race: never run in this build (no [`HedgePolicy`] exists). Not an `async fn`:
/// its future is uninhabited too, so the call's own future keeps no room for it.
pub(crate) fn send<'a, T: Transport, E: Env>(
    _ctx: &Ctx<'a>,
    _transport: &T,
    _env: &E,
    policy: &HedgePolicy,
    _first: Flight<'a>,
    _attempts: &mut u32,
    _on_event: &mut dyn FnMut(&Event<'_>),
) -> Race<Option<Answered<'a, T::Output>>> {
    match *policy {}
}

/// The future of a hedged race that cannot start (no value: a race needs a [`HedgePolicy`]).
pub struct Race<O>(Infallible, PhantomData<O>);

impl<O> Future for Race<O> {
    type Output = O;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<O> {
        match self.0 {}
    }
}

/// One origin's latency sample without hedging: nothing kept, of no size; as a stage it
/// lets everything go and learns nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Latency;

impl crate::stage::Stage for Latency {
    type Rules = ();

    fn rules(_: &crate::policy::Policy) {}

    #[inline(always)]
    fn reset(&mut self) {}
}
