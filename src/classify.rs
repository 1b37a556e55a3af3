//! Classification: what one attempt's outcome means for the breaker and for retrying.

use crate::policy::RetryPolicy;
use crate::vocab::{GiveUpReason, OutcomeKind, RetryReason};
pub use crate::vocab::{Judgement, Verdict};

/// How one attempt ended, as the transport reports it.
#[derive(Clone, Debug, PartialEq)]
pub enum AttemptOutcome {
    /// A response arrived.
    Response {
        /// Its status.
        status: u16,
        /// Its `Retry-After` header, if any.
        retry_after: Option<String>,
        /// What its rate-limit headers say of the origin's quota, if anything.
        quota: Option<crate::pacing::Quota>,
    },
    /// The request failed without a response.
    NetworkError,
    /// The attempt ran out of time.
    Timeout,
    /// The caller aborted it.
    Aborted,
    /// The call's own arguments or setup are at fault, not the origin: `fetch` refused
    /// them, threw, or the call sends through itself. Neither retried nor held against
    /// the breaker; the call rejects with that error.
    InvalidRequest,
    /// `fetch` resolved with something that is not a `Response` (a mock or polyfill): the
    /// caller's setup is at fault. Neither retried nor held against the breaker.
    InvalidResponse,
}

impl AttemptOutcome {
    /// The outcome without its data.
    pub fn kind(&self) -> OutcomeKind {
        match self {
            AttemptOutcome::Response { .. } => OutcomeKind::Response,
            AttemptOutcome::NetworkError => OutcomeKind::NetworkError,
            AttemptOutcome::Timeout => OutcomeKind::Timeout,
            AttemptOutcome::Aborted => OutcomeKind::Aborted,
            AttemptOutcome::InvalidRequest => OutcomeKind::InvalidRequest,
            AttemptOutcome::InvalidResponse => OutcomeKind::InvalidResponse,
        }
    }

    /// The response status, if there was a response.
    pub fn status(&self) -> Option<u16> {
        match self {
            AttemptOutcome::Response { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// Whether the attempt ended for a reason of the caller's (an abort, bad arguments or a
    /// bad `fetch`): no verdict on the origin, no retry.
    pub fn is_local(&self) -> bool {
        matches!(
            self,
            AttemptOutcome::Aborted
                | AttemptOutcome::InvalidRequest
                | AttemptOutcome::InvalidResponse
        )
    }
}

/// What the breaker counts an outcome as (see [`Judgement`]).
pub fn judge(outcome: &AttemptOutcome) -> Judgement {
    match outcome {
        AttemptOutcome::Response {
            status: 408 | 429 | 500..,
            ..
        }
        | AttemptOutcome::NetworkError
        | AttemptOutcome::Timeout => Judgement::Failure,
        AttemptOutcome::Response { .. } => Judgement::Success,
        AttemptOutcome::Aborted
        | AttemptOutcome::InvalidRequest
        | AttemptOutcome::InvalidResponse => Judgement::Unjudged,
    }
}

/// Classifies one outcome. `retry` is the retry policy (`None`: retries off); `safe` says
/// whether repeating the request is safe (idempotent method or key, and a replayable body).
/// Network errors and timeouts are always worth retrying; responses when their status is
/// in `retry_on`.
pub fn classify(outcome: &AttemptOutcome, retry: Option<&RetryPolicy>, safe: bool) -> Verdict {
    let reason = match outcome {
        AttemptOutcome::Aborted
        | AttemptOutcome::InvalidRequest
        | AttemptOutcome::InvalidResponse => return Verdict::Aborted,
        AttemptOutcome::NetworkError => RetryReason::Network,
        AttemptOutcome::Timeout => RetryReason::Timeout,
        AttemptOutcome::Response { status, .. } => {
            if retry.is_some_and(|r| r.retry_on.contains(status)) {
                RetryReason::Status
            } else if judge(outcome) == Judgement::Failure {
                return Verdict::GiveUp(GiveUpReason::NotRetryable);
            } else {
                return Verdict::Success;
            }
        }
    };
    if retry.is_none() {
        Verdict::GiveUp(GiveUpReason::NotRetryable)
    } else if !safe {
        Verdict::GiveUp(GiveUpReason::UnsafeMethod)
    } else {
        Verdict::Retry(reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(status: u16) -> AttemptOutcome {
        AttemptOutcome::Response {
            status,
            retry_after: None,
            quota: None,
        }
    }

    #[test]
    fn breaker_failures() {
        for s in [408, 429, 500, 503, 599, 600, 999] {
            assert_eq!(judge(&status(s)), Judgement::Failure, "{s}");
        }
        for s in [100, 200, 204, 301, 400, 404, 409, 499] {
            assert_eq!(judge(&status(s)), Judgement::Success, "{s}");
        }
        assert_eq!(judge(&AttemptOutcome::NetworkError), Judgement::Failure);
        assert_eq!(judge(&AttemptOutcome::Timeout), Judgement::Failure);
        assert_eq!(judge(&AttemptOutcome::Aborted), Judgement::Unjudged);
    }

    #[test]
    fn listed_statuses_network_errors_and_timeouts_are_retried_when_safe() {
        let r = RetryPolicy::default();
        assert_eq!(
            classify(&status(503), Some(&r), true),
            Verdict::Retry(RetryReason::Status)
        );
        assert_eq!(
            classify(&status(429), Some(&r), true),
            Verdict::Retry(RetryReason::Status)
        );
        assert_eq!(
            classify(&AttemptOutcome::NetworkError, Some(&r), true),
            Verdict::Retry(RetryReason::Network)
        );
        assert_eq!(
            classify(&AttemptOutcome::Timeout, Some(&r), true),
            Verdict::Retry(RetryReason::Timeout)
        );
    }

    #[test]
    fn unlisted_failures_are_not_retried_and_other_answers_succeed() {
        let r = RetryPolicy::default();
        assert_eq!(
            classify(&status(501), Some(&r), true),
            Verdict::GiveUp(GiveUpReason::NotRetryable)
        );
        assert_eq!(classify(&status(200), Some(&r), true), Verdict::Success);
        assert_eq!(classify(&status(404), Some(&r), true), Verdict::Success);
        let only_404 = RetryPolicy {
            retry_on: vec![404],
            ..RetryPolicy::default()
        };
        assert_eq!(
            classify(&status(404), Some(&only_404), true),
            Verdict::Retry(RetryReason::Status)
        );
        assert_eq!(
            classify(&status(503), Some(&only_404), true),
            Verdict::GiveUp(GiveUpReason::NotRetryable)
        );
    }

    #[test]
    fn unsafe_requests_are_not_retried() {
        let r = RetryPolicy::default();
        assert_eq!(
            classify(&status(503), Some(&r), false),
            Verdict::GiveUp(GiveUpReason::UnsafeMethod)
        );
        assert_eq!(
            classify(&AttemptOutcome::Timeout, Some(&r), false),
            Verdict::GiveUp(GiveUpReason::UnsafeMethod)
        );
        assert_eq!(classify(&status(200), Some(&r), false), Verdict::Success);
    }

    #[test]
    fn without_retry_policy_nothing_is_retried() {
        assert_eq!(
            classify(&status(503), None, true),
            Verdict::GiveUp(GiveUpReason::NotRetryable)
        );
        assert_eq!(
            classify(&AttemptOutcome::NetworkError, None, true),
            Verdict::GiveUp(GiveUpReason::NotRetryable)
        );
        assert_eq!(classify(&status(200), None, true), Verdict::Success);
    }

    #[test]
    fn aborts_are_never_retried() {
        let r = RetryPolicy::default();
        assert_eq!(
            classify(&AttemptOutcome::Aborted, Some(&r), true),
            Verdict::Aborted
        );
    }

    #[test]
    fn outcome_kind_and_status() {
        assert_eq!(status(503).kind(), OutcomeKind::Response);
        assert_eq!(status(503).status(), Some(503));
        assert_eq!(AttemptOutcome::Timeout.status(), None);
        assert_eq!(
            AttemptOutcome::NetworkError.kind(),
            OutcomeKind::NetworkError
        );
    }
}
