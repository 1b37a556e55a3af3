//! What a client does with a peer's note ([`apply`]), what it tells a client that starts
//! ([`describe`]), and what one recorded answer tells its peers ([`told`]).

use super::Note;
use crate::breaker::Breaker;
use crate::breaker::Transition;
use crate::pacing::Pacer;
use crate::policy::Policy;
use crate::vocab::Judgement;

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
