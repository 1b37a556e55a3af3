//! The outbox's rules, decided from facts alone (see [`crate::outbox`]).

use super::End;
use crate::vocab::OutcomeKind;
pub use crate::vocab::{DeadReason, KeepReason as Reason};

/// Whether a keyed call that ended so is kept, and why.
pub fn keep(end: End) -> Option<Reason> {
    Some(match end {
        End::Answered(408 | 429 | 500..=599) => Reason::Status,
        End::Answered(_) => return None,
        End::Failed(OutcomeKind::NetworkError) => Reason::Network,
        End::Failed(OutcomeKind::Timeout) => Reason::Timeout,
        End::Failed(_) | End::Aborted => return None,
        End::ShortCircuited => Reason::BreakerOpen,
        End::BulkheadFull => Reason::BulkheadFull,
        End::RateLimited => Reason::RateLimited,
        End::Throttled => Reason::Throttled,
        End::Deadline => Reason::Deadline,
    })
}

/// What a replay's answer does to its entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replay {
    /// Done: the entry leaves the outbox.
    Delivered,
    /// Not yet: the entry stays, and so do the later ones of its origin.
    Wait,
    /// Never: the entry becomes a dead letter.
    Dead,
}

impl Replay {
    /// What a replay that got a response of `status` does (0: an opaque redirect, which is
    /// the server's answer too).
    pub fn of(status: u16) -> Replay {
        match status {
            0..=399 => Replay::Delivered,
            408 | 409 | 429 | 500.. => Replay::Wait,
            _ => Replay::Dead,
        }
    }
}

/// Whether an entry kept at `kept_at` (wall-clock ms) is older than `max_age_ms` at `now`.
pub fn expired(kept_at: f64, now: f64, max_age_ms: u32) -> bool {
    now - kept_at > f64::from(max_age_ms)
}

/// The least time keeping a call may take, in ms, however little its deadline leaves: a
/// call whose attempts took all its time (a timeout at the deadline) can still be kept.
pub const KEEP_MIN_MS: f64 = 1_000.0;

/// When keeping a call that ended at `now` must be done (ms, on the clock of `deadline`,
/// the call's deadline): then, or [`KEEP_MIN_MS`] from now if that is later.
pub fn keep_until(deadline: f64, now: f64) -> f64 {
    deadline.max(now + KEEP_MIN_MS)
}

/// The first wait between replays, in ms.
pub const FIRST_WAIT_MS: f64 = 1_000.0;
/// The longest wait between replays, in ms.
pub const MAX_WAIT_MS: f64 = 300_000.0;

/// The wait before replay round `round` (0 after the first one that left entries waiting),
/// with `random` uniform in `[0, 1)`: half the window plus up to half again.
pub fn next_flush_ms(round: u32, random: f64) -> f64 {
    use crate::backoff::{Jitter, delay};
    delay(
        Jitter::Equal,
        round,
        FIRST_WAIT_MS,
        MAX_WAIT_MS,
        0.0,
        random,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn keeps_what_had_no_definite_answer() {
        for status in [408, 429, 500, 502, 503, 504, 599] {
            assert_eq!(
                keep(End::Answered(status)),
                Some(Reason::Status),
                "{status}"
            );
        }
        for status in [200, 201, 204, 301, 400, 401, 404, 409, 422, 600] {
            assert_eq!(keep(End::Answered(status)), None, "{status}");
        }
        assert_eq!(
            keep(End::Failed(OutcomeKind::NetworkError)),
            Some(Reason::Network)
        );
        assert_eq!(
            keep(End::Failed(OutcomeKind::Timeout)),
            Some(Reason::Timeout)
        );
        for kind in [
            OutcomeKind::Aborted,
            OutcomeKind::InvalidRequest,
            OutcomeKind::InvalidResponse,
        ] {
            assert_eq!(keep(End::Failed(kind)), None, "{kind:?}");
        }
        assert_eq!(keep(End::Aborted), None);
        assert_eq!(keep(End::ShortCircuited), Some(Reason::BreakerOpen));
        assert_eq!(keep(End::BulkheadFull), Some(Reason::BulkheadFull));
        assert_eq!(keep(End::RateLimited), Some(Reason::RateLimited));
        assert_eq!(keep(End::Throttled), Some(Reason::Throttled));
        assert_eq!(keep(End::Deadline), Some(Reason::Deadline));
    }

    #[test]
    fn reason_names_follow_the_variants() {
        assert_eq!(Reason::Network.as_str(), "network");
        assert_eq!(Reason::BreakerOpen.as_str(), "breakerOpen");
        assert_eq!(Reason::Deadline.as_str(), "deadline");
    }

    #[test]
    fn a_replay_answer_delivers_waits_or_dead_letters() {
        for status in [0, 200, 201, 204, 302, 304] {
            assert_eq!(Replay::of(status), Replay::Delivered, "{status}");
        }
        for status in [408, 409, 429, 500, 503] {
            assert_eq!(Replay::of(status), Replay::Wait, "{status}");
        }
        for status in [400, 401, 403, 404, 410, 413, 422] {
            assert_eq!(Replay::of(status), Replay::Dead, "{status}");
        }
    }

    #[test]
    fn an_entry_expires_after_max_age() {
        assert!(!expired(1_000.0, 1_000.0 + 86_400_000.0, 86_400_000));
        assert!(expired(1_000.0, 1_001.0 + 86_400_000.0, 86_400_000));
    }

    #[test]
    fn keeping_ends_at_the_deadline_or_a_second_after_the_call() {
        assert_eq!(keep_until(5_000.0, 100.0), 5_000.0);
        assert_eq!(keep_until(5_000.0, 4_500.0), 5_500.0);
        assert_eq!(keep_until(5_000.0, 5_000.0), 6_000.0);
        assert_eq!(keep_until(5_000.0, 7_000.0), 8_000.0);
    }

    proptest! {
        #[test]
        fn waits_grow_within_bounds(round in 0u32..64, random in 0.0f64..1.0) {
            let ms = next_flush_ms(round, random);
            let window = crate::backoff::window(round, FIRST_WAIT_MS, MAX_WAIT_MS);
            prop_assert!(ms >= window / 2.0 && ms <= window);
            prop_assert!((FIRST_WAIT_MS / 2.0..=MAX_WAIT_MS).contains(&ms));
        }
    }
}
