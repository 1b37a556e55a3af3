//! The lean build's `stale` (no feature `stale`): the names the shared code calls, each
//! uninhabited or off, so that it compiles the same code and the optimizer removes what would
//! keep or serve an answer. No [`StalePolicy`] can exist: `Option<StalePolicy>` is always
//! `None`, no client opens a store, no call looks one up.

use crate::policy::field::Field;
use crate::policy::reader::{Check, Object, Rows};

/// Stale-if-error settings: none in this build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StalePolicy {}

/// The `stale` defaults: off, with no way on in this build.
pub mod defaults {
    /// No answer is kept (the full build has them: `resilient-fetch/full`).
    pub const STALE_ENABLED: bool = false;
}

/// The `stale` rows of the schema: none in this build (`stale` is an option it lacks).
pub const FIELDS: &[Field] = &[];

/// The capability's row in the build's table ([`crate::policy::CAPABILITIES`]): absent here.
pub const CAPABILITY: (&str, &str, bool) = ("stale", "stale answers", false);

/// Why a field of a client's store is refused per call: never asked in this build (no row).
pub const CLIENT_ONLY: &str = "";

/// The `stale` a policy starts with: off.
#[inline(always)]
pub(crate) fn initial() -> Option<StalePolicy> {
    None
}

/// The policy's `stale`: off (an option this build lacks is refused before: `build.rs`).
#[inline(always)]
pub(crate) fn read<R: Rows>(_: &mut Check<R>, _: &Object) -> Option<StalePolicy> {
    None
}

/// A kept answer served (`Event::Stale`): none in this build.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Told {}

impl Told {
    /// Its age in ms, and the failure's JS name.
    pub fn parts(&self) -> (f64, &'static str) {
        match *self {}
    }
}

#[cfg(target_arch = "wasm32")]
pub use shell::*;

/// The shell's part: no store to open, keep in or serve from.
#[cfg(target_arch = "wasm32")]
mod shell {
    use wasm_bindgen::JsValue;

    use super::StalePolicy;
    use crate::engine::CallResult;
    use crate::policy::Policy;
    use crate::wasm::ended::Reply;
    use crate::wasm::transport::FetchTransport;

    /// A client's store of kept answers: nothing in this build.
    pub struct Store;

    impl Store {
        /// No store: nothing is ever kept.
        #[inline(always)]
        pub fn new(_: Option<&StalePolicy>, _: Held) -> Store {
            Store
        }
    }

    /// `stale.store`: not read in this build.
    #[derive(Default)]
    pub struct Held;

    impl Held {
        /// Nothing: `read` is never called.
        #[inline(always)]
        pub fn new(_read: impl FnOnce() -> JsValue) -> Held {
            Held
        }

        /// Never given (the policy reader refuses `stale` first).
        #[inline(always)]
        pub fn given(&self) -> bool {
            false
        }
    }

    /// Whether a call may be served a kept answer: never in this build.
    #[inline(always)]
    pub fn serves(_: &Policy, _: &str) -> bool {
        false
    }

    /// A failure a kept answer stands in for: none in this build.
    #[derive(Clone, Copy)]
    pub enum Failure {}

    /// A call that may be served a kept answer: none in this build.
    pub enum Lookup {}

    impl Lookup {
        /// None: no policy has `stale`.
        #[inline(always)]
        pub fn of(_: &Policy, _: &str, _: (&JsValue, &JsValue, bool)) -> Option<Lookup> {
            None
        }

        /// Never called: there is no lookup.
        pub fn after(
            &self,
            _: &Store,
            _: &Policy,
            _: &CallResult<Result<JsValue, JsValue>>,
            _: &FetchTransport,
        ) -> Option<Failure> {
            match *self {}
        }

        /// Never called: there is no lookup.
        pub fn serve(
            self,
            _: &Store,
            failure: Failure,
            _: &Reply<'_>,
            _: Result<JsValue, JsValue>,
            _: impl FnOnce(super::Told) + 'static,
        ) -> Result<JsValue, JsValue> {
            match failure {}
        }
    }
}
