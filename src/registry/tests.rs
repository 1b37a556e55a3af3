//! The registry's unit tests: entries per origin, the bound and eviction, stats.
use super::*;
use crate::bulkhead::{Admission, BulkheadPermit};
use crate::classify::Judgement;
use crate::policy::{BreakerPolicy, BulkheadPolicy, TripRule};
use proptest::prelude::*;

fn touch(r: &mut Registry, origin: &str) {
    r.with(origin, |_, _| ());
}

fn origins(r: &Registry) -> Vec<String> {
    r.stats(0.0).into_iter().map(|s| s.origin).collect()
}

#[test]
fn keeps_state_per_origin() {
    let mut r = Registry::new(10);
    r.with("https://a.test", |_, s| s.stats_mut().attempts = 3);
    assert_eq!(r.with("https://a.test", |_, s| s.stats().attempts), 3);
    assert_eq!(r.with("https://b.test", |_, s| s.stats().attempts), 0);
    assert_eq!(r.len(), 2);
}

#[test]
fn evicts_the_least_recently_used_at_the_bound() {
    let mut r = Registry::new(2);
    touch(&mut r, "a");
    touch(&mut r, "b");
    touch(&mut r, "a"); // b is now the least recently used
    touch(&mut r, "c");
    assert_eq!(origins(&r), ["a", "c"]);
}

#[test]
fn ids_tell_an_evicted_entry_from_its_successor() {
    let mut r = Registry::new(1);
    let old = r.with("a", |id, _| id);
    touch(&mut r, "b");
    let new = r.with("a", |id, _| id);
    assert_ne!(old, new);
    assert!(r.get_mut("a", old).is_none());
    assert!(r.get_mut("a", new).is_some());
}

#[test]
fn reset_one_or_all() {
    let mut r = Registry::new(10);
    let p = BreakerPolicy {
        trip: TripRule::Consecutive {
            failure_threshold: 1,
        },
        ..BreakerPolicy::default()
    };
    for origin in ["a", "b"] {
        r.with(origin, |_, s| {
            *s.stats_mut() = OriginStats {
                attempts: 4,
                in_flight: 1,
                ..OriginStats::default()
            };
            assert!(s.budget.try_withdraw(5, 500));
            let permit = s.breaker.try_acquire(0.0, &p, &|| 0.5).expect("closed");
            let _ = s.breaker.record(permit, Judgement::Failure, false, 0.0, &p);
        });
    }
    r.reset(Some("a"));
    r.reset(Some("unknown"));
    let snap = r.stats(0.0);
    assert_eq!(
        snap[0].stats,
        OriginStats {
            in_flight: 1,
            ..OriginStats::default()
        }
    );
    assert_eq!(
        (snap[0].breaker, snap[0].budget_tokens),
        (BreakerState::Closed, 500)
    );
    assert_eq!(
        (
            snap[1].stats.attempts,
            snap[1].breaker,
            snap[1].budget_tokens
        ),
        (4, BreakerState::Open, 495)
    );
    r.reset(None);
    let snap = r.stats(0.0);
    assert_eq!(
        (
            snap[1].stats.attempts,
            snap[1].breaker,
            snap[1].budget_tokens
        ),
        (0, BreakerState::Closed, 500)
    );
}

#[test]
fn snapshot_reports_breaker_state_lazily() {
    let mut r = Registry::new(10);
    let p = BreakerPolicy {
        trip: TripRule::Consecutive {
            failure_threshold: 1,
        },
        cooldown_ms: 100,
        ..BreakerPolicy::default()
    };
    r.with("a", |_, s| {
        let permit = s.breaker.try_acquire(0.0, &p, &|| 0.5).expect("closed");
        let _ = s.breaker.record(permit, Judgement::Failure, false, 0.0, &p);
    });
    assert_eq!(r.stats(50.0)[0].breaker, BreakerState::Open);
    assert_eq!(r.stats(100.0)[0].breaker, BreakerState::HalfOpen);
}

#[test]
fn a_zero_bound_still_keeps_one() {
    let mut r = Registry::new(0);
    touch(&mut r, "a");
    touch(&mut r, "b");
    assert_eq!(origins(&r), ["b"]);
}

fn hold_slot(r: &mut Registry, origin: &str) -> BulkheadPermit {
    let policy = BulkheadPolicy {
        max_concurrent: 1,
        max_queue: 0,
    };
    match r.with(origin, |_, s| s.bulkhead.acquire(&policy)) {
        Admission::Admitted(permit) => permit,
        other => panic!("expected a free slot, got {other:?}"),
    }
}

fn trip(r: &mut Registry, origin: &str) {
    let p = BreakerPolicy {
        trip: TripRule::Consecutive {
            failure_threshold: 1,
        },
        ..BreakerPolicy::default()
    };
    r.with(origin, |_, s| {
        if let Ok(permit) = s.breaker.try_acquire(0.0, &p, &|| 0.5) {
            let _ = s.breaker.record(permit, Judgement::Failure, false, 0.0, &p);
        }
    });
}

#[test]
fn an_attempt_in_flight_keeps_its_entry() {
    let mut r = Registry::new(2);
    r.with("a", |_, s| s.stats_mut().in_flight = 1);
    touch(&mut r, "b");
    touch(&mut r, "c");
    assert_eq!(origins(&r), ["a", "c"], "b was idle: it went, not a");
}

#[test]
fn a_call_waiting_to_retry_keeps_its_entry() {
    let mut r = Registry::new(2);
    let id = r.with("a", |id, s| {
        s.waiting = 1;
        id
    });
    touch(&mut r, "b");
    touch(&mut r, "c");
    assert_eq!(origins(&r), ["a", "c"], "b was idle: it went, not a");
    // The wait ends (without marking a used).
    r.get_mut("a", id).expect("kept").waiting = 0;
    touch(&mut r, "d");
    assert_eq!(origins(&r), ["c", "d"], "a is idle again: plain LRU");
}

#[test]
fn a_held_bulkhead_slot_keeps_its_entry() {
    let mut r = Registry::new(2);
    // A call between attempts: nothing in flight, but its slot is held.
    let held = hold_slot(&mut r, "a");
    touch(&mut r, "b");
    touch(&mut r, "c");
    assert_eq!(origins(&r), ["a", "c"], "b was idle: it went, not a");
    drop(held);
    touch(&mut r, "d");
    assert_eq!(origins(&r), ["c", "d"], "a is idle again: plain LRU");
}

#[test]
fn closed_breakers_go_before_open_ones() {
    let mut r = Registry::new(2);
    trip(&mut r, "a");
    touch(&mut r, "b");
    touch(&mut r, "c");
    assert_eq!(origins(&r), ["a", "c"], "a is down: it is remembered");
    // Among open breakers, the least recently used goes.
    trip(&mut r, "c");
    touch(&mut r, "d");
    assert_eq!(origins(&r), ["c", "d"]);
}

#[test]
fn an_idle_open_breaker_goes_before_a_busy_entry() {
    let mut r = Registry::new(2);
    let _held = hold_slot(&mut r, "a");
    trip(&mut r, "b");
    touch(&mut r, "c");
    assert_eq!(origins(&r), ["a", "c"]);
}

#[test]
fn when_every_entry_is_busy_none_goes_and_the_bound_is_exceeded_until_one_is_idle() {
    let mut r = Registry::new(2);
    let a = hold_slot(&mut r, "a");
    let _b = hold_slot(&mut r, "b");
    touch(&mut r, "c");
    assert_eq!(
        origins(&r),
        ["a", "b", "c"],
        "a busy origin keeps its bulkhead"
    );
    drop(a);
    touch(&mut r, "d");
    assert_eq!(
        origins(&r),
        ["b", "d"],
        "back to the bound once entries are idle"
    );
}

#[test]
fn tokens_are_counted_against_the_capacity_last_used() {
    let mut r = Registry::new(10);
    touch(&mut r, "fresh");
    r.with("small", |_, s| {
        assert!(s.budget.try_withdraw(5, 50));
    });
    let snap = r.stats(0.0);
    assert_eq!(
        snap[0].budget_tokens, 500,
        "a fresh origin: the default, full"
    );
    assert_eq!(snap[1].budget_tokens, 45, "45 of 50, not 495 of 500");
}

#[derive(Clone, Debug)]
enum Op {
    Touch(u8),
    /// An attempt starts on the origin (`in_flight` + 1).
    Start(u8),
    /// An attempt on the origin ends, if one is in flight.
    End(u8),
    /// A call takes a bulkhead slot of the origin.
    Hold(u8),
    /// The n-th slot held is released.
    Release(usize),
    /// The origin's breaker opens.
    Trip(u8),
}

fn op() -> impl Strategy<Value = Op> {
    let origin = 0u8..8;
    prop_oneof![
        3 => origin.clone().prop_map(Op::Touch),
        1 => origin.clone().prop_map(Op::Start),
        1 => origin.clone().prop_map(Op::End),
        1 => origin.clone().prop_map(Op::Hold),
        1 => any::<usize>().prop_map(Op::Release),
        1 => origin.prop_map(Op::Trip),
    ]
}

proptest! {
    #[test]
    fn a_busy_entry_is_never_evicted_while_an_idle_one_exists(
        max in 1u32..5,
        ops in prop::collection::vec(op(), 0..200),
    ) {
        let mut r = Registry::new(max);
        // Origins from least to most recently used, as the test sees them.
        let mut recent: Vec<String> = Vec::new();
        let mut held: Vec<BulkheadPermit> = Vec::new();
        for op in ops {
            let target = match &op {
                Op::Touch(o) | Op::Start(o) | Op::End(o) | Op::Hold(o) | Op::Trip(o) => {
                    Some(o.to_string())
                }
                Op::Release(_) => None,
            };
            let before = r.stats(0.0);
            // What should go if the target is new to a full registry: the least recently
            // used idle entry, closed breakers first; none if none is idle.
            let rank = |s: &OriginSnapshot| {
                let busy = s.stats.in_flight > 0 || s.bulkhead_active > 0 || s.bulkhead_queued > 0;
                let open = !busy && s.breaker != BreakerState::Closed;
                let age = recent.iter().position(|o| *o == s.origin);
                (busy, open, age)
            };
            let expected_victim = before
                .iter()
                .filter(|s| !rank(s).0)
                .min_by_key(|s| rank(s))
                .map(|s| s.origin.clone());
            let any_idle = before.iter().any(|s| !rank(s).0);
            match op {
                Op::Touch(o) => touch(&mut r, &o.to_string()),
                Op::Start(o) => r.with(&o.to_string(), |_, s| s.stats_mut().in_flight += 1),
                Op::End(o) => r.with(&o.to_string(), |_, s| {
                    s.stats_mut().in_flight = s.stats().in_flight.saturating_sub(1);
                }),
                Op::Hold(o) => {
                    let policy = BulkheadPolicy { max_concurrent: 100, max_queue: 0 };
                    if let Admission::Admitted(p) = r.with(&o.to_string(), |_, s| s.bulkhead.acquire(&policy)) {
                        held.push(p);
                    }
                }
                Op::Release(i) if !held.is_empty() => drop(held.swap_remove(i % held.len())),
                Op::Release(_) => {}
                Op::Trip(o) => trip(&mut r, &o.to_string()),
            }
            let after: Vec<String> = r.stats(0.0).into_iter().map(|s| s.origin).collect();
            let evicted: Vec<&OriginSnapshot> =
                before.iter().filter(|s| !after.contains(&s.origin)).collect();
            let Some(target) = target else {
                prop_assert!(evicted.is_empty());
                continue;
            };
            let was_new = !before.iter().any(|s| s.origin == target);
            if was_new {
                // Back to the bound, unless every entry kept from before is busy.
                let kept_busy = before
                    .iter()
                    .filter(|s| after.contains(&s.origin) && rank(s).0)
                    .count();
                prop_assert!(r.len() <= (max as usize).max(kept_busy + 1));
            }
            if was_new && before.len() >= max as usize && any_idle {
                prop_assert!(!evicted.is_empty());
                prop_assert!(evicted.iter().all(|s| !rank(s).0), "a busy entry was evicted");
                let first = expected_victim.as_ref();
                prop_assert!(evicted.iter().any(|s| Some(&s.origin) == first), "{:?} kept", first);
            } else if was_new && before.len() >= max as usize {
                prop_assert!(evicted.is_empty(), "every entry was busy: none may go");
            } else {
                prop_assert!(evicted.is_empty());
            }
            recent.retain(|o| !evicted.iter().any(|s| s.origin == *o) && *o != target);
            recent.push(target);
        }
    }

    #[test]
    fn never_over_its_bound(max in 1u32..8, touches in prop::collection::vec(0u8..20, 0..200)) {
        let mut r = Registry::new(max);
        let mut recent: Vec<u8> = Vec::new();
        for t in touches {
            touch(&mut r, &t.to_string());
            recent.retain(|x| *x != t);
            recent.push(t);
            prop_assert!(r.len() <= max as usize);
            // The most recently used origins are the ones kept.
            let start = recent.len().saturating_sub(max as usize);
            let mut expected: Vec<String> = recent.iter().skip(start).map(u8::to_string).collect();
            expected.sort();
            prop_assert_eq!(origins(&r), expected);
        }
    }
}
