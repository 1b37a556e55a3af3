//! What pacing adds to the events: their JS names.

use crate::events::Event;
use crate::vocab::Why;

#[test]
fn its_events_have_their_js_names() {
    let all = [
        (
            Event::RateLimitWait {
                origin: "o",
                wait_ms: 1.0,
                reason: Why::Quota,
            },
            "rateLimitWait",
        ),
        (
            Event::RateLimitRejected {
                origin: "o",
                retry_after_ms: 1.0,
                reason: Why::RetryAfter,
            },
            "rateLimitRejected",
        ),
    ];
    for (event, kind) in all {
        assert_eq!(event.kind(), kind);
    }
}
