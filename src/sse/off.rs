//! The lean build's `events` (no feature `sse`): the names the policy calls, each uninhabited
//! or always off, so that it compiles the same code and the lean wasm holds nothing of event
//! streams. `Option<EventsPolicy>` is always `None`; the client has no `events` method.

use crate::policy::reader::{Check, Object, Rows};
use crate::policy::schema::Field;

/// Event stream settings: none in this build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventsPolicy {}

/// The `events` defaults: off, with no way on in this build.
pub mod defaults {
    /// Event streams are not in this build (the full build has them: `resilient-fetch/full`).
    pub const EVENTS_ENABLED: bool = false;
}

/// The `events` rows of the schema: none in this build (`events` is an option it lacks).
pub const FIELDS: &[Field] = &[];

/// The capability's row in the build's table ([`crate::policy::CAPABILITIES`]): absent here.
pub const CAPABILITY: (&str, &str, bool) = ("events", "server-sent events that reconnect", false);

/// The `events` a policy starts with: none.
#[inline(always)]
pub(crate) fn initial() -> Option<EventsPolicy> {
    None
}

/// The policy's `events`: none (an option this build lacks is refused before: `build.rs`).
#[inline(always)]
pub(crate) fn read<R: Rows>(_: &mut Check<R>, _: &Object) -> Option<EventsPolicy> {
    None
}
