//! The throttle: off by default; on, it refuses calls locally, with a probability, once the
//! origin rejects most of them.

use crate::support::*;
use resilient_fetch::engine::{CallResult, Env};

#[test]
fn throttling_refuses_locally_once_the_origin_rejects_most() {
    let (reg, clock) = (registry(), Clock::auto());
    let p = policy(serde_json::json!({
        "retry": false, "breaker": false, "throttle": {"k": 2, "windowMs": 60000}
    }));
    let (mut sent, mut refused, mut accepted) = (0, 0, 0);
    for i in 0..400 {
        // The origin accepts one request in ten (a 503 otherwise).
        let status = if i % 10 == 0 { 200 } else { 503 };
        let (result, events, n) = paced_get(&reg, &p, &clock, &[Step::Status(status)]);
        sent += n;
        match result {
            CallResult::Throttled(_) => {
                refused += 1;
                assert_eq!(n, 0);
                let (_, probability, _) = &events[0];
                assert!(*probability > 0.0 && *probability < 1.0);
            }
            _ if status == 200 => accepted += 1,
            _ => {}
        }
    }
    assert!(refused > 100, "refused {refused} of 400");
    assert_eq!(snapshot(&reg, A, clock.now_ms()).stats.throttled, refused);
    assert!(sent > 0 && accepted > 0, "{sent} sent, {accepted} accepted");
}

#[test]
fn throttling_is_off_by_default() {
    let (reg, clock) = (registry(), Clock::auto());
    let p = policy(serde_json::json!({"retry": false, "breaker": false}));
    for _ in 0..100 {
        let (_, _, n) = paced_get(&reg, &p, &clock, &[Step::Status(503)]);
        assert_eq!(n, 1);
    }
}
