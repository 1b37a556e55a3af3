//! What the lean build (no `coalesce`) has of coalescing: stand-ins of the names the code around
//! uses, each always off, so that the same code compiles and the optimizer removes it.

use crate::policy::reader::{Check, Object, Rows};
use crate::policy::schema::Field;

/// The policy's `coalesce` field: always off, and nothing, in this build.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Coalesce;

/// The policy's `coalesce`: off.
pub const DEFAULT: Coalesce = Coalesce;

/// No schema row: `coalesce` is refused before any check (`policy::build`), `false` accepted.
pub const FIELDS: &[Field] = &[];

/// `coalesce`: off; nothing to read.
#[inline(always)]
pub(crate) fn coalesce<R: Rows>(_: &mut Check<R>, _: &Object) -> Coalesce {
    Coalesce
}

/// The shell's part: no flight, and the option declared as `false` only.
#[cfg(target_arch = "wasm32")]
pub(crate) mod shell {
    use js_sys::Promise;
    use wasm_bindgen::prelude::*;

    use crate::policy::Policy;

    /// A read that may join an identical one in flight: none in this build.
    pub(crate) enum Joinable {}

    /// No call joins a flight in this build.
    #[inline(always)]
    pub(crate) fn flight(
        _: &Policy,
        _: &str,
        _: &JsValue,
        _: &JsValue,
        _: Option<&JsValue>,
        _: Option<&JsValue>,
    ) -> Option<Joinable> {
        None
    }

    impl Joinable {
        /// Never called: there is no flight.
        #[inline(always)]
        pub(crate) fn join<S, A>(self, _: u32, _: S) -> Promise
        where
            S: FnOnce() -> (Promise, A) + 'static,
            A: FnOnce() + 'static,
        {
            match self {}
        }
    }

    /// `coalesce` in a build without `coalesce`: `false` (off) only.
    #[wasm_bindgen(typescript_custom_section)]
    const NO_COALESCE_TYPES: &str = r#"
export interface Policy {
  /** Not in this build: coalesced reads is in resilient-fetch/full. `false` (off) is accepted. */
  coalesce?: false;
}
"#;
}
