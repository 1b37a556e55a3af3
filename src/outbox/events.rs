//! What the outbox's events carry of their own ([`crate::events::Event`]'s `Queued`,
//! `Replayed`, `Delivered` and `DeadLettered`): the entry's id. Without the feature it is
//! uninhabited (`off.rs`), so those variants cannot be made and their arms are gone.

/// The id of an outbox entry (its idempotency key), as an event names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryId<'a>(pub &'a str);

impl<'a> EntryId<'a> {
    /// The id.
    pub fn get(self) -> &'a str {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::Event;
    use crate::vocab::{DeadReason, KeepReason};

    #[test]
    fn kinds_are_the_js_names() {
        let id = EntryId("k");
        for (event, kind) in [
            (
                Event::Queued {
                    id,
                    reason: KeepReason::Network,
                },
                "queued",
            ),
            (Event::Replayed { id, attempt: 2 }, "replayed"),
            (Event::Delivered { id, status: 201 }, "delivered"),
            (
                Event::DeadLettered {
                    id,
                    reason: DeadReason::Status,
                    status: Some(422),
                },
                "deadLettered",
            ),
        ] {
            assert_eq!(event.kind(), kind);
            assert_eq!(id.get(), "k");
        }
    }
}
