//! When a kept answer is served instead of a failure: its age at a given time (RFC 9111
//! §4.2.3), its freshness lifetime (§4.2.1, without heuristics), and its window past it (RFC
//! 5861 §4: the answer's own `stale-if-error=N`, else `stale.maxStaleMs`, never more than
//! `stale.capMs`).
//!
//! Times are Unix milliseconds from the shell's clock (`Date.now()`: ages compare with the
//! origin's `Date`, a wall clock).

use super::cache_control::{CacheControl, MAX_DELTA_SECONDS, delta_seconds};
use super::keep::{Headers, lines};
use super::section::StalePolicy;

/// How far before the response time a `Date` or `Expires` is read exactly (400 days, past
/// any window `stale.capMs` allows); an earlier one counts as this far back.
const DATE_REACH_MS: f64 = 400.0 * 86_400_000.0;

/// What the rules need to know of a kept answer, beside the answer itself: built again from
/// its headers and the two times whenever it is judged.
#[derive(Clone, Debug, PartialEq)]
pub struct Kept {
    /// When the request that got it was sent (`request_time`).
    pub request_time_ms: f64,
    /// When its headers arrived (`response_time`).
    pub response_time_ms: f64,
    /// Its `Date`, if valid (`date_value`).
    pub date_ms: Option<f64>,
    /// Its `Age` in seconds (`age_value`; 0 when absent or invalid).
    pub age_s: u32,
    /// Its `Expires`, if given (an invalid one is a time in the past, RFC 9111 §5.3).
    pub expires_ms: Option<f64>,
    /// Its `Cache-Control`.
    pub cache_control: CacheControl,
    /// Whether the store that keeps it is shared (`s-maxage` and `proxy-revalidate` apply).
    pub shared: bool,
}

impl Kept {
    /// The facts of an answer with `headers`, sent at `request_time_ms`, its headers in at
    /// `response_time_ms`, kept in a `shared` store or not.
    pub fn new(
        request_time_ms: f64,
        response_time_ms: f64,
        headers: Headers,
        shared: bool,
    ) -> Kept {
        let age_s = lines(headers, "age")
            .next()
            .and_then(delta_seconds)
            .unwrap_or(0);
        let date_ms = lines(headers, "date")
            .next()
            .and_then(|d| http_date(d, response_time_ms));
        let expires_ms = lines(headers, "expires")
            .next()
            .map(|e| http_date(e, response_time_ms).unwrap_or(f64::NEG_INFINITY));
        Kept {
            request_time_ms,
            response_time_ms,
            date_ms,
            age_s,
            expires_ms,
            cache_control: CacheControl::parse(lines(headers, "cache-control")),
            shared,
        }
    }

    /// Its age at `now_ms`, in ms (RFC 9111 §4.2.3): the larger of what its `Date` and its
    /// `Age` say it was when it arrived, plus the time it took to arrive and the time since.
    pub fn age_ms(&self, now_ms: f64) -> f64 {
        let apparent = self
            .date_ms
            .map_or(0.0, |date| (self.response_time_ms - date).max(0.0));
        let delay = (self.response_time_ms - self.request_time_ms).max(0.0);
        let corrected_age = f64::from(self.age_s) * 1000.0 + delay;
        let resident = (now_ms - self.response_time_ms).max(0.0);
        apparent.max(corrected_age) + resident
    }

    /// How long it is fresh, in ms (RFC 9111 §4.2.1): `s-maxage` in a shared store, else
    /// `max-age`, else `Expires` less `Date`, else 0 (no heuristic: a fallback judges
    /// staleness by what the origin said).
    pub fn lifetime_ms(&self) -> f64 {
        let cc = &self.cache_control;
        let seconds = cc.s_maxage.filter(|_| self.shared).or(cc.max_age);
        if let Some(s) = seconds {
            return f64::from(s) * 1000.0;
        }
        match self.expires_ms {
            Some(expires) => (expires - self.date_ms.unwrap_or(self.response_time_ms)).max(0.0),
            None => 0.0,
        }
    }

    /// Whether, once stale, it may not be served without asking the origin.
    fn must_revalidate(&self) -> bool {
        let cc = &self.cache_control;
        cc.must_revalidate || (self.shared && (cc.proxy_revalidate || cc.s_maxage.is_some()))
    }
}

/// An `http_date` as Unix ms, read exactly back to [`DATE_REACH_MS`] before `around_ms`;
/// `None` when it is not an HTTP date.
fn http_date(value: &str, around_ms: f64) -> Option<f64> {
    let value = value.trim_ascii();
    // `Retry-After`'s reader also takes delta-seconds; a date is never only digits.
    if value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let anchor = around_ms - DATE_REACH_MS;
    crate::retry_after::parse(value, anchor).map(|wait| anchor + wait)
}

/// Why a call failed, as the fallback sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The request could not be sent or its answer not read (DNS, refused, reset).
    Network,
    /// An attempt ran out of time.
    Timeout,
    /// The origin's breaker is open: nothing was sent.
    BreakerOpen,
    /// Adaptive throttling refused the call: nothing was sent.
    Throttled,
    /// The origin's rate limit holds the call past its wait: nothing was sent.
    RateLimited,
    /// The retry budget is spent.
    BudgetSpent,
    /// The call's deadline (`totalTimeoutMs`) passed.
    Deadline,
    /// The last attempt's status, retryable, after the call's retries.
    Status(u16),
}

impl Failure {
    /// Its JS name, as the `stale` event and the marker header give it: `networkError`,
    /// `timeout`, `breakerOpen`, `throttled`, `rateLimit`, `budget`, `deadline` or `status`.
    pub fn as_str(self) -> &'static str {
        match self {
            Failure::Network => "networkError",
            Failure::Timeout => "timeout",
            Failure::BreakerOpen => "breakerOpen",
            Failure::Throttled => "throttled",
            Failure::RateLimited => "rateLimit",
            Failure::BudgetSpent => "budget",
            Failure::Deadline => "deadline",
            Failure::Status(_) => "status",
        }
    }

    /// Whether the call failed before anything was sent (so the kept answer is served without
    /// sending).
    pub fn before_sending(self) -> bool {
        matches!(
            self,
            Failure::BreakerOpen | Failure::Throttled | Failure::RateLimited
        )
    }
}

/// A kept answer that may be served.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Served {
    /// The `Age` header to send with it, in seconds (RFC 9111 §5.1: at most 2^31).
    pub age_s: u32,
    /// How far past its freshness lifetime it is, in ms (0 when still fresh).
    pub stale_ms: f64,
}

/// A kept answer served instead of a failure, as the `stale` event tells it
/// (`Event::Stale`; none without `stale`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Told {
    /// Its age when served, in ms.
    pub age_ms: f64,
    /// The failure it stands in for.
    pub reason: Failure,
}

impl Told {
    /// Its age in ms, and the failure's JS name.
    pub fn parts(&self) -> (f64, &'static str) {
        (self.age_ms, self.reason.as_str())
    }
}

/// Why a kept answer may not be served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// The status is not a failure (below 400, or not a status).
    NotAFailure,
    /// The answer says `no-cache`, or it is stale and says `must-revalidate` (in a shared
    /// store also `proxy-revalidate` or `s-maxage`): RFC 9111 §4.2.4 forbids serving it.
    Revalidate,
    /// The request says `no-cache`: the caller wants an answer from the origin.
    Asked,
    /// It is staler than its window.
    TooStale,
}

/// Whether `kept` may be served at `now_ms` for `failure`, under `policy`, to a request whose
/// `Cache-Control` is `asked` (its `stale-if-error=N` narrows the window, never widens it);
/// and if so, the `Age` to send.
pub fn servable(
    kept: &Kept,
    now_ms: f64,
    failure: Failure,
    policy: &StalePolicy,
    asked: &CacheControl,
) -> Result<Served, Refused> {
    if !now_ms.is_finite() {
        // A broken clock cannot show an answer is within its window.
        return Err(Refused::TooStale);
    }
    if let Failure::Status(status) = failure
        && !(400..=599).contains(&status)
    {
        return Err(Refused::NotAFailure);
    }
    if asked.no_cache {
        return Err(Refused::Asked);
    }
    if kept.cache_control.no_cache || kept.cache_control.no_store {
        return Err(Refused::Revalidate);
    }
    let age_ms = kept.age_ms(now_ms);
    let stale_ms = (age_ms - kept.lifetime_ms()).max(0.0);
    if stale_ms > 0.0 && kept.must_revalidate() {
        return Err(Refused::Revalidate);
    }
    if stale_ms > window_ms(kept, policy, asked) {
        return Err(Refused::TooStale);
    }
    let age_s = (age_ms / 1000.0).floor().min(f64::from(MAX_DELTA_SECONDS));
    Ok(Served {
        age_s: age_s as u32,
        stale_ms,
    })
}

/// How far past its lifetime `kept` may be served, in ms: its own `stale-if-error`, else
/// `stale.maxStaleMs`; at most `stale.capMs` and the request's `stale-if-error`.
pub fn window_ms(kept: &Kept, policy: &StalePolicy, asked: &CacheControl) -> f64 {
    let own = kept
        .cache_control
        .stale_if_error
        .map_or(f64::from(policy.max_stale_ms), |s| f64::from(s) * 1000.0);
    let window = own.min(f64::from(policy.cap_ms));
    match asked.stale_if_error {
        Some(s) => window.min(f64::from(s) * 1000.0),
        None => window,
    }
}
