//! The words the crate's modules share: how an attempt ended, what it says about its origin,
//! why a call retries, gives up, waits or is kept, the breaker's states, and the method rules.
//!
//! A leaf: it imports nothing of the crate, so every module may import it. A word that lives
//! in the module that produces it makes the modules that read it import each other in circles.

/// How an attempt ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutcomeKind {
    /// A response arrived (any status).
    Response,
    /// The request failed without a response.
    NetworkError,
    /// The attempt ran out of time.
    Timeout,
    /// The caller aborted it.
    Aborted,
    /// `fetch` refused the call's arguments, threw, or the call sent through itself.
    InvalidRequest,
    /// `fetch` resolved with something that is not a `Response`.
    InvalidResponse,
}

impl OutcomeKind {
    /// JS name: `response`, `networkError`, `timeout`, `aborted`, `invalidRequest` or
    /// `invalidResponse`.
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeKind::Response => "response",
            OutcomeKind::NetworkError => "networkError",
            OutcomeKind::Timeout => "timeout",
            OutcomeKind::Aborted => "aborted",
            OutcomeKind::InvalidRequest => "invalidRequest",
            OutcomeKind::InvalidResponse => "invalidResponse",
        }
    }
}

/// What made an attempt worth retrying.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryReason {
    /// A status listed in `retry.retryOn`.
    Status,
    /// A network error.
    Network,
    /// A timeout.
    Timeout,
    /// The caller's `retry.shouldRetry` asked for it.
    ShouldRetry,
}

impl RetryReason {
    /// JS name: `status`, `network`, `timeout` or `shouldRetry`.
    pub fn as_str(self) -> &'static str {
        match self {
            RetryReason::Status => "status",
            RetryReason::Network => "network",
            RetryReason::Timeout => "timeout",
            RetryReason::ShouldRetry => "shouldRetry",
        }
    }
}

/// Why a failing call stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GiveUpReason {
    /// No attempts left.
    MaxAttempts,
    /// The retry budget has no tokens for another retry.
    Budget,
    /// The wait would not end before the total deadline.
    Deadline,
    /// The failure is not one the policy retries.
    NotRetryable,
    /// Repeating the request is not safe (method without key, or body not replayable).
    UnsafeMethod,
    /// `Retry-After` asks for longer than `maxRetryAfterMs` or than the deadline allows.
    RetryAfterTooLong,
    /// The breaker refused the retry.
    BreakerOpen,
    /// The caller's `retry.shouldRetry` said not to retry, or threw.
    ShouldRetry,
    /// The origin's rate-limit wait is longer than `rateLimit.maxWaitMs` or the deadline.
    RateLimit,
    /// Adaptive throttling refused the retry.
    Throttled,
}

impl GiveUpReason {
    /// JS name: `maxAttempts`, `budget`, `deadline`, `notRetryable`, `unsafeMethod`,
    /// `retryAfterTooLong`, `breakerOpen`, `shouldRetry`, `rateLimit` or `throttled`.
    pub fn as_str(self) -> &'static str {
        match self {
            GiveUpReason::MaxAttempts => "maxAttempts",
            GiveUpReason::Budget => "budget",
            GiveUpReason::Deadline => "deadline",
            GiveUpReason::NotRetryable => "notRetryable",
            GiveUpReason::UnsafeMethod => "unsafeMethod",
            GiveUpReason::RetryAfterTooLong => "retryAfterTooLong",
            GiveUpReason::BreakerOpen => "breakerOpen",
            GiveUpReason::ShouldRetry => "shouldRetry",
            GiveUpReason::RateLimit => "rateLimit",
            GiveUpReason::Throttled => "throttled",
        }
    }
}

/// What one attempt says about its origin, as the breaker and the stats count it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Judgement {
    /// The origin failed (network error, timeout, 408, 429, status 500 and above).
    Failure,
    /// The origin answered (any other status).
    Success,
    /// Nothing about the origin: the caller's doing (an abort, bad arguments, a bad
    /// `fetch`), or an attempt cut short by the call's own deadline.
    #[default]
    Unjudged,
}

/// What to do after one attempt, before attempts, budget and deadline are considered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Done: an answer not worth retrying that is not a failure (e.g. 200, 404).
    Success,
    /// Worth retrying, for this reason.
    Retry(RetryReason),
    /// A failure that will not be retried, for this reason.
    GiveUp(GiveUpReason),
    /// The caller aborted, or its own setup failed the attempt: stop, without retrying.
    Aborted,
}

/// A breaker's state as callers see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BreakerState {
    /// Calls go through.
    Closed,
    /// Calls are rejected.
    Open,
    /// Trial calls go through.
    HalfOpen,
}

impl BreakerState {
    /// JS name: `closed`, `open` or `half-open`.
    pub fn as_str(self) -> &'static str {
        match self {
            BreakerState::Closed => "closed",
            BreakerState::Open => "open",
            BreakerState::HalfOpen => "half-open",
        }
    }
}

/// A change of state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transition {
    /// State before.
    pub from: BreakerState,
    /// State after.
    pub to: BreakerState,
    /// Why it opened (None unless `to` is open).
    pub reason: Option<OpenReason>,
}

/// Why a breaker opened: the rule that tripped it, a failed probe, or a peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenReason {
    /// `failureThreshold` failures in a row (the consecutive mode).
    Failures,
    /// The window's failure rate reached `failureRateThreshold`.
    FailureRate,
    /// The window's share of slow calls (longer than `slowCallMs`) reached
    /// `slowCallRateThreshold`.
    SlowCallRate,
    /// A half-open trial call failed (or was slow, with the slow-call rule on).
    Probe,
    /// A peer's breaker of the same origin opened (`share`).
    Peer,
}

impl OpenReason {
    /// The JS names (events, stats), in declaration order.
    pub const NAMES: [&'static str; 5] =
        ["failures", "failureRate", "slowCallRate", "probe", "peer"];

    /// The JS name.
    pub fn as_str(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// Why a call must wait before sending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// The origin's quota is spent until its window resets.
    Quota,
    /// A `Retry-After` on a 429 or 503 holds the origin.
    RetryAfter,
}

impl Why {
    /// The JS name (events, errors).
    pub fn as_str(self) -> &'static str {
        match self {
            Why::Quota => "quota",
            Why::RetryAfter => "retryAfter",
        }
    }
}

/// Why the outbox kept a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeepReason {
    /// The last attempt failed without a response.
    Network,
    /// The last attempt ran out of time.
    Timeout,
    /// The last answer was a transient status (408, 429, 5xx).
    Status,
    /// The origin's breaker was open: nothing was sent.
    BreakerOpen,
    /// The origin's bulkhead was full: nothing was sent.
    BulkheadFull,
    /// The origin's rate limit asked for a longer wait than the call could take.
    RateLimited,
    /// Adaptive throttling refused the call.
    Throttled,
    /// The call's deadline ran out before an attempt could start.
    Deadline,
}

impl KeepReason {
    /// The JS names, in the order of the variants.
    pub const NAMES: [&'static str; 8] = [
        "network",
        "timeout",
        "status",
        "breakerOpen",
        "bulkheadFull",
        "rateLimited",
        "throttled",
        "deadline",
    ];

    /// The JS name.
    pub fn as_str(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

/// Why an outbox entry will not be sent again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeadReason {
    /// The server refused it (a 4xx but 408, 409 and 429).
    Status,
    /// It is older than `maxAgeMs`.
    Expired,
    /// Its stored request cannot be sent (it no longer makes a `Request`, or `onReplay`
    /// returned something else).
    Invalid,
}

impl DeadReason {
    /// The JS name: `status`, `expired` or `invalid`.
    pub fn as_str(self) -> &'static str {
        match self {
            DeadReason::Status => "status",
            DeadReason::Expired => "expired",
            DeadReason::Invalid => "invalid",
        }
    }
}

/// An HTTP method, as the crate's rules read it (any case). Every rule about methods is here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Method<'a>(pub &'a str);

impl Method<'_> {
    fn is_one_of(self, methods: &[&str]) -> bool {
        methods.iter().any(|m| m.eq_ignore_ascii_case(self.0))
    }

    /// Whether it may be repeated without changing the result (RFC 9110 §9.2.2): GET, HEAD,
    /// OPTIONS, PUT, DELETE, TRACE.
    pub fn is_idempotent(self) -> bool {
        self.is_one_of(&["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"])
    }

    /// Whether a request may be hedged (without a body): GET, HEAD, OPTIONS, reads whose
    /// duplicate costs the origin nothing but the read.
    pub fn may_hedge(self) -> bool {
        self.is_one_of(&["GET", "HEAD", "OPTIONS"])
    }

    /// Whether identical requests in flight may be sent once (coalescing): GET, HEAD.
    pub fn may_coalesce(self) -> bool {
        self.is_one_of(&["GET", "HEAD"])
    }

    /// Whether it gets an automatic idempotency key: POST, PATCH (neither is idempotent,
    /// and a key is what makes repeating them safe).
    pub fn wants_key(self) -> bool {
        self.is_one_of(&["POST", "PATCH"])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idempotent_methods_in_any_case() {
        for m in ["GET", "get", "Head", "OPTIONS", "put", "DELETE", "trace"] {
            assert!(Method(m).is_idempotent(), "{m}");
        }
        for m in ["POST", "post", "PATCH", "CONNECT", "", "GETX", "PURGE"] {
            assert!(!Method(m).is_idempotent(), "{m}");
        }
    }

    #[test]
    fn the_other_method_rules_ignore_case_too() {
        assert!(Method("options").may_hedge() && Method("get").may_hedge());
        assert!(!Method("PUT").may_hedge() && !Method("POST").may_hedge());
        assert!(Method("head").may_coalesce() && !Method("OPTIONS").may_coalesce());
        assert!(Method("patch").wants_key() && Method("POST").wants_key());
        assert!(!Method("PUT").wants_key() && !Method("GET").wants_key());
    }
}
