//! The outbox's events for `onEvent`: a call kept, and what became of its request later. Each
//! is the payload of its own variant of [`crate::events::Event`] (`Queued`, `Replayed`,
//! `Delivered`, `DeadLettered`); without the feature the payloads are uninhabited (`off.rs`).

use crate::vocab::{DeadReason, KeepReason};

/// The call got no definite answer: its request is kept in the outbox.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Queued<'a> {
    /// The entry's id.
    pub id: &'a str,
    /// Why it was kept.
    pub reason: KeepReason,
}

/// A kept request is sent again (`attempt`: its attempts so far, this one included).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Replayed<'a> {
    /// The entry's id.
    pub id: &'a str,
    /// Attempts so far, the original call's included.
    pub attempt: u32,
}

/// A kept request got its answer and left the outbox.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Delivered<'a> {
    /// The entry's id.
    pub id: &'a str,
    /// The answer's status.
    pub status: u16,
}

/// A kept request will not be sent again: a final refusal, too old, or unsendable.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeadLettered<'a> {
    /// The entry's id.
    pub id: &'a str,
    /// Why.
    pub reason: DeadReason,
    /// The refusal's status (reason `Status`).
    pub status: Option<u16>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::Event;

    #[test]
    fn kinds_are_the_js_names() {
        let id = "k";
        for (event, kind) in [
            (
                Event::Queued(Queued {
                    id,
                    reason: KeepReason::Network,
                }),
                "queued",
            ),
            (Event::Replayed(Replayed { id, attempt: 2 }), "replayed"),
            (Event::Delivered(Delivered { id, status: 201 }), "delivered"),
            (
                Event::DeadLettered(DeadLettered {
                    id,
                    reason: DeadReason::Status,
                    status: Some(422),
                }),
                "deadLettered",
            ),
        ] {
            assert_eq!(event.kind(), kind);
        }
    }
}
