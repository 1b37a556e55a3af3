//! The breaker's unit tests.
use super::*;
use proptest::prelude::*;

mod refinements;

fn consecutive(threshold: u32) -> BreakerPolicy {
    BreakerPolicy {
        trip: TripRule::Consecutive {
            failure_threshold: threshold,
        },
        cooldown_ms: 1000,
        max_cooldown_ms: 1000,
        ..BreakerPolicy::default()
    }
}

fn rate(threshold: f64, minimum: u32, window: Window) -> BreakerPolicy {
    BreakerPolicy {
        trip: TripRule::FailureRate {
            threshold,
            minimum_calls: minimum,
            window,
            slow: None,
        },
        cooldown_ms: 1000,
        max_cooldown_ms: 1000,
        ..BreakerPolicy::default()
    }
}

/// One call through the breaker at `now`.
fn call(b: &mut Breaker, failed: bool, now: f64, p: &BreakerPolicy) -> Option<Transition> {
    let permit = b
        .try_acquire(now, p, &|| 0.5)
        .expect("breaker lets the call through");
    b.record(
        permit,
        if failed {
            Judgement::Failure
        } else {
            Judgement::Success
        },
        false,
        now,
        p,
    )
}

fn opened(p: &BreakerPolicy) -> Breaker {
    let mut b = Breaker::new();
    let TripRule::Consecutive { failure_threshold } = p.trip else {
        panic!("a consecutive policy");
    };
    for _ in 0..failure_threshold {
        let _ = call(&mut b, true, 0.0, p);
    }
    assert_eq!(b.state(0.0), BreakerState::Open);
    b
}

const OPENED: Option<Transition> = Some(Transition {
    from: BreakerState::Closed,
    to: BreakerState::Open,
    reason: Some(OpenReason::Failures),
});
const RATE_OPENED: Option<Transition> = Some(Transition {
    from: BreakerState::Closed,
    to: BreakerState::Open,
    reason: Some(OpenReason::FailureRate),
});

#[test]
fn consecutive_failures_open_it() {
    let p = consecutive(3);
    let mut b = Breaker::new();
    assert_eq!(call(&mut b, true, 0.0, &p), None);
    assert_eq!(call(&mut b, true, 0.0, &p), None);
    assert_eq!(b.state(0.0), BreakerState::Closed);
    assert_eq!(call(&mut b, true, 5.0, &p), OPENED);
    assert_eq!(b.state(5.0), BreakerState::Open);
}

#[test]
fn a_success_resets_the_streak() {
    let p = consecutive(2);
    let mut b = Breaker::new();
    let _ = call(&mut b, true, 0.0, &p);
    let _ = call(&mut b, false, 0.0, &p);
    assert_eq!(call(&mut b, true, 0.0, &p), None);
    assert_eq!(b.state(0.0), BreakerState::Closed);
}

#[test]
fn open_rejects_until_the_cooldown_ends() {
    let p = consecutive(1);
    let mut b = opened(&p);
    assert_eq!(
        b.try_acquire(400.0, &p, &|| 0.5),
        Err(Rejected {
            retry_after_ms: 600.0
        })
    );
    assert_eq!(b.state(999.0), BreakerState::Open);
    assert_eq!(b.state(1000.0), BreakerState::HalfOpen);
    let probe = b.try_acquire(1000.0, &p, &|| 0.5).expect("probe");
    assert!(probe.is_probe());
    assert_eq!(
        probe.transition(),
        Some(Transition {
            from: BreakerState::Open,
            to: BreakerState::HalfOpen,
            reason: None,
        })
    );
    let _ = b.record(probe, Judgement::Unjudged, false, 1000.0, &p);
}

#[test]
fn half_open_admits_at_most_max_probes() {
    let p = BreakerPolicy {
        half_open_max_calls: 2,
        ..consecutive(1)
    };
    let mut b = opened(&p);
    let first = b.try_acquire(1000.0, &p, &|| 0.5).expect("probe 1");
    let second = b.try_acquire(1000.0, &p, &|| 0.5).expect("probe 2");
    assert_eq!(second.transition(), None);
    assert_eq!(b.probes_in_flight(), 2);
    assert_eq!(
        b.try_acquire(1000.0, &p, &|| 0.5),
        Err(Rejected {
            retry_after_ms: 1000.0
        })
    );
    // A probe released without an answer frees its slot and decides nothing.
    assert_eq!(
        b.record(first, Judgement::Unjudged, false, 1001.0, &p),
        None
    );
    assert_eq!(b.state(1001.0), BreakerState::HalfOpen);
    let third = b.try_acquire(1001.0, &p, &|| 0.5).expect("freed slot");
    let _ = b.record(second, Judgement::Unjudged, false, 1001.0, &p);
    let _ = b.record(third, Judgement::Unjudged, false, 1001.0, &p);
    assert_eq!(b.probes_in_flight(), 0);
}

#[test]
fn a_successful_probe_closes_it_with_a_fresh_history() {
    let p = consecutive(2);
    let mut b = opened(&p);
    let probe = b.try_acquire(1000.0, &p, &|| 0.5).expect("probe");
    assert_eq!(
        b.record(probe, Judgement::Success, false, 1000.0, &p),
        Some(Transition {
            from: BreakerState::HalfOpen,
            to: BreakerState::Closed,
            reason: None,
        })
    );
    assert_eq!(b.state(1000.0), BreakerState::Closed);
    assert_eq!(
        call(&mut b, true, 1000.0, &p),
        None,
        "the old streak is gone"
    );
}

#[test]
fn a_failed_probe_reopens_it_for_a_new_cooldown() {
    let p = consecutive(1);
    let mut b = opened(&p);
    let probe = b.try_acquire(1500.0, &p, &|| 0.5).expect("probe");
    assert_eq!(
        b.record(probe, Judgement::Failure, false, 1600.0, &p),
        Some(Transition {
            from: BreakerState::HalfOpen,
            to: BreakerState::Open,
            reason: Some(OpenReason::Probe),
        })
    );
    assert_eq!(
        b.try_acquire(2599.0, &p, &|| 0.5),
        Err(Rejected {
            retry_after_ms: 1.0
        })
    );
    assert!(b.try_acquire(2600.0, &p, &|| 0.5).is_ok());
}

#[test]
fn answers_from_an_older_period_are_ignored() {
    let p = BreakerPolicy {
        half_open_max_calls: 2,
        ..consecutive(1)
    };
    let mut b = Breaker::new();
    let late = b.try_acquire(0.0, &p, &|| 0.5).expect("closed");
    let _ = call(&mut b, true, 0.0, &p);
    // The breaker opened meanwhile: the late success does not close it.
    assert_eq!(b.record(late, Judgement::Success, false, 1.0, &p), None);
    assert_eq!(b.state(1.0), BreakerState::Open);
    // Probes a and b; a fails and re-opens it; after the cooldown, probe c.
    let a = b.try_acquire(1000.0, &p, &|| 0.5).expect("probe a");
    let stale = b.try_acquire(1000.0, &p, &|| 0.5).expect("probe b");
    let _ = b.record(a, Judgement::Failure, false, 1000.0, &p);
    let c = b.try_acquire(2000.0, &p, &|| 0.5).expect("probe c");
    // b's answer belongs to the earlier half-open period: it frees no slot of this one
    // and decides nothing.
    assert_eq!(b.record(stale, Judgement::Success, false, 2000.0, &p), None);
    assert_eq!(b.probes_in_flight(), 1);
    let d = b.try_acquire(2000.0, &p, &|| 0.5).expect("probe d");
    assert!(
        b.try_acquire(2000.0, &p, &|| 0.5).is_err(),
        "c and d fill both slots"
    );
    let _ = b.record(c, Judgement::Unjudged, false, 2000.0, &p);
    let _ = b.record(d, Judgement::Unjudged, false, 2000.0, &p);
}

#[test]
fn an_aborted_call_counts_as_nothing() {
    let p = consecutive(2);
    let mut b = Breaker::new();
    let _ = call(&mut b, true, 0.0, &p);
    let permit = b.try_acquire(0.0, &p, &|| 0.5).expect("closed");
    assert_eq!(b.record(permit, Judgement::Unjudged, false, 0.0, &p), None);
    assert_eq!(
        call(&mut b, true, 0.0, &p),
        OPENED,
        "the streak survived the abort"
    );
}

#[test]
fn failure_rate_needs_minimum_calls_then_opens_at_threshold() {
    let p = rate(0.5, 4, Window::Count(10));
    let mut b = Breaker::new();
    assert_eq!(call(&mut b, true, 0.0, &p), None);
    assert_eq!(call(&mut b, true, 0.0, &p), None);
    assert_eq!(call(&mut b, false, 0.0, &p), None);
    // 3 of 4 failed, 75% ≥ 50%, and 4 calls seen.
    assert_eq!(call(&mut b, true, 0.0, &p), RATE_OPENED);
}

#[test]
fn failure_rate_below_threshold_stays_closed() {
    let p = rate(0.5, 4, Window::Count(10));
    let mut b = Breaker::new();
    for failed in [false, false, true, false, false, true] {
        assert_eq!(call(&mut b, failed, 0.0, &p), None);
    }
}

#[test]
fn count_window_forgets_old_calls() {
    let p = rate(0.6, 2, Window::Count(3));
    let mut b = Breaker::new();
    for failed in [true, false, false, false, true] {
        assert_eq!(call(&mut b, failed, 0.0, &p), None);
    }
    // Window [false, true, true]: 2 of 3 ≥ 60%. Counting every call it would be 3 of 6.
    assert_eq!(call(&mut b, true, 0.0, &p), RATE_OPENED);
}

#[test]
fn time_window_forgets_calls_older_than_window_ms() {
    let p = rate(0.6, 3, Window::Time(100));
    let mut b = Breaker::new();
    let _ = call(&mut b, false, 0.0, &p);
    let _ = call(&mut b, false, 50.0, &p);
    let _ = call(&mut b, true, 120.0, &p); // the call at 0 has left the window
    assert_eq!(
        call(&mut b, true, 130.0, &p),
        RATE_OPENED,
        "2 of 3 within 100 ms"
    );
}

#[test]
fn windows_are_bounded() {
    let p = rate(1.0, 10_000, Window::Time(2_000_000_000));
    let mut b = Breaker::new();
    for i in 0..3000 {
        let _ = call(&mut b, i % 2 == 0, f64::from(i), &p);
    }
    let Phase::Closed(health) = &b.phase else {
        panic!("still closed")
    };
    assert_eq!(health.window.len(), MAX_WINDOW_CALLS);
    assert_eq!(health.window_failures, 500);
}

#[test]
fn reset_closes_and_ignores_permits_out() {
    let p = consecutive(1);
    let mut b = opened(&p);
    let probe = b.try_acquire(1000.0, &p, &|| 0.5).expect("probe");
    b.reset();
    assert_eq!(b.state(1000.0), BreakerState::Closed);
    assert_eq!(b.record(probe, Judgement::Failure, false, 1000.0, &p), None);
    assert_eq!(b.state(1000.0), BreakerState::Closed);
}

#[test]
fn state_names() {
    assert_eq!(BreakerState::Closed.as_str(), "closed");
    assert_eq!(BreakerState::Open.as_str(), "open");
    assert_eq!(BreakerState::HalfOpen.as_str(), "half-open");
}

#[derive(Clone, Debug)]
enum Op {
    Acquire,
    Record(usize, Judgement),
    Advance(u32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        Just(Op::Acquire),
        (
            any::<usize>(),
            prop_oneof![
                Just(Judgement::Unjudged),
                Just(Judgement::Failure),
                Just(Judgement::Success)
            ]
        )
            .prop_map(|(i, f)| Op::Record(i, f)),
        (0u32..1500).prop_map(Op::Advance),
    ]
}

proptest! {
    #[test]
    fn never_more_probes_than_allowed(
        max in 1u32..4,
        threshold in 1u32..4,
        ops in prop::collection::vec(op(), 1..200),
    ) {
        let p = BreakerPolicy { half_open_max_calls: max, ..consecutive(threshold) };
        let mut b = Breaker::new();
        let mut now = 0.0;
        let mut out: Vec<Permit> = Vec::new();
        for op in ops {
            match op {
                Op::Acquire => {
                    // `refusal` says beforehand, without a change, what try_acquire refuses.
                    let refusal = b.refusal(now, &p);
                    match b.try_acquire(now, &p, &|| 0.5) {
                        Ok(permit) => {
                            prop_assert_eq!(refusal, None);
                            out.push(permit);
                        }
                        Err(r) => prop_assert_eq!(refusal, Some(r.retry_after_ms)),
                    }
                }
                Op::Record(i, failed) if !out.is_empty() => {
                    let permit = out.swap_remove(i % out.len());
                    let _ = b.record(permit, failed, false, now, &p);
                }
                Op::Record(..) => {}
                Op::Advance(ms) => now += f64::from(ms),
            }
            let current = out.iter().filter(|q| q.probe && q.period == b.period).count();
            prop_assert!(b.probes_in_flight() <= max);
            prop_assert_eq!(b.probes_in_flight() as usize, current);
        }
    }
}
