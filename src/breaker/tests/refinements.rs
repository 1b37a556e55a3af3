//! The breaker's refinements: slow calls, and cooldowns that grow with each reopening.
use super::*;

/// A failure-rate policy with the slow-call rule: slower than `ms` is slow.
fn slow_rule(ms: u32, threshold: f64, minimum: u32) -> BreakerPolicy {
    let mut p = rate(1.0, minimum, Window::Count(10));
    if let TripRule::FailureRate { slow, .. } = &mut p.trip {
        *slow = Some(crate::policy::SlowCalls { ms, threshold });
    }
    p
}

/// One call that ends `slow` (or not), failed (or not), at `now`.
fn timed(
    b: &mut Breaker,
    failed: bool,
    slow: bool,
    now: f64,
    p: &BreakerPolicy,
) -> Option<Transition> {
    let permit = b
        .try_acquire(now, p, &|| 0.5)
        .expect("breaker lets the call through");
    let judgement = if failed {
        Judgement::Failure
    } else {
        Judgement::Success
    };
    b.record(permit, judgement, slow, now, p)
}

#[test]
fn slow_calls_open_it_when_their_share_reaches_the_threshold_once_the_window_has_minimum_calls() {
    let p = slow_rule(100, 0.5, 4);
    let mut b = Breaker::new();
    // Successes, all answered: three slow of four, but only from the fourth call does the
    // window hold minimumCalls.
    assert_eq!(timed(&mut b, false, true, 0.0, &p), None);
    assert_eq!(timed(&mut b, false, true, 1.0, &p), None);
    assert_eq!(timed(&mut b, false, false, 2.0, &p), None);
    assert_eq!(b.opened_by(), None);
    let opened = timed(&mut b, false, true, 3.0, &p);
    assert_eq!(
        opened.map(|t| (t.to, t.reason)),
        Some((BreakerState::Open, Some(OpenReason::SlowCallRate)))
    );
    assert_eq!(b.opened_by(), Some(OpenReason::SlowCallRate));
    assert_eq!(b.open_until(), Some(3.0 + 1000.0));
}

#[test]
fn a_fast_call_trips_no_slow_rule_and_the_window_forgets_old_slow_calls() {
    let p = slow_rule(100, 0.5, 2);
    let mut b = Breaker::new();
    assert_eq!(
        timed(&mut b, false, true, 0.0, &p),
        None,
        "below minimumCalls"
    );
    // Two of two slow, but the call that reaches the share is fast: nothing opens on it.
    assert_eq!(timed(&mut b, false, false, 1.0, &p), None);
    // A count window of 10: eight fast calls push the slow one out.
    for i in 0..8 {
        assert_eq!(timed(&mut b, false, false, 2.0 + f64::from(i), &p), None);
    }
    assert_eq!(timed(&mut b, false, false, 10.0, &p), None);
    // One slow of ten: 10% < 50%.
    assert_eq!(timed(&mut b, false, true, 11.0, &p), None);
    assert!(b.is_closed());
}

#[test]
fn without_the_rule_slowness_counts_for_nothing() {
    let p = rate(0.5, 2, Window::Count(10));
    let mut b = Breaker::new();
    for i in 0..10 {
        assert_eq!(timed(&mut b, false, true, f64::from(i), &p), None);
    }
    assert!(b.is_closed());
    // The consecutive mode has no slow-call rule either.
    let p = consecutive(1);
    assert_eq!(timed(&mut b, false, true, 20.0, &p), None);
    assert!(b.is_closed());
}

#[test]
fn the_failure_rate_still_opens_it_with_the_slow_rule_on_and_says_so() {
    let p = BreakerPolicy {
        trip: match slow_rule(100, 1.0, 2).trip {
            TripRule::FailureRate {
                slow,
                minimum_calls,
                window,
                ..
            } => TripRule::FailureRate {
                threshold: 0.5,
                minimum_calls,
                window,
                slow,
            },
            other => other,
        },
        ..slow_rule(100, 1.0, 2)
    };
    let mut b = Breaker::new();
    assert_eq!(timed(&mut b, false, false, 0.0, &p), None);
    assert_eq!(timed(&mut b, true, true, 1.0, &p), RATE_OPENED);
    assert_eq!(b.opened_by(), Some(OpenReason::FailureRate));
}

#[test]
fn a_slow_probe_reopens_it_with_the_rule_on_and_closes_it_without() {
    let p = slow_rule(100, 0.5, 1);
    let mut b = Breaker::new();
    let _ = timed(&mut b, false, true, 0.0, &p);
    assert_eq!(b.opened_by(), Some(OpenReason::SlowCallRate));
    let reopened = timed(&mut b, false, true, 1000.0, &p);
    assert_eq!(
        reopened.map(|t| (t.from, t.to, t.reason)),
        Some((
            BreakerState::HalfOpen,
            BreakerState::Open,
            Some(OpenReason::Probe)
        ))
    );
    assert_eq!(
        b.opened_by(),
        Some(OpenReason::SlowCallRate),
        "the rule that opened it is kept"
    );
    let closed = timed(&mut b, false, false, 2000.0, &p);
    assert_eq!(
        closed.map(|t| (t.to, t.reason)),
        Some((BreakerState::Closed, None))
    );
    assert_eq!(b.opened_by(), None);
}

/// A consecutive(1) policy whose cooldown of 1000 ms grows up to `max`.
fn growing(max: u32) -> BreakerPolicy {
    BreakerPolicy {
        max_cooldown_ms: max,
        ..consecutive(1)
    }
}

#[test]
fn each_reopening_doubles_the_cooldown_in_its_upper_half_up_to_the_cap_and_a_close_resets_it() {
    let p = growing(5000);
    // The draws asked for, one per turn to half-open.
    let draws = std::cell::RefCell::new(vec![0.0, 0.999_999, 0.5, 0.0, 0.0]);
    let draw = || draws.borrow_mut().remove(0);
    let mut b = Breaker::new();
    let _ = timed(&mut b, true, false, 0.0, &p);
    assert_eq!(
        b.open_until(),
        Some(1000.0),
        "the opening itself waits cooldownMs"
    );
    let mut now = 1000.0;
    let mut cooldowns = vec![];
    for _ in 0..4 {
        let probe = b.try_acquire(now, &p, &draw).expect("half-open");
        let t = b.record(probe, Judgement::Failure, false, now, &p);
        assert_eq!(t.map(|t| t.reason), Some(Some(OpenReason::Probe)));
        let until = b.open_until().expect("reopened");
        cooldowns.push(until - now);
        now = until;
    }
    // 2000 drawn at 0 (its lower half's end), 4000 at ~1, 5000 (capped) at 0.5, 5000 at 0.
    assert_eq!(cooldowns[0], 1000.0);
    assert!((cooldowns[1] - 4000.0).abs() < 0.01, "{cooldowns:?}");
    assert_eq!(cooldowns[2], 3750.0);
    assert_eq!(cooldowns[3], 2500.0);
    assert!(cooldowns.iter().all(|&c| (1000.0..=5000.0).contains(&c)));
    // A successful probe closes it; the next opening waits cooldownMs again, and the next
    // reopening doubles from there.
    let probe = b.try_acquire(now, &p, &draw).expect("half-open");
    assert_eq!(
        b.record(probe, Judgement::Success, false, now, &p)
            .map(|t| t.to),
        Some(BreakerState::Closed)
    );
    let _ = timed(&mut b, true, false, now, &p);
    assert_eq!(b.open_until(), Some(now + 1000.0));
    assert!(draws.borrow().is_empty(), "one draw per turn to half-open");
}

#[test]
fn cooldown_grows_only_when_asked_and_never_below_cooldown_ms() {
    let fixed = consecutive(1);
    for n in [0, 1, 5, 40] {
        assert_eq!(cooldown(&fixed, n, 0.0), 1000.0);
    }
    let p = growing(u32::MAX);
    assert_eq!(cooldown(&p, 0, 0.9), 1000.0, "the opening itself");
    assert_eq!(cooldown(&p, 1, 0.0), 1000.0);
    assert_eq!(cooldown(&p, 3, 0.0), 4000.0);
    assert_eq!(cooldown(&p, 3, 0.5), 6000.0);
    assert!(cooldown(&p, u32::MAX, 0.99).is_finite());
    // Without growth no random number is asked for.
    let mut b = Breaker::new();
    let _ = timed(&mut b, true, false, 0.0, &fixed);
    let never = || -> f64 { panic!("no draw without maxCooldownMs") };
    assert!(b.try_acquire(1000.0, &fixed, &never).is_ok());
}

proptest! {
    #[test]
    fn a_grown_cooldown_is_between_cooldown_ms_and_max(n in 0u32..64, draw in 0.0f64..1.0,
        base in 1u32..100_000, extra in 0u32..1_000_000) {
        let p = BreakerPolicy {
            cooldown_ms: base,
            max_cooldown_ms: base + extra,
            ..consecutive(1)
        };
        let c = cooldown(&p, n, draw);
        prop_assert!(c >= f64::from(base) && c <= f64::from(base + extra), "{c}");
    }
}

#[test]
fn a_follower_follows_a_leaders_grown_cooldown_up_to_max_cooldown_ms() {
    let p = growing(8000);
    let mut b = Breaker::new();
    // A leader's reopening 6 s away (grown), and one a day away (bogus): at most 8 s.
    let _ = b.follow(6000.0, (1, 2), 0.0, &p);
    assert_eq!(b.open_until(), Some(6000.0 + 1000.0));
    assert_eq!(b.opened_by(), Some(OpenReason::Peer));
    let mut c = Breaker::new();
    let t = c.follow(86_400_000.0, (1, 2), 0.0, &p);
    assert_eq!(t.map(|t| t.reason), Some(Some(OpenReason::Peer)));
    assert_eq!(c.open_until(), Some(8000.0 + 1000.0));
}
