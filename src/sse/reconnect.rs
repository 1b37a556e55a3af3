//! When an event stream reconnects, as EventSource does over this package's fetch: which
//! answers open a stream, end it or call for another try; the wait before reconnect k (the
//! policy's full-jitter backoff, the server's `retry` as its base); the `Last-Event-ID` sent;
//! the idle rule. A stream that ends, cleanly or broken, or turns idle, reconnects (as
//! EventSource does); only an answer ends it. Pure functions: time and the random draw come
//! in as parameters.

use super::section::EventsPolicy;
use crate::backoff::{Jitter, delay};
use crate::policy::schema::MAX_MS;

/// What an answer to a (re)connect does to the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// A `200` of `text/event-stream`: the stream is open; read it.
    Open,
    /// A status the policy retries (`retry.retryOn`): reconnect after the backoff.
    Reconnect,
    /// The stream ends, as EventSource's "fail the connection": no reconnect.
    End(Ended),
}

/// Why an event stream ended without reconnecting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// `204 No Content`: the server asks the client to stop.
    NoContent,
    /// A status that is neither `200` nor retried.
    Status(u16),
    /// A `200` whose `Content-Type` is not `text/event-stream`.
    NotEventStream,
    /// `events.maxReconnects` reconnects in a row brought no event.
    Exhausted,
    /// It ended or broke, and the policy says `events: false`: no reconnect.
    Off,
    /// The origin's retry budget has too few tokens for another reconnect (each is paid as a
    /// retry is: a storm of reconnects is bounded as a storm of retries is).
    Budget,
}

impl Ended {
    /// The code for JS.
    pub fn code(self) -> &'static str {
        match self {
            Ended::NoContent => "no-content",
            Ended::Status(_) => "status",
            Ended::NotEventStream => "not-event-stream",
            Ended::Exhausted => "exhausted",
            Ended::Off => "no-reconnect",
            Ended::Budget => "budget",
        }
    }

    /// The sentence the stream's `error` carries.
    pub fn message(self) -> &'static str {
        match self {
            Ended::NoContent => "the event stream ended: the server answered 204 No Content",
            Ended::Status(_) => "the event stream ended: the server answered a status not retried",
            Ended::NotEventStream => {
                "the event stream ended: the response's Content-Type is not text/event-stream"
            }
            Ended::Exhausted => {
                "the event stream ended: events.maxReconnects reconnects in a row brought no event"
            }
            Ended::Off => {
                "the event stream ended: the policy says events: false, so it does not reconnect"
            }
            Ended::Budget => {
                "the event stream ended: its origin's retry budget (retryBudget) is spent, so it does not reconnect"
            }
        }
    }
}

/// What an answer with `status` and `content_type` does; `retry_on` is the policy's
/// `retry.retryOn` (empty when retries are off). Redirects were followed by fetch.
pub fn answer(status: u16, content_type: Option<&str>, retry_on: &[u16]) -> Answer {
    match status {
        200 if content_type.is_some_and(is_event_stream) => Answer::Open,
        200 => Answer::End(Ended::NotEventStream),
        204 => Answer::End(Ended::NoContent),
        s if retry_on.contains(&s) => Answer::Reconnect,
        s => Answer::End(Ended::Status(s)),
    }
}

/// Whether a `Content-Type`'s essence is `text/event-stream` (parameters allowed, case and
/// surrounding whitespace ignored).
pub fn is_event_stream(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or("").trim_ascii();
    essence.eq_ignore_ascii_case("text/event-stream")
}

/// The reconnect number after a connection ended: 0 again once it dispatched an event (the
/// stream made progress), else one more than `previous`. The first reconnect is number 0.
pub fn next_reconnect(previous: u32, dispatched: bool) -> u32 {
    if dispatched {
        0
    } else {
        previous.saturating_add(1)
    }
}

/// Whether reconnect number `k` may go (`events.maxReconnects` in a row); `None` policy
/// (`events: false`): never ([`Ended::Off`]).
pub fn may_reconnect(k: u32, policy: Option<&EventsPolicy>) -> Result<(), Ended> {
    match policy {
        Some(p) if k < p.max_reconnects => Ok(()),
        Some(_) => Err(Ended::Exhausted),
        None => Err(Ended::Off),
    }
}

/// The wait before reconnect number `k` (0 for the first), in ms: full jitter, uniform in
/// `[0, min(cap, base·2^k))`. The base is the server's `retry` when it sent one, else
/// `retry.baseDelayMs`; the cap is `retry.maxDelayMs`, raised to the server's `retry` if that
/// is longer (the server's wish is not cut short by the client's cap). `random` is uniform in
/// `[0, 1)`. At most the longest timer (2^31 - 1 ms).
pub fn reconnect_delay_ms(
    k: u32,
    server_retry_ms: Option<u64>,
    base_delay_ms: u32,
    max_delay_ms: u32,
    random: f64,
) -> u32 {
    let base = server_retry_ms.map_or(f64::from(base_delay_ms), |ms| ms as f64);
    let cap = base.max(f64::from(max_delay_ms));
    let wait = delay(Jitter::Full, k, base, cap, base, random);
    wait.min(f64::from(MAX_MS)) as u32
}

/// The `Last-Event-ID` value to send for the last event ID `id`: none for an empty one
/// (EventSource sends none). The ID's UTF-8 bytes, each as the char of that code (a byte
/// string): fetch sends a header's chars below 256 as bytes, so the server gets the UTF-8
/// EventSource sends (`é` would otherwise go as one Latin-1 byte, and `😀` throw). The ID
/// holds no NUL, CR or LF (the parser drops such IDs or ends lines there), so fetch accepts
/// it; fetch trims spaces and tabs at its ends, as it does for every header.
pub fn last_event_id_header(id: &str) -> Option<String> {
    if id.is_empty() {
        return None;
    }
    Some(id.bytes().map(char::from).collect())
}

/// Whether the stream has been idle too long: more than `idle_ms` since bytes last arrived
/// (any bytes: a comment or a heartbeat counts), times in ms from the shell's clock. `None`
/// (`events.idleMs: false`): never idle.
pub fn is_idle(last_bytes_ms: f64, now_ms: f64, idle_ms: Option<u32>) -> bool {
    idle_ms.is_some_and(|idle| now_ms - last_bytes_ms > f64::from(idle))
}

/// When the stream turns idle if no bytes arrive first: the idle timer's deadline, in ms.
pub fn idle_deadline_ms(last_bytes_ms: f64, idle_ms: Option<u32>) -> Option<f64> {
    idle_ms.map(|idle| last_bytes_ms + f64::from(idle))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn answers_open_end_or_reconnect_as_event_source_does() {
        let retry_on = [408, 429, 500, 502, 503, 504];
        for (status, ty, want) in [
            (200, Some("text/event-stream"), Answer::Open),
            (
                200,
                Some(" Text/Event-Stream ; charset=utf-8"),
                Answer::Open,
            ),
            (200, Some("text/html"), Answer::End(Ended::NotEventStream)),
            (
                200,
                Some("text/event-streams"),
                Answer::End(Ended::NotEventStream),
            ),
            (200, None, Answer::End(Ended::NotEventStream)),
            (
                204,
                Some("text/event-stream"),
                Answer::End(Ended::NoContent),
            ),
            (
                201,
                Some("text/event-stream"),
                Answer::End(Ended::Status(201)),
            ),
            (404, None, Answer::End(Ended::Status(404))),
            (503, None, Answer::Reconnect),
            (429, None, Answer::Reconnect),
        ] {
            assert_eq!(answer(status, ty, &retry_on), want, "{status} {ty:?}");
        }
        assert_eq!(answer(503, None, &[]), Answer::End(Ended::Status(503)));
        for e in [
            Ended::NoContent,
            Ended::Status(1),
            Ended::NotEventStream,
            Ended::Exhausted,
            Ended::Off,
        ] {
            assert!(e.message().starts_with("the event stream ended") && !e.code().is_empty());
        }
    }

    #[test]
    fn the_reconnect_delay_is_full_jitter_on_the_servers_retry() {
        const ALMOST_ONE: f64 = 1.0 - f64::EPSILON;
        // No `retry` from the server: the policy's base and cap.
        assert_eq!(reconnect_delay_ms(0, None, 100, 10_000, 0.5), 50);
        assert_eq!(reconnect_delay_ms(3, None, 100, 10_000, 0.5), 400);
        assert_eq!(reconnect_delay_ms(0, None, 100, 10_000, 0.0), 0);
        // The server's `retry` is the base.
        assert_eq!(reconnect_delay_ms(0, Some(3_000), 100, 10_000, 0.5), 1_500);
        assert_eq!(reconnect_delay_ms(2, Some(3_000), 100, 10_000, 0.5), 5_000);
        assert!(reconnect_delay_ms(0, Some(3_000), 100, 10_000, ALMOST_ONE) < 3_000);
        // A `retry` above the cap raises it; the longest timer bounds everything.
        assert_eq!(
            reconnect_delay_ms(5, Some(60_000), 100, 10_000, 0.5),
            30_000
        );
        assert!(reconnect_delay_ms(40, Some(u64::MAX), 100, 10_000, ALMOST_ONE) <= 2_147_483_647);
        // A draw outside [0, 1) counts as 0, as the backoff's.
        assert_eq!(reconnect_delay_ms(1, None, 100, 10_000, 1.0), 0);
    }

    proptest! {
        #[test]
        fn reconnect_delays_stay_in_their_window(k in 0u32..64, retry in prop::option::of(0u64..1_000_000), base in 0u32..10_000, max in 0u32..100_000, r in 0.0f64..1.0) {
            let b = retry.map_or(f64::from(base), |ms| ms as f64);
            let window = (b * 2f64.powi(k as i32)).min(b.max(f64::from(max)));
            let d = reconnect_delay_ms(k, retry, base, max, r);
            prop_assert!(f64::from(d) <= window);
        }
    }

    #[test]
    fn reconnects_are_counted_in_a_row_and_bounded() {
        let p = EventsPolicy::default();
        assert_eq!(next_reconnect(0, false), 1);
        assert_eq!(next_reconnect(4, true), 0);
        assert_eq!(next_reconnect(u32::MAX, false), u32::MAX);
        assert!(may_reconnect(9, Some(&p)).is_ok());
        assert_eq!(may_reconnect(10, Some(&p)), Err(Ended::Exhausted));
        assert_eq!(may_reconnect(0, None), Err(Ended::Off));
    }

    #[test]
    fn last_event_id_goes_as_its_utf8_bytes_and_only_when_set() {
        assert_eq!(last_event_id_header(""), None);
        assert_eq!(last_event_id_header("42").as_deref(), Some("42"));
        assert_eq!(
            last_event_id_header("\u{e9}\u{1f600}").as_deref(),
            Some("\u{c3}\u{a9}\u{f0}\u{9f}\u{98}\u{80}")
        );
        assert!(
            last_event_id_header("\u{1f600}").is_some_and(|v| v.chars().all(|c| (c as u32) < 256))
        );
    }

    #[test]
    fn a_stream_is_idle_after_a_gap_longer_than_idle_ms() {
        assert!(!is_idle(1_000.0, 46_000.0, Some(45_000)));
        assert!(is_idle(1_000.0, 46_000.5, Some(45_000)));
        assert!(!is_idle(0.0, 1e12, None));
        assert_eq!(idle_deadline_ms(1_000.0, Some(45_000)), Some(46_000.0));
        assert_eq!(idle_deadline_ms(1_000.0, None), None);
    }
}
