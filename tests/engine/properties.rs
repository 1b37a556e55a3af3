//! Properties (proptest): an unsafe request is never repeated, and a safe one stays within its
//! attempts, pays only for the retries it sent and gives back everything it held, whatever the
//! origin answers and whatever stood before it. Proptest keeps the cases it found failing in
//! `tests/proptest-regressions/properties.txt` (its place for a module of a crate whose root is
//! `main.rs`) and runs them first.

use crate::support::*;
use proptest::prelude::*;
use resilient_fetch::bulkhead::Admission;
use resilient_fetch::classify::Judgement;
use resilient_fetch::engine::{Call, CallResult, Env};
use resilient_fetch::events::RetryReason;
use resilient_fetch::policy::TripRule;

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        prop::sample::select(vec![200u16, 204, 404, 408, 429, 500, 501, 502, 503, 504])
            .prop_map(Step::Status),
        (
            prop::sample::select(vec![429u16, 503]),
            prop::sample::select(vec!["0", "1", "45", "x"])
        )
            .prop_map(|(s, v)| Step::RetryAfter(s, v.to_owned())),
        Just(Step::Network),
        Just(Step::Hang),
        Just(Step::Abort),
        prop::sample::select(vec![200u16, 503]).prop_map(Step::AbortWith),
    ]
}

/// What the origin and the caller are like when a call starts.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Before {
    Nothing,
    /// Another call opened the breaker.
    BreakerOpen,
    /// Another call holds the only bulkhead slot (and, if `queue_full`, the one place in
    /// the queue).
    SlotTaken {
        queue_full: bool,
    },
    /// The caller aborted already.
    Aborted,
    /// The caller aborts at this time, if the call is waiting then.
    AbortAt(f64),
}

fn before() -> impl Strategy<Value = Before> {
    prop_oneof![
        4 => Just(Before::Nothing),
        1 => Just(Before::BreakerOpen),
        1 => any::<bool>().prop_map(|queue_full| Before::SlotTaken { queue_full }),
        1 => Just(Before::Aborted),
        2 => (0u32..2000).prop_map(|at| Before::AbortAt(f64::from(at))),
    ]
}

proptest! {
    #[test]
    fn an_unsafe_request_is_never_retried(
        steps in prop::collection::vec(step(), 1..6),
        method in prop::sample::select(vec!["POST", "PATCH", "post", "CONNECT"]),
        key_but_not_replayable in any::<bool>(),
    ) {
        let clock = Clock::auto();
        let reg = registry();
        let c = Call {
            origin: A,
            method,
            has_key: key_but_not_replayable,
            replayable: !key_but_not_replayable,
            has_body: true,
            kept: false,
            alternates: Default::default(),
        };
        let p = policy(serde_json::json!({"timeoutMs": 100, "retry": {"maxAttempts": 5}}));
        let mut script = Script::new(&clock, &steps);
        let (result, log) = call(&reg, &p, c, &mut script);
        prop_assert_eq!(script.limits.borrow().len(), 1);
        prop_assert!(log.retries.is_empty());
        let one_attempt = matches!(result, CallResult::Done { attempts: 1, .. });
        prop_assert!(one_attempt, "{:?}", result);
        prop_assert_eq!(snapshot(&reg, A, 0.0).stats.in_flight, 0);
    }

    #[test]
    fn safe_requests_stay_within_attempts_and_release_everything(
        steps in prop::collection::vec(step(), 1..8),
        max_attempts in 1u32..6,
        before in before(),
    ) {
        let clock = Clock::auto();
        let reg = registry();
        let p = policy(serde_json::json!({
            "timeoutMs": 100, "totalTimeoutMs": 100000,
            "retry": {"maxAttempts": max_attempts},
            "breaker": {"failureThreshold": 3},
            "bulkhead": {"maxConcurrent": 1, "maxQueue": 1}
        }));
        reg.lend().with(A, |_, _| ()); // known to the registry even if nothing is sent
        // Slots and places in the queue taken by other calls.
        let mut held: Vec<Admission> = Vec::new();
        match before {
            Before::Nothing => {}
            Before::BreakerOpen => {
                let b = p.breaker.clone().expect("on");
                reg.lend().with(A, |_, s| {
                    let TripRule::Consecutive { failure_threshold } = b.trip else {
                        panic!("a consecutive policy");
                    };
                    for _ in 0..failure_threshold {
                        if let Ok(permit) = s.breaker.try_acquire(0.0, &b, &|| 0.5) {
                            let _ = s.breaker.record(permit, Judgement::Failure, false, 0.0, &b);
                        }
                    }
                });
            }
            Before::SlotTaken { queue_full } => {
                let bulkhead = p.bulkhead.clone().expect("on");
                reg.lend().with(A, |_, s| {
                    held.push(s.bulkhead.acquire(&bulkhead));
                    if queue_full {
                        held.push(s.bulkhead.acquire(&bulkhead));
                    }
                });
            }
            Before::Aborted => clock.abort(),
            Before::AbortAt(at) => clock.abort_at.set(Some(at)),
        }
        let mut script = Script::new(&clock, &steps);
        let (result, log) = call(&reg, &p, get(A), &mut script);
        let sent = script.limits.borrow().len() as u32;
        prop_assert!(sent <= max_attempts);
        let last = log.kinds.last().copied();
        match result {
            CallResult::Done { output, attempts } => {
                prop_assert!(sent >= 1);
                prop_assert_eq!((output, attempts), (sent, sent));
                // Every retry scheduled was sent, unless the breaker refused it.
                prop_assert_eq!(sent as usize, log.retries.len() + 1 - log.short_circuits.len());
                match last {
                    Some("success" | "giveUp") => prop_assert!(!clock.aborted()),
                    // Aborted mid-attempt: the output is handed back without a verdict.
                    Some("attemptEnd") => prop_assert!(clock.aborted()),
                    other => prop_assert!(false, "ended with {:?}", other),
                }
            }
            CallResult::ShortCircuited { retry_after_ms } => {
                prop_assert_eq!(before, Before::BreakerOpen);
                prop_assert_eq!((sent, retry_after_ms), (0, 5_000.0));
                prop_assert_eq!(&log.kinds, &["shortCircuit"]);
            }
            CallResult::BulkheadFull => {
                prop_assert_eq!(before, Before::SlotTaken { queue_full: true });
                prop_assert_eq!(sent, 0);
                prop_assert_eq!(&log.kinds, &["bulkheadRejected"]);
            }
            CallResult::DeadlineExceeded => {
                // Queued behind the held slot until the deadline.
                prop_assert_eq!(before, Before::SlotTaken { queue_full: false });
                prop_assert_eq!((sent, clock.now_ms()), (0, 100_000.0));
                prop_assert!(log.kinds.is_empty());
            }
            CallResult::Aborted => {
                prop_assert!(clock.aborted());
                match before {
                    Before::Aborted => prop_assert_eq!(sent, 0),
                    // Aborted while waiting to retry: the retry was scheduled, not sent.
                    Before::AbortAt(_) => {
                        prop_assert_eq!(last, Some("retry"));
                        prop_assert_eq!(sent as usize, log.retries.len());
                    }
                    other => prop_assert!(false, "aborted after {:?}", other),
                }
            }
            // Neither the rate limit (no quota headers here) nor the throttle (off) refuses.
            #[cfg(feature = "pacing")]
            CallResult::RateLimited { .. } => {
                prop_assert!(false, "refused by pacing: {:?}", log.kinds);
            }
            CallResult::Throttled(_) => {
                prop_assert!(false, "refused by throttling: {:?}", log.kinds);
            }
        }
        // Budget: only retries that were sent are paid for; a success refunds the retry
        // that led to it, or 1 after a first-attempt success.
        let cost = |reason: RetryReason| if reason == RetryReason::Status { 5 } else { 10 };
        let paid: Vec<u32> = log
            .retries
            .iter()
            .filter(|r| r.0 <= sent)
            .map(|r| cost(r.2))
            .collect();
        let spent: u32 = paid.iter().sum();
        let refund = match (last, paid.last()) {
            (Some("success"), Some(&c)) if sent > 1 => c,
            (Some("success"), _) => 1,
            _ => 0,
        };
        prop_assert_eq!(
            snapshot(&reg, A, clock.now_ms()).budget_tokens,
            (500 - spent + refund).min(500)
        );
        drop(held);
        assert_released(&reg, A);
    }
}
