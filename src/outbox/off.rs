//! The outbox in a build without the feature `outbox` (the lean build): the names the code
//! around it calls, as stand-ins that cost nothing. A value of an uninhabited one cannot exist,
//! so no policy has an outbox (`Option<OutboxPolicy>` is always `None`), no client opens one,
//! no call is kept and no outbox event is made (no `EntryId`): the code that would handle one is typed,
//! compiled, and gone from the wasm.

use crate::policy::field::Field;
use crate::policy::reader::{Check, Object, Rows};

/// Outbox settings: none in this build.
#[derive(Clone, Debug, PartialEq)]
pub enum OutboxPolicy {}

impl OutboxPolicy {
    /// The outbox of a policy that does not name one: none.
    #[inline(always)]
    pub fn by_default() -> Option<OutboxPolicy> {
        None
    }
}

/// The outbox's defaults in this build: off, and nothing to set.
pub mod defaults {
    /// No call is kept in this build (JS `outbox`: `false` only).
    pub const OUTBOX_ENABLED: bool = false;
}

/// The schema's rows of `outbox`: none (the option is refused as one of the full build's).
pub const FIELDS: &[Field] = &[];

/// Why `outbox` given to one call is refused: never asked in this build (no row).
pub const CLIENT_ONLY: &str = "";

/// The policy's `outbox`: none in this build.
#[inline(always)]
pub(crate) fn check<R: Rows>(_: &mut Check<R>, _: &Object) -> Option<OutboxPolicy> {
    None
}

/// The id of an outbox entry, as an event names it: none in this build, so no outbox event
/// can be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoEntry {}

/// The id of an outbox entry: none in this build ([`NoEntry`]).
pub type EntryId<'a> = NoEntry;

impl NoEntry {
    /// The id: never asked.
    pub fn get<'a>(self) -> &'a str {
        match self {}
    }
}

#[cfg(target_arch = "wasm32")]
pub use shell::*;

/// The shell's part: no outbox to open, keep with or show.
#[cfg(target_arch = "wasm32")]
mod shell {
    use std::rc::{Rc, Weak};

    use js_sys::{Function, Promise};
    use wasm_bindgen::JsValue;

    use super::OutboxPolicy;
    use crate::outbox::End;
    use crate::wasm::ended::Reply;

    /// A client's outbox: none in this build.
    pub enum Outbox {}

    impl Outbox {
        /// Never opened: there are no settings to open it with.
        pub fn open<C: Host + 'static>(policy: OutboxPolicy, _: Held, _: Weak<C>) -> Outbox {
            match policy {}
        }

        /// Never asked: there is no outbox.
        pub fn may_keep(&self) -> Keepable {
            match *self {}
        }
    }

    /// What an outbox reaches of its client: the same trait as the full build's.
    pub trait Host {
        /// A replay of a kept request through the client.
        fn replay(self: Rc<Self>, request: JsValue) -> Promise;
        /// The client's outbox (none).
        fn outbox(&self) -> Option<&Outbox>;
        /// The client's `onEvent`.
        fn on_event(&self) -> Option<&Function>;
    }

    /// `outbox.store` and `outbox.onReplay`: not read in this build.
    #[derive(Default)]
    pub struct Held;

    impl Held {
        /// Nothing: `read` is never called.
        #[inline(always)]
        pub fn new(_read: impl FnOnce() -> (JsValue, JsValue)) -> Held {
            Held
        }
    }

    /// A call the outbox may keep: none in this build.
    pub enum Keepable {}

    impl Keepable {
        /// Never called: no call may be kept.
        pub fn keep(
            self,
            _: (End, u32),
            _: &Reply,
            _: (&JsValue, &JsValue, bool),
            _: &str,
            _: Result<JsValue, JsValue>,
        ) -> Result<JsValue, JsValue> {
            match self {}
        }
    }
}
