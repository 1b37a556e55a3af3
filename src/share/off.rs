//! What a build without `share` has of it: the names the shared code calls, made so that
//! nothing of them is left in the wasm. A [`Note`] or a [`ShareName`] cannot be made, so a
//! policy's `share` is always `None`, no note is ever told or heard, and the code that would
//! handle one is typed, compiled, and optimized away.

use crate::breaker::{Breaker, Transition};
use crate::policy::Policy;
use crate::policy::field::Field;
use crate::policy::reader::{Check, Object, Rows};
use crate::vocab::Judgement;

/// A note to or from peers: none without `share`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Note {}

impl Note {
    /// The note's numbers: there is no note to encode.
    #[inline(always)]
    pub fn encode(self) -> (u32, f64, u32) {
        match self {}
    }

    /// A note from its numbers: never one without `share`.
    #[inline(always)]
    pub fn decode(_kind: u32, _time: f64, _rank: u32) -> Option<Note> {
        None
    }
}

/// A share name: none without `share` (the lean build rejects `share`, but for `false`).
#[derive(Clone, Debug, PartialEq)]
pub enum ShareName {}

/// No schema rows: the build's table names `share` as a capability it lacks.
pub const FIELDS: &[Field] = &[];

/// No client-only field of `share` to explain.
#[inline(always)]
pub fn client_only(_key: &str) -> Option<&'static str> {
    None
}

/// `share` off: what the lean build accepts (`false`, or absent) reads as no name.
#[inline(always)]
pub(crate) fn share_name<R: Rows>(_c: &mut Check<R>, _o: &Object) -> Option<ShareName> {
    None
}

/// A note applied to an origin's state: there is none to apply.
#[inline(always)]
pub fn apply<S>(
    _state: S,
    note: Note,
    _now: f64,
    _policy: &Policy,
    _rank: u32,
) -> Option<Transition> {
    match note {}
}

/// What a client that starts is told: nothing.
#[inline(always)]
pub fn describe<P>(_breaker: &Breaker, _pacer: &P, _now: f64, _rank: u32) -> [Option<Note>; 2] {
    [None, None]
}

/// What one recorded answer tells the peers: nothing.
#[inline(always)]
pub fn told<S>(
    _state: S,
    _before: (bool, bool),
    _judgement: Judgement,
    _transition: Option<Transition>,
    _now: f64,
    _rank: u32,
) -> [Option<Note>; 2] {
    [None, None]
}

/// The shell's part (wasm32): no channel is ever opened.
#[cfg(target_arch = "wasm32")]
pub(crate) mod shell {
    use std::rc::{Rc, Weak};

    use js_sys::Function;
    use wasm_bindgen::prelude::*;

    use crate::policy::Policy;
    use crate::registry::Registry;

    /// What a channel would reach of its client: the client implements it in every build,
    /// and only a channel (there is none here) calls it.
    #[expect(dead_code, reason = "no channel calls a peer without `share`")]
    pub trait Peer {
        /// The client's per-origin state.
        fn registry(&self) -> &crate::owner::Owner;
        /// The client's policy, validated.
        fn policy(&self) -> &Rc<Policy>;
        /// The client's `onEvent`.
        fn on_event(&self) -> Option<&Function>;
    }

    /// A sharing client's channel: none without `share`.
    pub enum Sharing {}

    impl Sharing {
        /// A call of the client starts: there is no channel to tell.
        #[inline(always)]
        pub fn poke(&self) {
            match *self {}
        }
    }

    /// `share.durableObject`: not read without `share`.
    #[derive(Default)]
    pub struct DurableObject;

    impl DurableObject {
        /// Not read: `read` is never called.
        #[inline(always)]
        pub fn read(_read: impl FnOnce() -> JsValue) -> Self {
            DurableObject
        }
    }

    /// Opens no channel.
    #[inline(always)]
    pub fn open<C: Peer + 'static>(
        _policy: &Policy,
        _durable_object: DurableObject,
        _weak: &Weak<C>,
        _registry: &mut Registry,
    ) -> Option<Sharing> {
        None
    }

    /// `share` in a build without `share`: `false` (off) only.
    #[wasm_bindgen(typescript_custom_section)]
    const NO_SHARE_TYPES: &str = r#"
export interface Policy {
  /** Not in this build: shared origin health is in resilient-fetch/full. `false` (off) is accepted. */
  share?: false;
}
"#;
}
