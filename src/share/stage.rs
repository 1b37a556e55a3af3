//! What sharing adds to a client's origins: the way to its peers a registry holds
//! ([`Share`]), a peer's note heard by the registry and by one origin, what a client that
//! starts is told, and the notes an attempt's end has for the peers. Compiled in both
//! builds: without `share`, [`Share`] and [`Note`] are uninhabited, so a registry never
//! shares and this code is typed, compiled and gone.

use super::Note;
use crate::origin::{Notes, OriginState};
use crate::policy::Policy;
use crate::registry::Registry;
use crate::vocab::{Judgement, Transition};

/// Sends a note about an origin to a client's peers.
#[cfg(feature = "share")]
pub type SendNote = Box<dyn FnMut(&str, Note)>;

/// A sharing client's way to its peers.
#[cfg(feature = "share")]
pub struct Share {
    /// This client's rank among leaders (random).
    pub rank: u32,
    /// Sends a note about an origin to the peers.
    pub send: SendNote,
}

/// A sharing client's way to its peers: none without `share`.
#[cfg(not(feature = "share"))]
#[derive(Debug)]
pub enum Share {}

#[cfg(feature = "share")]
impl std::fmt::Debug for Share {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Share").field("rank", &self.rank).finish()
    }
}

impl Share {
    /// This client's rank among leaders.
    #[inline(always)]
    pub fn rank(&self) -> u32 {
        #[cfg(feature = "share")]
        return self.rank;
        #[cfg(not(feature = "share"))]
        match *self {}
    }

    /// Sends `notes` about `origin` to the peers.
    #[inline(never)]
    pub fn tell(&mut self, origin: &str, notes: Notes) {
        #[cfg(feature = "share")]
        for note in notes.into_iter().flatten() {
            (self.send)(origin, note);
        }
        #[cfg(not(feature = "share"))]
        {
            let _ = (notes, origin);
            match *self {}
        }
    }
}

impl Registry {
    /// A peer's note about `origin` (`Hello`: about none), applied under `policy`; a
    /// `Hello` is answered with what every origin kept holds now. Returns the breaker
    /// transition it caused.
    pub fn hear(
        &mut self,
        origin: &str,
        note: Note,
        now: f64,
        policy: &Policy,
    ) -> Option<Transition> {
        #[cfg(not(feature = "share"))]
        match (note, origin, now, policy) {}
        #[cfg(feature = "share")]
        {
            let rank = self.rank()?;
            if note == Note::Hello {
                self.tell_each(|s| s.describe(now, rank));
                return None;
            }
            let transition = self.with(origin, |_, s| s.hear(note, now, policy, rank));
            // Tripped by peers' answers: it leads, and says so (a follower says nothing).
            if let (Note::Failed { .. }, Some(_)) = (note, transition)
                && let Some((until, rank)) = self.peek(origin).and_then(|s| s.breaker.shared(rank))
            {
                self.tell(origin, [Some(Note::Opened { until, rank }), None]);
            }
            transition
        }
    }
}

/// What the peers knew of an origin before an attempt's end (only a sharing client, `rank`,
/// tells them): whether its breaker was failing and whether it was held.
#[inline(always)]
pub fn before(state: &OriginState, rank: Option<u32>, now: f64) -> Option<(bool, bool)> {
    rank.map(|_| (state.breaker.is_failing(), state.pacer.wait(now).is_some()))
}

/// The notes an attempt's end (`judgement`, the breaker's `transition`) has for the peers,
/// from what they knew `before` it.
#[inline(always)]
pub fn notes(
    state: &mut OriginState,
    before: Option<(bool, bool)>,
    judgement: Judgement,
    transition: Option<Transition>,
    now: f64,
    rank: Option<u32>,
) -> Notes {
    match (rank, before) {
        (Some(rank), Some(before)) => {
            let parts = (&state.breaker, &state.pacer, &mut state.untold);
            super::told(parts, before, judgement, transition, now, rank)
        }
        _ => [None, None],
    }
}

impl OriginState {
    /// A peer's note about this origin, applied under `policy` (this client's); `rank` is this
    /// client's. Returns the breaker transition it caused.
    pub fn hear(&mut self, note: Note, now: f64, policy: &Policy, rank: u32) -> Option<Transition> {
        super::apply(
            (&mut self.breaker, &mut self.pacer),
            note,
            now,
            policy,
            rank,
        )
    }

    /// What a client that starts is told of this origin: its open period, its wait.
    pub fn describe(&self, now: f64, rank: u32) -> [Option<Note>; 2] {
        super::describe(&self.breaker, &self.pacer, now, rank)
    }
}
