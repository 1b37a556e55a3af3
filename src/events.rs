//! Events: what the engine reports while a call runs (the shell hands them to `onEvent`).

use crate::throttle::Probability;
use crate::vocab::{BreakerState, DeadReason, KeepReason, OpenReason};
pub use crate::vocab::{GiveUpReason, OutcomeKind, RetryReason, Why};

/// One thing that happened during a call. Borrowed strings: the shell converts at once.
#[derive(Clone, Debug, PartialEq)]
pub enum Event<'a> {
    /// An attempt is about to be sent.
    AttemptStart {
        /// Attempt number, from 1.
        attempt: u32,
        /// Normalised origin.
        origin: &'a str,
    },
    /// An attempt finished.
    AttemptEnd {
        /// Attempt number, from 1.
        attempt: u32,
        /// Normalised origin it went to.
        origin: &'a str,
        /// How it ended.
        outcome: OutcomeKind,
        /// The response status, when there was a response.
        status: Option<u16>,
        /// How long it took, in ms.
        duration_ms: f64,
    },
    /// A retry is scheduled.
    Retry {
        /// Number of the attempt about to start.
        attempt: u32,
        /// Normalised origin it goes to (with failover, maybe not the last one's).
        origin: &'a str,
        /// The wait before it, in ms.
        delay_ms: f64,
        /// What made the last attempt worth retrying.
        reason: RetryReason,
        /// Whether the wait came from a `Retry-After` header.
        retry_after: bool,
    },
    /// The call ends with a failure it will not retry.
    GiveUp {
        /// Why it stops.
        reason: GiveUpReason,
        /// Attempts made.
        attempts: u32,
    },
    /// An attempt failed while the runtime was offline: the call waits for the network (at
    /// most until its deadline) before attempt `attempt`, and nothing is held against the
    /// origin.
    Offline {
        /// The attempt that will go once the network is back.
        attempt: u32,
    },
    /// An origin's breaker changed state.
    BreakerTransition {
        /// Normalised origin.
        origin: &'a str,
        /// State before.
        from: BreakerState,
        /// State after.
        to: BreakerState,
        /// Why it opened (None unless `to` is open).
        reason: Option<OpenReason>,
    },
    /// The breaker refused an attempt.
    ShortCircuit {
        /// Normalised origin.
        origin: &'a str,
        /// When the breaker may let a call through, in ms from now.
        retry_after_ms: f64,
    },
    /// The bulkhead was full and its queue too.
    BulkheadRejected {
        /// Normalised origin.
        origin: &'a str,
    },
    /// The body of the response a call resolved with was cut off: no chunk for
    /// `bodyTimeoutMs`, or the call's deadline came while a read waited for one.
    BodyTimeout {
        /// The limit that ran out, in ms.
        timeout_ms: f64,
        /// Whether it was the call's deadline (`totalTimeoutMs`), not `bodyTimeoutMs`.
        deadline: bool,
    },
    /// A hedge is sent: its attempt goes beside those still in flight, after the hedge delay
    /// without an answer ([`crate::hedge::Sent`]; none without `hedge`).
    Hedge(crate::hedge::Sent),
    /// The call ends with an answer not worth retrying that is not a failure (e.g. 200, 404).
    Success {
        /// Attempts made.
        attempts: u32,
    },
    /// The call got no definite answer: its request is kept in the outbox (the outbox's
    /// events: none in a build without `outbox`, where an `EntryId` cannot be made).
    Queued {
        /// The entry's id.
        id: crate::outbox::EntryId<'a>,
        /// Why it was kept.
        reason: KeepReason,
    },
    /// A kept request is sent again (`attempt`: its attempts so far, this one included).
    Replayed {
        /// The entry's id.
        id: crate::outbox::EntryId<'a>,
        /// Attempts so far, the original call's included.
        attempt: u32,
    },
    /// A kept request got its answer and left the outbox.
    Delivered {
        /// The entry's id.
        id: crate::outbox::EntryId<'a>,
        /// The answer's status.
        status: u16,
    },
    /// A kept request will not be sent again: a final refusal, too old, or unsendable.
    DeadLettered {
        /// The entry's id.
        id: crate::outbox::EntryId<'a>,
        /// Why.
        reason: DeadReason,
        /// The refusal's status (reason `Status`).
        status: Option<u16>,
    },
    // The capabilities' that a build may lack, last: the lean build, where they cannot be
    // made, numbers the others as it would without them (its tables keep their size).
    /// A call waits for its origin before sending: its quota is spent until the window
    /// resets, or a `Retry-After` on a 429 or 503 holds it. (None without pacing: its
    /// [`crate::pacing::Why`] cannot be made.)
    RateLimitWait {
        /// Normalised origin.
        origin: &'a str,
        /// The wait, in ms.
        wait_ms: f64,
        /// Why.
        reason: crate::pacing::Why,
    },
    /// A call is rejected without sending: its origin's wait is longer than
    /// `rateLimit.maxWaitMs` or than the call's deadline allows. (None without pacing.)
    RateLimitRejected {
        /// Normalised origin.
        origin: &'a str,
        /// When the origin may be sent to again, in ms from now.
        retry_after_ms: f64,
        /// Why it must wait.
        reason: crate::pacing::Why,
    },
    /// Adaptive throttling refused an attempt locally. (None without `throttle`: its
    /// probability is uninhabited there.)
    Throttled {
        /// Normalised origin.
        origin: &'a str,
        /// The probability of refusal it was drawn against.
        probability: Probability,
    },
    /// A kept answer is served instead of the call's failure ([`crate::stale::Told`]; none
    /// without `stale`).
    Stale(crate::stale::Told),
}

impl<'a> Event<'a> {
    /// The origin the event is about, when it is about one: the attempt's (with failover not
    /// always the call's own), the breaker's, the bulkhead's. `None` for what concerns the
    /// whole call (`giveUp`, `success`, `offline`, `bodyTimeout`, `hedge`, the outbox's).
    pub fn origin(&self) -> Option<&'a str> {
        match *self {
            Event::AttemptStart { origin, .. }
            | Event::AttemptEnd { origin, .. }
            | Event::Retry { origin, .. }
            | Event::BreakerTransition { origin, .. }
            | Event::ShortCircuit { origin, .. }
            | Event::BulkheadRejected { origin }
            | Event::RateLimitWait { origin, .. }
            | Event::RateLimitRejected { origin, .. }
            | Event::Throttled { origin, .. } => Some(origin),
            _ => None,
        }
    }
}

impl Event<'_> {
    /// The event's JS name: `attemptStart`, `attemptEnd`, `retry`, `giveUp`,
    /// `breakerTransition`, `shortCircuit`, `bulkheadRejected`, `rateLimitWait`,
    /// `rateLimitRejected`, `throttled`, `bodyTimeout`, `hedge`, `success`, `queued`,
    /// `replayed`, `delivered`, `deadLettered` or `stale`.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::AttemptStart { .. } => "attemptStart",
            Event::AttemptEnd { .. } => "attemptEnd",
            Event::Retry { .. } => "retry",
            Event::GiveUp { .. } => "giveUp",
            Event::BreakerTransition { .. } => "breakerTransition",
            Event::Offline { .. } => "offline",
            Event::ShortCircuit { .. } => "shortCircuit",
            Event::BulkheadRejected { .. } => "bulkheadRejected",
            Event::RateLimitWait { .. } => "rateLimitWait",
            Event::RateLimitRejected { .. } => "rateLimitRejected",
            Event::BodyTimeout { .. } => "bodyTimeout",
            Event::Hedge(_) => "hedge",
            Event::Success { .. } => "success",
            Event::Queued { .. } => "queued",
            Event::Replayed { .. } => "replayed",
            Event::Delivered { .. } => "delivered",
            Event::DeadLettered { .. } => "deadLettered",
            Event::Throttled { .. } => "throttled",
            Event::Stale(_) => "stale",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_the_js_names() {
        // The capabilities' events are tested in their folders.
        let all = vec![
            (
                Event::AttemptStart {
                    attempt: 1,
                    origin: "o",
                },
                "attemptStart",
            ),
            (
                Event::AttemptEnd {
                    attempt: 1,
                    origin: "o",
                    outcome: OutcomeKind::Timeout,
                    status: None,
                    duration_ms: 1.0,
                },
                "attemptEnd",
            ),
            (
                Event::Retry {
                    attempt: 2,
                    origin: "o",
                    delay_ms: 1.0,
                    reason: RetryReason::Status,
                    retry_after: false,
                },
                "retry",
            ),
            (
                Event::GiveUp {
                    reason: GiveUpReason::Budget,
                    attempts: 1,
                },
                "giveUp",
            ),
            (
                Event::BreakerTransition {
                    origin: "o",
                    from: BreakerState::Closed,
                    to: BreakerState::Open,
                    reason: Some(OpenReason::Failures),
                },
                "breakerTransition",
            ),
            (
                Event::ShortCircuit {
                    origin: "o",
                    retry_after_ms: 1.0,
                },
                "shortCircuit",
            ),
            (Event::BulkheadRejected { origin: "o" }, "bulkheadRejected"),
            (Event::Success { attempts: 1 }, "success"),
        ];
        for (event, kind) in all {
            assert_eq!(event.kind(), kind);
        }
    }

    #[test]
    fn reason_names() {
        let give_ups = [
            (GiveUpReason::MaxAttempts, "maxAttempts"),
            (GiveUpReason::Budget, "budget"),
            (GiveUpReason::Deadline, "deadline"),
            (GiveUpReason::NotRetryable, "notRetryable"),
            (GiveUpReason::UnsafeMethod, "unsafeMethod"),
            (GiveUpReason::RetryAfterTooLong, "retryAfterTooLong"),
            (GiveUpReason::BreakerOpen, "breakerOpen"),
            (GiveUpReason::ShouldRetry, "shouldRetry"),
            (GiveUpReason::RateLimit, "rateLimit"),
            (GiveUpReason::Throttled, "throttled"),
        ];
        for (reason, name) in give_ups {
            assert_eq!(reason.as_str(), name);
        }
        assert_eq!(RetryReason::Status.as_str(), "status");
        assert_eq!(RetryReason::Network.as_str(), "network");
        assert_eq!(RetryReason::Timeout.as_str(), "timeout");
        assert_eq!(RetryReason::ShouldRetry.as_str(), "shouldRetry");
        assert_eq!(OutcomeKind::Response.as_str(), "response");
        assert_eq!(OutcomeKind::NetworkError.as_str(), "networkError");
        assert_eq!(OutcomeKind::Timeout.as_str(), "timeout");
        assert_eq!(OutcomeKind::Aborted.as_str(), "aborted");
    }
}
