//! The share rules' tests, over a whole origin's state as its owner applies them.

use super::*;
use crate::breaker::BreakerState;
use crate::breaker::Transition;
use crate::origin::OriginState;
use crate::policy::Policy;
use crate::vocab::Judgement;

// The rules over a whole origin's state, as its owner applies them.
fn apply(s: &mut OriginState, note: Note, now: f64, p: &Policy, rank: u32) -> Option<Transition> {
    s.hear(note, now, p, rank)
}
fn describe(s: &OriginState, now: f64, rank: u32) -> [Option<Note>; 2] {
    s.describe(now, rank)
}
fn told(
    s: &mut OriginState,
    before: (bool, bool),
    j: Judgement,
    t: Option<Transition>,
    now: f64,
    rank: u32,
) -> [Option<Note>; 2] {
    super::told(
        (&s.breaker, &s.pacer, &mut s.untold),
        before,
        j,
        t,
        now,
        rank,
    )
}
use crate::policy::PolicyInput;

fn policy(cooldown: u32) -> Policy {
    let input: PolicyInput = serde_json::from_value(serde_json::json!({
        "breaker": { "failureThreshold": 3, "cooldownMs": cooldown, "halfOpenMaxCalls": 1 },
        "retry": { "maxRetryAfterMs": 5000 },
    }))
    .unwrap_or_default();
    Policy::from_input(&input).unwrap_or_else(|e| panic!("{}", e.message))
}

fn state() -> OriginState {
    OriginState::default()
}

/// An origin whose breaker tripped on its own at `at` under `p` (3 failures): it leads,
/// open until `at` plus the cooldown.
fn tripped(at: f64, p: &Policy) -> OriginState {
    let b = p.breaker.as_ref().expect("breaker on");
    let mut s = state();
    for _ in 0..3 {
        let _ = s.breaker.observe(true, at, b);
    }
    s
}

#[test]
fn notes_round_trip_and_bad_ones_are_dropped() {
    for note in [
        Note::Hello,
        Note::Failed { successes: 3 },
        Note::Succeeded,
        Note::Opened {
            until: 12.5,
            rank: 7,
        },
        Note::Closed,
        Note::Hold { until: 99.0 },
    ] {
        let (kind, time, rank) = note.encode();
        assert_eq!(Note::decode(kind, time, rank), Some(note));
    }
    assert_eq!(Note::decode(6, 0.0, 0), None);
    // The shell converts times to and from wall-clock time: a count never rides there.
    assert_eq!(
        Note::decode(1, 1.8e12, 5),
        Some(Note::Failed { successes: 5 })
    );
    assert_eq!(Note::decode(3, f64::NAN, 0), None);
    assert_eq!(Note::decode(5, f64::INFINITY, 0), None);
}

#[test]
fn peers_failures_count_and_a_success_resets_them() {
    let p = policy(1000);
    let mut s = state();
    assert_eq!(
        apply(&mut s, Note::Failed { successes: 0 }, 0.0, &p, 1),
        None
    );
    assert_eq!(
        apply(&mut s, Note::Failed { successes: 0 }, 1.0, &p, 1),
        None
    );
    assert_eq!(apply(&mut s, Note::Succeeded, 2.0, &p, 1), None);
    assert_eq!(
        apply(&mut s, Note::Failed { successes: 0 }, 3.0, &p, 1),
        None
    );
    assert_eq!(
        apply(&mut s, Note::Failed { successes: 0 }, 4.0, &p, 1),
        None
    );
    let t = apply(&mut s, Note::Failed { successes: 0 }, 5.0, &p, 1).map(|t| t.to);
    assert_eq!(t, Some(BreakerState::Open));
    // Tripped by peers' answers: it leads (until its own cooldown), so it tells.
    assert_eq!(s.breaker.shared(1).map(|s| s.0), Some(1005.0));
}

#[test]
fn a_follower_waits_one_cooldown_past_the_leader_and_follows_its_reopening() {
    let p = policy(1000);
    let mut s = state();
    let t = apply(
        &mut s,
        Note::Opened {
            until: 1000.0,
            rank: 5,
        },
        0.0,
        &p,
        9,
    );
    assert_eq!(
        t.map(|t| (t.from, t.to)),
        Some((BreakerState::Closed, BreakerState::Open))
    );
    assert_eq!(s.breaker.open_until(), Some(2000.0));
    assert_eq!(s.breaker.shared(1).map(|s| s.0), Some(1000.0));
    // The leader's probe failed at 1010: open until 2010, the follower until 3010.
    assert_eq!(
        apply(
            &mut s,
            Note::Opened {
                until: 2010.0,
                rank: 5
            },
            1010.0,
            &p,
            9
        ),
        None
    );
    assert_eq!(s.breaker.open_until(), Some(3010.0));
    // A late, older note does not shorten it.
    assert_eq!(
        apply(
            &mut s,
            Note::Opened {
                until: 1500.0,
                rank: 5
            },
            1011.0,
            &p,
            9
        ),
        None
    );
    assert_eq!(s.breaker.open_until(), Some(3010.0));
    // The leader's next probe succeeded: closed at once.
    let t = apply(&mut s, Note::Closed, 2020.0, &p, 9).map(|t| t.to);
    assert_eq!(t, Some(BreakerState::Closed));
    assert_eq!(apply(&mut s, Note::Closed, 2021.0, &p, 9), None);
}

#[test]
fn two_leaders_settle_on_the_lower_rank() {
    let p = policy(1000);
    // Leader A opened until 1000 (rank 4); B until 1000 (rank 2): A follows B.
    let mut a = tripped(0.0, &p);
    assert_eq!(a.breaker.shared(4).map(|s| s.0), Some(1000.0));
    let _ = apply(
        &mut a,
        Note::Opened {
            until: 1000.0,
            rank: 2,
        },
        10.0,
        &p,
        4,
    );
    assert_eq!(
        a.breaker.open_until(),
        Some(2000.0),
        "the higher rank follows"
    );
    // B hears A (rank 4): B keeps leading.
    let mut b = tripped(0.0, &p);
    assert_eq!(
        apply(
            &mut b,
            Note::Opened {
                until: 1000.0,
                rank: 4
            },
            10.0,
            &p,
            2
        ),
        None
    );
    assert_eq!(b.breaker.open_until(), Some(1000.0));
    // The lower rank leads whatever the untils (times cross between tabs only roughly).
    let mut c = tripped(0.0, &p);
    let _ = apply(
        &mut c,
        Note::Opened {
            until: 900.0,
            rank: 99,
        },
        10.0,
        &p,
        1,
    );
    assert_eq!(c.breaker.open_until(), Some(1000.0));
}

#[test]
fn two_leaders_that_opened_ms_apart_settle_on_one_whatever_their_clocks_say() {
    let p = policy(1000);
    // A opened at 0 (rank 4), B at `gap` ms (rank 2); each hears the other's until off
    // by up to ±5 ms (a note's time crosses as wall-clock time).
    for gap in [0.0, 1.0, 2.0, 5.0, 20.0, 45.0, 50.0, 55.0, 300.0] {
        for (skew_a, skew_b) in [
            (-5.0, 5.0),
            (5.0, -5.0),
            (0.0, 0.0),
            (-5.0, -5.0),
            (5.0, 5.0),
        ] {
            let (mut a, mut b) = (tripped(0.0, &p), tripped(gap, &p));
            let (until_a, until_b) = (1000.0, 1000.0 + gap);
            let hears = |s: &mut OriginState, until: f64, theirs: u32, mine: u32| {
                let _ = apply(
                    s,
                    Note::Opened {
                        until,
                        rank: theirs,
                    },
                    gap + 1.0,
                    &p,
                    mine,
                );
            };
            hears(&mut a, until_b + skew_a, 2, 4);
            hears(&mut b, until_a + skew_b, 4, 2);
            // A leader is open until its own until; a follower a cooldown past the leader's.
            let leading = |s: &OriginState, own: f64| s.breaker.open_until() == Some(own);
            assert_eq!(
                (leading(&a, until_a), leading(&b, until_b)),
                (false, true),
                "gap {gap}, skews {skew_a} {skew_b}: one leader, the lower rank"
            );
        }
    }
}

#[test]
fn a_leader_hearing_itself_passed_on_keeps_leading() {
    let p = policy(1000);
    let mut leader = tripped(0.0, &p);
    // A follower tells a new client what it follows: the leader's until and rank.
    let mut follower = state();
    let _ = apply(
        &mut follower,
        Note::Opened {
            until: 1000.0,
            rank: 7,
        },
        1.0,
        &p,
        2,
    );
    assert_eq!(
        describe(&follower, 2.0, 2)[0],
        Some(Note::Opened {
            until: 1000.0,
            rank: 7
        })
    );
    // The leader hears it back, its until a little off (wall-clock conversion): still
    // about itself, so it keeps leading.
    assert_eq!(
        apply(
            &mut leader,
            Note::Opened {
                until: 999.2,
                rank: 7
            },
            3.0,
            &p,
            7
        ),
        None
    );
    assert_eq!(leader.breaker.open_until(), Some(1000.0));
}

#[test]
fn late_successes_do_not_break_a_run_of_failures() {
    // Consecutive rule (threshold 3): a peer's first failure brings its earlier
    // successes; they happened before the run this breaker counts, so the run goes on.
    let p = policy(1000);
    let mut s = state();
    assert_eq!(
        apply(&mut s, Note::Failed { successes: 0 }, 0.0, &p, 1),
        None
    );
    assert_eq!(
        apply(&mut s, Note::Failed { successes: 40 }, 1.0, &p, 1),
        None
    );
    let t = apply(&mut s, Note::Failed { successes: 7 }, 2.0, &p, 1).map(|t| t.to);
    assert_eq!(t, Some(BreakerState::Open));
}

#[test]
fn a_leader_whose_cooldown_ran_out_follows_a_peers_reopening() {
    let p = policy(1000);
    let mut leader = tripped(0.0, &p);
    // Idle past its until (1000): a follower probed, failed, and opened until 2100.
    let note = Note::Opened {
        until: 2100.0,
        rank: 9,
    };
    assert_eq!(
        apply(&mut leader, note, 1100.0, &p, 1),
        None,
        "open to open"
    );
    assert_eq!(
        leader.breaker.open_until(),
        Some(3100.0),
        "it follows: no extra probe at once"
    );
}

#[test]
fn notes_never_go_past_what_the_receiver_would_reach_itself() {
    let p = policy(1000);
    let mut s = state();
    // An "open for a day" note: open for one cooldown (plus the follower's one).
    let _ = apply(
        &mut s,
        Note::Opened {
            until: 86_400_000.0,
            rank: 1,
        },
        0.0,
        &p,
        2,
    );
    assert_eq!(s.breaker.shared(1).map(|s| s.0), Some(1000.0));
    assert_eq!(s.breaker.open_until(), Some(2000.0));
    // A hold of an hour: at most retry.maxRetryAfterMs.
    let _ = apply(&mut s, Note::Hold { until: 3_600_000.0 }, 0.0, &p, 2);
    assert_eq!(s.pacer.wait(0.0).map(|(ms, _)| ms), Some(5000.0));
}

#[test]
fn a_client_without_a_breaker_or_pacing_ignores_notes() {
    let input: PolicyInput = serde_json::from_value(serde_json::json!({
        "breaker": false, "rateLimit": false,
    }))
    .unwrap_or_default();
    let p = Policy::from_input(&input).unwrap_or_else(|e| panic!("{}", e.message));
    let mut s = state();
    for note in [
        Note::Failed { successes: 0 },
        Note::Opened {
            until: 10.0,
            rank: 0,
        },
        Note::Hold { until: 10.0 },
    ] {
        assert_eq!(apply(&mut s, note, 0.0, &p, 1), None);
    }
    assert!(s.breaker.is_closed());
    assert_eq!(s.pacer.wait(0.0), None);
}

#[test]
fn answers_tell_failures_with_the_successes_before_them_and_transitions_and_new_waits() {
    let p = policy(1000);
    let bp = p.breaker.clone().expect("breaker on");
    let mut s = state();
    let told_now = |s: &mut OriginState, failing, j, t| told(s, (failing, false), j, t, 0.0, 3);
    // Healthy: a success says nothing now; it is told with the next failure.
    assert_eq!(
        told_now(&mut s, false, Judgement::Success, None),
        [None, None]
    );
    assert_eq!(
        told_now(&mut s, false, Judgement::Success, None),
        [None, None]
    );
    let _ = s.breaker.observe(true, 0.0, &bp);
    assert_eq!(
        told_now(&mut s, false, Judgement::Failure, None),
        [Some(Note::Failed { successes: 2 }), None]
    );
    assert_eq!(
        told_now(&mut s, false, Judgement::Failure, None)[0],
        Some(Note::Failed { successes: 0 }),
        "told once"
    );
    assert_eq!(
        told_now(&mut s, true, Judgement::Success, None),
        [Some(Note::Succeeded), None]
    );
    assert_eq!(
        told_now(&mut s, false, Judgement::Unjudged, None),
        [None, None]
    );
    let _ = s.breaker.observe(true, 0.0, &bp);
    let t = s.breaker.observe(true, 0.0, &bp);
    assert_eq!(
        told_now(&mut s, true, Judgement::Failure, t)[0],
        Some(Note::Opened {
            until: 1000.0,
            rank: 3
        })
    );
    let t = s.breaker.close();
    assert_eq!(
        told_now(&mut s, false, Judgement::Success, t)[0],
        Some(Note::Closed)
    );
    s.pacer.hold(300.0);
    assert_eq!(
        told(&mut s, (false, false), Judgement::Failure, None, 0.0, 3)[1],
        Some(Note::Hold { until: 300.0 })
    );
    assert_eq!(
        told(&mut s, (false, true), Judgement::Failure, None, 0.0, 3)[1],
        None,
        "a wait it had is not news"
    );
    assert_eq!(
        describe(&s, 0.0, 3),
        [None, Some(Note::Hold { until: 300.0 })]
    );
}

#[test]
fn a_blip_on_a_busy_client_does_not_trip_an_idle_peer() {
    // The default rule: half of at least 10 calls over 30 s.
    let p = Policy::default();
    let bp = p.breaker.clone().expect("breaker on");
    let (mut busy, mut idle) = (state(), state());
    let mut notes = Vec::new();
    for i in 0..600 {
        let _ = busy.breaker.observe(false, f64::from(i), &bp);
        notes.extend(told(
            &mut busy,
            (false, false),
            Judgement::Success,
            None,
            0.0,
            1,
        ));
    }
    for i in 0..10 {
        let failing = busy.breaker.is_failing();
        let t = busy.breaker.observe(true, 600.0 + f64::from(i), &bp);
        notes.extend(told(
            &mut busy,
            (failing, false),
            Judgement::Failure,
            t,
            0.0,
            1,
        ));
    }
    assert!(
        busy.breaker.is_closed(),
        "10 failures in 610 calls do not trip the busy one"
    );
    for note in notes.into_iter().flatten() {
        assert_eq!(apply(&mut idle, note, 610.0, &p, 2), None);
    }
    assert!(
        idle.breaker.is_closed(),
        "nor the idle peer that counted the same answers"
    );
}
