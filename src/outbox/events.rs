//! The outbox's events for `onEvent` ([`crate::events::Event::Outbox`]): a call kept, and what
//! became of its request later.

use crate::vocab::{DeadReason, KeepReason};

/// What the outbox did: one of the events a kept request goes through.
#[derive(Clone, Debug, PartialEq)]
pub enum OutboxEvent<'a> {
    /// The call got no definite answer: its request is kept in the outbox.
    Queued {
        /// The entry's id.
        id: &'a str,
        /// Why it was kept.
        reason: KeepReason,
    },
    /// A kept request is sent again (`attempt`: its attempts so far, this one included).
    Replayed {
        /// The entry's id.
        id: &'a str,
        /// Attempts so far, the original call's included.
        attempt: u32,
    },
    /// A kept request got its answer and left the outbox.
    Delivered {
        /// The entry's id.
        id: &'a str,
        /// The answer's status.
        status: u16,
    },
    /// A kept request will not be sent again: a final refusal, too old, or unsendable.
    DeadLettered {
        /// The entry's id.
        id: &'a str,
        /// Why.
        reason: DeadReason,
        /// The refusal's status (reason `Status`).
        status: Option<u16>,
    },
}

impl OutboxEvent<'_> {
    /// The event's JS name: `queued`, `replayed`, `delivered` or `deadLettered`.
    pub fn kind(&self) -> &'static str {
        match self {
            OutboxEvent::Queued { .. } => "queued",
            OutboxEvent::Replayed { .. } => "replayed",
            OutboxEvent::Delivered { .. } => "delivered",
            OutboxEvent::DeadLettered { .. } => "deadLettered",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::Event;

    #[test]
    fn kinds_are_the_js_names() {
        for (event, kind) in [
            (
                OutboxEvent::Queued {
                    id: "k",
                    reason: KeepReason::Network,
                },
                "queued",
            ),
            (
                OutboxEvent::Replayed {
                    id: "k",
                    attempt: 2,
                },
                "replayed",
            ),
            (
                OutboxEvent::Delivered {
                    id: "k",
                    status: 201,
                },
                "delivered",
            ),
            (
                OutboxEvent::DeadLettered {
                    id: "k",
                    reason: DeadReason::Status,
                    status: Some(422),
                },
                "deadLettered",
            ),
        ] {
            assert_eq!(Event::Outbox(event).kind(), kind);
        }
    }
}
