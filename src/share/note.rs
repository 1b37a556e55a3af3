//! The share protocol: what crosses between peers ([`Note`]s, their kinds, the version), and
//! how a note becomes the numbers it crosses as and back ([`Note::encode`], [`Note::decode`]).

/// The protocol's version; notes of any other are ignored. It crosses to JS as
/// `SHARE_VERSION` (js/errors.js and pkg-template/full/edge.js hold it, generated from here
/// by scripts/codes.mjs).
pub const VERSION: u32 = 1;

/// A note's kind as it crosses to peers: the first number of [`Note::encode`]. JS has it as
/// `NOTE_KIND_HELLO` … (js/errors.js and pkg-template/full/edge.js, generated from this enum
/// by scripts/codes.mjs).
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoteKind {
    /// [`Note::Hello`].
    Hello = 0,
    /// [`Note::Failed`].
    Failed = 1,
    /// [`Note::Succeeded`].
    Succeeded = 2,
    /// [`Note::Opened`].
    Opened = 3,
    /// [`Note::Closed`].
    Closed = 4,
    /// [`Note::Hold`].
    Hold = 5,
}

/// One thing a client tells its peers about an origin. Times are monotonic ms of the
/// client that holds the note (the shell converts them to and from wall-clock time).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Note {
    /// A client starts: tell it what you know.
    Hello,
    /// An attempt failed, by the breaker's rule, after `successes` of the sender's own
    /// answers it had not told (so that peers count the site's answers, not its failures
    /// alone).
    Failed {
        /// The sender's successes since its last note.
        successes: u32,
    },
    /// An attempt succeeded while the breaker counted failures.
    Succeeded,
    /// A breaker opened until `until`; `rank` breaks ties between leaders.
    Opened {
        /// When its probe may go.
        until: f64,
        /// The sender's rank.
        rank: u32,
    },
    /// A probe succeeded: the breaker closed.
    Closed,
    /// No sends to the origin before `until`.
    Hold {
        /// When sends may go again.
        until: f64,
    },
}

impl Note {
    /// The note as `(kind, time, rank)` numbers, as they cross to peers (the shell converts
    /// the time to wall-clock time and back; the third number crosses as it is).
    pub fn encode(self) -> (u32, f64, u32) {
        let (kind, time, rank) = match self {
            Note::Hello => (NoteKind::Hello, 0.0, 0),
            // The count rides in the rank's place: the time's is converted to wall-clock time.
            Note::Failed { successes } => (NoteKind::Failed, 0.0, successes),
            Note::Succeeded => (NoteKind::Succeeded, 0.0, 0),
            Note::Opened { until, rank } => (NoteKind::Opened, until, rank),
            Note::Closed => (NoteKind::Closed, 0.0, 0),
            Note::Hold { until } => (NoteKind::Hold, until, 0),
        };
        (kind as u32, time, rank)
    }

    /// A note from its numbers; None for an unknown kind or a time that is not finite.
    pub fn decode(kind: u32, time: f64, rank: u32) -> Option<Note> {
        let until = time.is_finite().then_some(time);
        const HELLO: u32 = NoteKind::Hello as u32;
        const FAILED: u32 = NoteKind::Failed as u32;
        const SUCCEEDED: u32 = NoteKind::Succeeded as u32;
        const OPENED: u32 = NoteKind::Opened as u32;
        const CLOSED: u32 = NoteKind::Closed as u32;
        const HOLD: u32 = NoteKind::Hold as u32;
        Some(match kind {
            HELLO => Note::Hello,
            FAILED => Note::Failed { successes: rank },
            SUCCEEDED => Note::Succeeded,
            OPENED => Note::Opened {
                until: until?,
                rank,
            },
            CLOSED => Note::Closed,
            HOLD => Note::Hold { until: until? },
            _ => return None,
        })
    }
}
