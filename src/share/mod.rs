//! Shared origin health (`share: "name"`): what clients of one site tell each other about
//! an origin, and what they do with what they are told.
//!
//! Clients with the same share name (tabs, iframes, workers; the shell carries the notes
//! over a `BroadcastChannel`) send each other [`Note`]s about origins. Nothing but origins,
//! states and times crosses: never a URL's path or query, a header, a body or a key.
//!
//! - **Answers.** A closed breaker tells each failure, with the successes it had not told
//!   since its last note (counted in a failure-rate window only: they came before whatever
//!   run of failures the receiver counts), and each success while it has failures counted,
//!   so that every client's count is the site's: one that sends a request a minute learns
//!   the origin is down from the others, and a blip on a busy client does not open an idle
//!   one. In the healthy steady state nothing is sent.
//! - **Opened.** A breaker that opens tells until when. Every client that hears it opens
//!   as a *follower*, until one cooldown after the leader's `until`: the leader probes
//!   alone, and its outcome reaches all (`Closed`, or `Opened` again with a new `until`,
//!   which the followers follow). If the leader is gone (its tab closed), the followers
//!   probe one cooldown later. Two breakers that open at once (their notes crossing)
//!   settle on one leader: the lower rank (a random number per client), which both sides
//!   see exactly (times cross between tabs as wall-clock time, a few ms apart); a leader
//!   whose own cooldown has run out follows a peer's reopening.
//! - **Closed.** A probe succeeded: every breaker of the origin closes.
//! - **Hold.** An origin-wide wait (a `Retry-After` on a 429 or 503, a spent rate-limit
//!   quota): every client holds its sends until then.
//! - **Hello.** A client that starts asks; the others answer with what they hold now.
//!
//! A note never takes a breaker where its own answers could not: an `Opened` lasts at most
//! the receiver's cooldown, a `Hold` at most its `retry.maxRetryAfterMs`, and a malformed
//! note, or one of another protocol version, is dropped ([`Note::decode`]). Sharing is a
//! hint: no call ever waits for a note.
//!
//! | part | file |
//! | --- | --- |
//! | the protocol: notes, their kinds, the version (their JS copies are generated) | `note.rs` |
//! | what a note does to an origin, what a client that starts is told, what an answer tells | `rules.rs` |
//! | the policy section: `share`'s schema rows and its check | `section.rs` |
//! | the shell (wasm32): the channel, the notes sent and heard, the TypeScript options | `shell.rs`, `share.js` (joined into `js/joined/site.js`) |
//! | what a build without `share` gets instead: stand-ins that cannot be made | `off.rs` |
//! | the rules' tests | `tests.rs` |

#[cfg(feature = "share")]
mod note;
#[cfg(feature = "share")]
mod rules;
#[cfg(feature = "share")]
mod section;
#[cfg(all(target_arch = "wasm32", feature = "share"))]
pub(crate) mod shell;

#[cfg(not(feature = "share"))]
mod off;
#[cfg(not(feature = "share"))]
pub(crate) use off::share_name;
#[cfg(all(target_arch = "wasm32", not(feature = "share")))]
pub(crate) use off::shell;
#[cfg(not(feature = "share"))]
pub use off::{FIELDS, Note, ShareName, apply, client_only, describe, told};

#[cfg(feature = "share")]
pub use note::{Note, NoteKind, VERSION};
#[cfg(feature = "share")]
pub use rules::{apply, describe, told};
#[cfg(feature = "share")]
pub(crate) use section::share_name;
#[cfg(feature = "share")]
pub use section::{FIELDS, ShareName, client_only};

/// The capability as the build's table names it ([`crate::policy::CAPABILITIES`]): its
/// option, what it does, and whether this build has it.
pub const CAPABILITY: (&str, &str, bool) =
    ("share", "shared origin health", cfg!(feature = "share"));

mod stage;
#[cfg(feature = "share")]
pub use stage::SendNote;
pub use stage::{Share, before, notes};

/// The notes an attempt's end has for the peers (none can be made without `share`).
pub type Notes = [Option<Note>; 2];

#[cfg(all(test, feature = "share"))]
mod tests;
