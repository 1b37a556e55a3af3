//! What sharing adds to an origin's state: a peer's note heard, and what a client that
//! starts is told.

use super::Note;
use crate::origin::OriginState;
use crate::policy::Policy;
use crate::vocab::Transition;

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
