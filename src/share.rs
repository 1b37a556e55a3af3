//! Shared origin health (`share: "name"`): what clients of one site tell each other about
//! an origin, and what they do with what they are told.
//!
//! Clients with the same share name (tabs, iframes, workers; the shell carries the notes
//! over a `BroadcastChannel`) send each other [`Note`]s about origins. Nothing but origins,
//! states and times crosses: never a URL's path or query, a header, a body or a key.
//!
//! - **Answers.** A closed breaker tells each failure, with the successes it had not told
//!   since its last note (counted in a failure-rate window only: they came before whatever
//!   run of failures the receiver counts), and each success while it has failures counted,
//!   so that every client's count is the site's: one that sends a request a minute learns
//!   the origin is down from the others, and a blip on a busy client does not open an idle
//!   one. In the healthy steady state nothing is sent.
//! - **Opened.** A breaker that opens tells until when. Every client that hears it opens
//!   as a *follower*, until one cooldown after the leader's `until`: the leader probes
//!   alone, and its outcome reaches all (`Closed`, or `Opened` again with a new `until`,
//!   which the followers follow). If the leader is gone (its tab closed), the followers
//!   probe one cooldown later. Two breakers that open at once (their notes crossing)
//!   settle on one leader: the lower rank (a random number per client), which both sides
//!   see exactly (times cross between tabs as wall-clock time, a few ms apart); a leader
//!   whose own cooldown has run out follows a peer's reopening.
//! - **Closed.** A probe succeeded: every breaker of the origin closes.
//! - **Hold.** An origin-wide wait (a `Retry-After` on a 429 or 503, a spent rate-limit
//!   quota): every client holds its sends until then.
//! - **Hello.** A client that starts asks; the others answer with what they hold now.
//!
//! A note never takes a breaker where its own answers could not: an `Opened` lasts at most
//! the receiver's cooldown, a `Hold` at most its `retry.maxRetryAfterMs`, and a malformed
//! note, or one of another protocol version, is dropped ([`Note::decode`]). Sharing is a
//! hint: no call ever waits for a note.

use crate::breaker::Breaker;
use crate::breaker::Transition;
use crate::pacing::Pacer;
use crate::policy::Policy;
use crate::vocab::Judgement;

/// The protocol's version; notes of any other are ignored. It crosses to JS as
/// `SHARE_VERSION` (js/errors.js and pkg-template/full/edge.js hold it, generated from here
/// by scripts/codes.mjs).
pub const VERSION: u32 = 1;

/// A note's kind as it crosses to peers: the first number of [`Note::encode`]. JS has it as
/// `NOTE_KIND_HELLO` … (js/errors.js and pkg-template/full/edge.js, generated from this enum
/// by scripts/codes.mjs).
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoteKind {
    /// [`Note::Hello`].
    Hello = 0,
    /// [`Note::Failed`].
    Failed = 1,
    /// [`Note::Succeeded`].
    Succeeded = 2,
    /// [`Note::Opened`].
    Opened = 3,
    /// [`Note::Closed`].
    Closed = 4,
    /// [`Note::Hold`].
    Hold = 5,
}

/// One thing a client tells its peers about an origin. Times are monotonic ms of the
/// client that holds the note (the shell converts them to and from wall-clock time).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Note {
    /// A client starts: tell it what you know.
    Hello,
    /// An attempt failed, by the breaker's rule, after `successes` of the sender's own
    /// answers it had not told (so that peers count the site's answers, not its failures
    /// alone).
    Failed {
        /// The sender's successes since its last note.
        successes: u32,
    },
    /// An attempt succeeded while the breaker counted failures.
    Succeeded,
    /// A breaker opened until `until`; `rank` breaks ties between leaders.
    Opened {
        /// When its probe may go.
        until: f64,
        /// The sender's rank.
        rank: u32,
    },
    /// A probe succeeded: the breaker closed.
    Closed,
    /// No sends to the origin before `until`.
    Hold {
        /// When sends may go again.
        until: f64,
    },
}

impl Note {
    /// The note as `(kind, time, rank)` numbers, as they cross to peers (the shell converts
    /// the time to wall-clock time and back; the third number crosses as it is).
    pub fn encode(self) -> (u32, f64, u32) {
        let (kind, time, rank) = match self {
            Note::Hello => (NoteKind::Hello, 0.0, 0),
            // The count rides in the rank's place: the time's is converted to wall-clock time.
            Note::Failed { successes } => (NoteKind::Failed, 0.0, successes),
            Note::Succeeded => (NoteKind::Succeeded, 0.0, 0),
            Note::Opened { until, rank } => (NoteKind::Opened, until, rank),
            Note::Closed => (NoteKind::Closed, 0.0, 0),
            Note::Hold { until } => (NoteKind::Hold, until, 0),
        };
        (kind as u32, time, rank)
    }

    /// A note from its numbers; None for an unknown kind or a time that is not finite.
    pub fn decode(kind: u32, time: f64, rank: u32) -> Option<Note> {
        let until = time.is_finite().then_some(time);
        const HELLO: u32 = NoteKind::Hello as u32;
        const FAILED: u32 = NoteKind::Failed as u32;
        const SUCCEEDED: u32 = NoteKind::Succeeded as u32;
        const OPENED: u32 = NoteKind::Opened as u32;
        const CLOSED: u32 = NoteKind::Closed as u32;
        const HOLD: u32 = NoteKind::Hold as u32;
        Some(match kind {
            HELLO => Note::Hello,
            FAILED => Note::Failed { successes: rank },
            SUCCEEDED => Note::Succeeded,
            OPENED => Note::Opened {
                until: until?,
                rank,
            },
            CLOSED => Note::Closed,
            HOLD => Note::Hold { until: until? },
            _ => return None,
        })
    }
}

/// Applies a peer's note about one origin to its state under `policy` (the receiving
/// client's); `rank` is the receiver's. Returns the breaker transition it caused.
pub fn apply(
    (breaker_state, pacer): (&mut Breaker, &mut Pacer),
    note: Note,
    now: f64,
    policy: &Policy,
    rank: u32,
) -> Option<Transition> {
    let breaker = policy.breaker.as_ref();
    match (note, breaker) {
        (Note::Failed { successes }, Some(b)) => {
            // Its successes first (in a failure-rate window only), then the failure.
            breaker_state.observe_successes(successes, now, b);
            breaker_state.observe(true, now, b)
        }
        (Note::Succeeded, Some(b)) => breaker_state.observe(false, now, b),
        (
            Note::Opened {
                until,
                rank: theirs,
            },
            Some(b),
        ) => breaker_state.follow(until, (theirs, rank), now, b),
        (Note::Closed, Some(_)) => breaker_state.close(),
        (Note::Hold { until }, _) if policy.paced() => {
            pacer.hold(until.min(now + f64::from(policy.max_retry_after_ms())));
            None
        }
        _ => None,
    }
}

/// What a client that starts is told of an origin: its breaker's open period, and its wait.
pub fn describe(breaker: &Breaker, pacer: &Pacer, now: f64, rank: u32) -> [Option<Note>; 2] {
    [
        breaker
            .shared(rank)
            .filter(|(until, _)| *until > now)
            .map(|(until, rank)| Note::Opened { until, rank }),
        pacer
            .wait(now)
            .map(|(ms, _)| Note::Hold { until: now + ms }),
    ]
}

/// What one recorded answer tells the peers: `failing` is whether the breaker counted
/// failures before it ([`crate::breaker::Breaker::is_failing`]), `waited` whether the
/// origin had a wait before it; the breaker and the pacer are after it. A success while the
/// origin is healthy is not told at once: it is counted (`untold`) and told with the next
/// failure.
pub fn told(
    (breaker_state, pacer, untold): (&Breaker, &Pacer, &mut u32),
    (failing, waited): (bool, bool),
    judgement: Judgement,
    transition: Option<Transition>,
    now: f64,
    rank: u32,
) -> [Option<Note>; 2] {
    use crate::breaker::BreakerState::{Closed, Open};
    let breaker = match transition {
        Some(t) if t.to == Open => {
            (breaker_state.shared(rank)).map(|(until, rank)| Note::Opened { until, rank })
        }
        Some(t) if t.to == Closed => Some(Note::Closed),
        Some(_) => None,
        None => match judgement {
            Judgement::Failure if breaker_state.is_closed() => Some(Note::Failed {
                successes: std::mem::take(untold),
            }),
            Judgement::Success if failing => Some(Note::Succeeded),
            Judgement::Success => {
                *untold = untold.saturating_add(1);
                None
            }
            _ => None,
        },
    };
    let hold = match pacer.wait(now) {
        Some((ms, _)) if !waited => Some(Note::Hold { until: now + ms }),
        _ => None,
    };
    [breaker, hold]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::breaker::BreakerState;
    use crate::origin::OriginState;

    // The rules over a whole origin's state, as its owner applies them.
    fn apply(
        s: &mut OriginState,
        note: Note,
        now: f64,
        p: &Policy,
        rank: u32,
    ) -> Option<Transition> {
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
}

mod stage;
