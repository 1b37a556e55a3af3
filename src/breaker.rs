//! The circuit breaker of one origin.
//!
//! Closed lets calls through and counts failures; when they trip it (too many in a row, or
//! too high a share of a window) it opens and rejects calls for `cooldownMs`. Then it is
//! half-open: up to `halfOpenMaxCalls` trial calls (probes) go through; a successful probe
//! closes it, a failed one opens it again. There are no timers: an open breaker whose
//! cooldown has passed becomes half-open when next asked.
//!
//! The policy comes in at each call, so calls with different policies can share an origin.
//! A permit counts only in the state it was issued in: every transition starts a new
//! period, and answers of calls from an older period are ignored.

pub use crate::policy::MAX_WINDOW_CALLS;
use crate::policy::{BreakerPolicy, TripRule, Window};
use crate::vocab::Judgement;
pub use crate::vocab::{BreakerState, OpenReason, Transition};
use std::collections::VecDeque;

/// Leave to make one call; hand it back to [`Breaker::record`] with the call's result.
#[derive(Debug, PartialEq, Eq)]
#[must_use = "a permit must be recorded, or a probe slot stays taken"]
pub struct Permit {
    probe: bool,
    period: u32,
    transition: Option<Transition>,
}

impl Permit {
    /// Whether this call is a half-open trial.
    pub fn is_probe(&self) -> bool {
        self.probe
    }

    /// The transition that issuing this permit caused (open → half-open), if any.
    pub fn transition(&self) -> Option<Transition> {
        self.transition
    }
}

/// The breaker refused a call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rejected {
    /// When to try again, in ms from now (while half-open: the cooldown, an upper estimate).
    pub retry_after_ms: f64,
}

/// One origin's breaker.
#[derive(Debug, Default)]
pub struct Breaker {
    phase: Phase,
    /// Counts transitions; permits of an older period are ignored (wraps).
    period: u32,
    /// Reopenings from half-open since it last closed: each doubles the next cooldown, up to
    /// `maxCooldownMs` ([`cooldown`]).
    reopenings: u32,
}

/// The states, each with its own data. `by`: the rule that opened it (kept through its
/// reopenings, until it closes).
#[derive(Debug)]
enum Phase {
    Closed(Health),
    /// `led`: the leader's `until` and rank when this breaker follows a peer's (src/share/rules.rs): it
    /// then waits one cooldown longer than the leader, who probes first.
    Open {
        until_ms: f64,
        led: Option<(f64, u32)>,
        by: OpenReason,
    },
    /// `draw`: the random number in [0, 1) that jitters the cooldown if a probe fails.
    HalfOpen {
        probes_in_flight: u32,
        draw: f64,
        by: OpenReason,
    },
}

/// The cooldown in ms after the `n`th reopening in a row (0: the opening itself, always
/// `cooldownMs`): `cooldownMs` doubled `n` times, at most `maxCooldownMs`, then drawn from
/// the upper half of that by `draw` in [0, 1) ("equal jitter": the probes of a fleet that
/// opened together spread apart), never below `cooldownMs`. Envoy's outlier ejection grows
/// the same way; a close starts again from `cooldownMs`.
pub fn cooldown(policy: &BreakerPolicy, n: u32, draw: f64) -> f64 {
    let base = f64::from(policy.cooldown_ms);
    if n == 0 || policy.max_cooldown_ms <= policy.cooldown_ms {
        return base;
    }
    let max = f64::from(policy.max_cooldown_ms);
    let mut grown = base;
    for _ in 0..n.min(32) {
        grown = (grown * 2.0).min(max);
    }
    (grown * (0.5 + draw / 2.0)).max(base)
}

impl Default for Phase {
    fn default() -> Self {
        Phase::Closed(Health::default())
    }
}

/// What a closed breaker knows about recent calls.
#[derive(Debug, Default)]
struct Health {
    consecutive_failures: u32,
    /// Failure-rate mode only: recent calls, oldest first.
    window: VecDeque<Sample>,
    window_failures: u32,
    /// Of them, the slow ones (counted only with the slow-call rule on).
    window_slow: u32,
}

#[derive(Debug)]
struct Sample {
    at_ms: f64,
    failed: bool,
    slow: bool,
}

impl Breaker {
    /// A closed breaker.
    pub fn new() -> Self {
        Self::default()
    }

    /// The state at `now_ms`; an open breaker whose cooldown has passed reports half-open.
    pub fn state(&self, now_ms: f64) -> BreakerState {
        match self.phase {
            Phase::Closed(_) => BreakerState::Closed,
            Phase::Open { until_ms, .. } if now_ms < until_ms => BreakerState::Open,
            Phase::Open { .. } | Phase::HalfOpen { .. } => BreakerState::HalfOpen,
        }
    }

    /// Whether it is closed now (has not tripped). Unlike [`Breaker::state`] this needs no
    /// time: an open breaker whose cooldown has passed is not closed either.
    pub fn is_closed(&self) -> bool {
        matches!(self.phase, Phase::Closed(_))
    }

    /// When an open breaker lets a probe through (None unless open).
    pub fn open_until(&self) -> Option<f64> {
        match self.phase {
            Phase::Open { until_ms, .. } => Some(until_ms),
            _ => None,
        }
    }

    /// The open period it tells peers of, as `(until, rank)`: its own `until` and rank
    /// (`mine`) when it leads, the leader's when it follows (None unless open).
    pub fn shared(&self, mine: u32) -> Option<(f64, u32)> {
        match self.phase {
            Phase::Open { until_ms, led, .. } => Some(led.unwrap_or((until_ms, mine))),
            _ => None,
        }
    }

    /// The rule that opened it, while it is open or half-open (None when closed).
    pub fn opened_by(&self) -> Option<OpenReason> {
        match self.phase {
            Phase::Closed(_) => None,
            Phase::Open { by, .. } | Phase::HalfOpen { by, .. } => Some(by),
        }
    }

    /// Whether a closed breaker has seen failures since its last success or trip (what a
    /// peer's count would miss if it were not told of the next success).
    pub fn is_failing(&self) -> bool {
        match &self.phase {
            Phase::Closed(h) => h.consecutive_failures > 0 || h.window_failures > 0,
            _ => false,
        }
    }

    /// A peer's answer from this origin, counted as one of its own would be (closed only);
    /// returns the transition if it trips the breaker.
    pub fn observe(
        &mut self,
        failed: bool,
        now_ms: f64,
        policy: &BreakerPolicy,
    ) -> Option<Transition> {
        let Phase::Closed(health) = &mut self.phase else {
            return None;
        };
        let by = health.record(failed, false, now_ms, policy)?;
        Some(self.open(now_ms + f64::from(policy.cooldown_ms), None, by, by))
    }

    /// A peer's successes told late (with its next failure): counted in a failure-rate
    /// window, so that the rate is the site's; not in a run of failures (they came before
    /// whatever failures this breaker has counted since, so they break no run). At most a
    /// window's worth.
    pub fn observe_successes(&mut self, n: u32, now_ms: f64, policy: &BreakerPolicy) {
        if let (Phase::Closed(health), TripRule::FailureRate { window, .. }) =
            (&mut self.phase, policy.trip)
        {
            for _ in 0..n.min(MAX_WINDOW_CALLS as u32) {
                health.push(false, false, now_ms, window);
            }
        }
    }

    /// A peer's breaker opened until `until_ms` (at most a cooldown from now, as its own
    /// would): this one follows it, open until a cooldown after the leader's `until` (so
    /// that the leader probes alone; if the leader is gone, it probes itself then). Two
    /// breakers that both lead (they opened at once, their notes crossing) settle on the
    /// lower `rank` (`mine` is this breaker's): ranks are exact where times are not (a
    /// peer's `until` crosses as wall-clock time, so two tabs agree on it only to a few ms,
    /// and two breakers that opened 2 ms apart both led when the earlier `until` decided).
    /// Returns the transition, if any.
    pub fn follow(
        &mut self,
        until_ms: f64,
        (rank, mine): (u32, u32),
        now_ms: f64,
        policy: &BreakerPolicy,
    ) -> Option<Transition> {
        let cooldown = f64::from(policy.cooldown_ms);
        // A leader's cooldown grows with its reopenings: at most maxCooldownMs from now.
        let until_ms = until_ms.min(now_ms + f64::from(policy.max_cooldown_ms));
        match &mut self.phase {
            // About itself (its own note, passed on by a peer), or a later leader's while its
            // own cooldown runs (once it has run out, a peer's reopening is news: follow it).
            Phase::Open {
                until_ms: own,
                led: None,
                ..
            } if rank == mine || (*own > now_ms && mine < rank) => None,
            Phase::Open {
                until_ms: own,
                led: Some(led),
                ..
            } => {
                if led.0 < until_ms {
                    *led = (until_ms, rank);
                    *own = until_ms + cooldown;
                }
                None
            }
            _ => {
                let by = self.opened_by().unwrap_or(OpenReason::Peer);
                let t = self.open(
                    until_ms + cooldown,
                    Some((until_ms, rank)),
                    by,
                    OpenReason::Peer,
                );
                (t.from != t.to).then_some(t)
            }
        }
    }

    /// A peer's probe succeeded: closes this breaker too (with a fresh history).
    pub fn close(&mut self) -> Option<Transition> {
        (!self.is_closed()).then(|| self.enter(Phase::default()))
    }

    /// Opens it until `until_ms`; `by` is kept for its stats, `reason` goes with the transition.
    fn open(
        &mut self,
        until_ms: f64,
        led: Option<(f64, u32)>,
        by: OpenReason,
        reason: OpenReason,
    ) -> Transition {
        Transition {
            reason: Some(reason),
            ..self.enter(Phase::Open { until_ms, led, by })
        }
    }

    /// Probes currently out (0 unless half-open).
    pub fn probes_in_flight(&self) -> u32 {
        match self.phase {
            Phase::HalfOpen {
                probes_in_flight, ..
            } => probes_in_flight,
            _ => 0,
        }
    }

    /// In how long a call may go, when [`Breaker::try_acquire`] would refuse one at `now_ms`;
    /// nothing changes.
    pub fn refusal(&self, now_ms: f64, policy: &BreakerPolicy) -> Option<f64> {
        match self.phase {
            Phase::Open { until_ms, .. } if now_ms < until_ms => Some(until_ms - now_ms),
            Phase::HalfOpen {
                probes_in_flight, ..
            } if probes_in_flight >= policy.half_open_max_calls => {
                Some(f64::from(policy.cooldown_ms))
            }
            _ => None,
        }
    }

    /// Asks leave to make a call. `random` (uniform in [0, 1)) is asked only when the
    /// breaker turns half-open with a cooldown that can grow: it jitters the next one.
    pub fn try_acquire(
        &mut self,
        now_ms: f64,
        policy: &BreakerPolicy,
        random: &dyn Fn() -> f64,
    ) -> Result<Permit, Rejected> {
        let mut transition = None;
        if let Phase::Open { until_ms, by, .. } = self.phase {
            if now_ms < until_ms {
                return Err(Rejected {
                    retry_after_ms: until_ms - now_ms,
                });
            }
            let grows = policy.max_cooldown_ms > policy.cooldown_ms;
            transition = Some(self.enter(Phase::HalfOpen {
                probes_in_flight: 0,
                draw: if grows { random() } else { 0.0 },
                by,
            }));
        }
        let probe = match &mut self.phase {
            Phase::Closed(_) => false,
            Phase::HalfOpen {
                probes_in_flight, ..
            } if *probes_in_flight < policy.half_open_max_calls => {
                *probes_in_flight += 1;
                true
            }
            Phase::HalfOpen { .. } | Phase::Open { .. } => {
                return Err(Rejected {
                    retry_after_ms: f64::from(policy.cooldown_ms),
                });
            }
        };
        Ok(Permit {
            probe,
            period: self.period,
            transition,
        })
    }

    /// Records a permitted call's result: a failure, a success, or unjudged (it decides
    /// nothing; a probe's slot is freed); `slow`: its answer took longer than the slow-call
    /// rule's `slowCallMs` (ignored without the rule). Returns the transition it caused.
    pub fn record(
        &mut self,
        permit: Permit,
        judgement: Judgement,
        slow: bool,
        now_ms: f64,
        policy: &BreakerPolicy,
    ) -> Option<Transition> {
        if permit.period != self.period {
            return None;
        }
        let slow = slow && matches!(policy.trip, TripRule::FailureRate { slow: Some(_), .. });
        match &mut self.phase {
            Phase::HalfOpen {
                probes_in_flight,
                draw,
                by,
            } if permit.probe => {
                *probes_in_flight = probes_in_flight.saturating_sub(1);
                // A slow probe says the origin is still slow: it reopens as a failed one does.
                match judgement {
                    Judgement::Failure => {}
                    Judgement::Success if slow => {}
                    Judgement::Success => return Some(self.enter(Phase::default())),
                    Judgement::Unjudged => return None,
                }
                let (draw, by) = (*draw, *by);
                self.reopenings = self.reopenings.saturating_add(1);
                let until = now_ms + cooldown(policy, self.reopenings, draw);
                Some(self.open(until, None, by, OpenReason::Probe))
            }
            Phase::Closed(health) if !permit.probe && judgement != Judgement::Unjudged => {
                let by = health.record(judgement == Judgement::Failure, slow, now_ms, policy)?;
                Some(self.open(now_ms + f64::from(policy.cooldown_ms), None, by, by))
            }
            _ => None,
        }
    }

    /// Closes the breaker and forgets its history; permits out now are ignored when recorded.
    pub fn reset(&mut self) {
        self.enter(Phase::default());
    }

    /// Enters `phase` (a closed one starts the cooldowns from `cooldownMs` again); the
    /// transition has no reason ([`Breaker::open`] gives it one).
    fn enter(&mut self, phase: Phase) -> Transition {
        let from = self.kind();
        self.phase = phase;
        self.period = self.period.wrapping_add(1);
        if self.is_closed() {
            self.reopenings = 0;
        }
        Transition {
            from,
            to: self.kind(),
            reason: None,
        }
    }

    fn kind(&self) -> BreakerState {
        match self.phase {
            Phase::Closed(_) => BreakerState::Closed,
            Phase::Open { .. } => BreakerState::Open,
            Phase::HalfOpen { .. } => BreakerState::HalfOpen,
        }
    }
}

impl Health {
    /// Counts one call (`slow` only with the slow-call rule on); the rule that trips, when
    /// the breaker should open. A call trips only the rule it counts for: a failure the
    /// failure rate, a slow call the slow-call rate.
    fn record(
        &mut self,
        failed: bool,
        slow: bool,
        now_ms: f64,
        policy: &BreakerPolicy,
    ) -> Option<OpenReason> {
        self.consecutive_failures = if failed {
            self.consecutive_failures.saturating_add(1)
        } else {
            0
        };
        match policy.trip {
            TripRule::Consecutive { failure_threshold } => {
                (self.consecutive_failures >= failure_threshold).then_some(OpenReason::Failures)
            }
            TripRule::FailureRate {
                threshold,
                minimum_calls,
                window,
                slow: rule,
            } => {
                self.push(failed, slow, now_ms, window);
                let total = self.window.len() as f64;
                let reached = |n: u32, threshold: f64| f64::from(n) / total >= threshold;
                if total < f64::from(minimum_calls) {
                    None
                } else if failed && reached(self.window_failures, threshold) {
                    Some(OpenReason::FailureRate)
                } else if slow && rule.is_some_and(|r| reached(self.window_slow, r.threshold)) {
                    Some(OpenReason::SlowCallRate)
                } else {
                    None
                }
            }
        }
    }

    fn push(&mut self, failed: bool, slow: bool, now_ms: f64, window: Window) {
        self.window.push_back(Sample {
            at_ms: now_ms,
            failed,
            slow,
        });
        self.window_failures += u32::from(failed);
        self.window_slow += u32::from(slow);
        let (cap, oldest_kept) = match window {
            Window::Count(size) => (size as usize, f64::NEG_INFINITY),
            Window::Time(ms) => (MAX_WINDOW_CALLS, now_ms - f64::from(ms)),
        };
        let cap = cap.min(MAX_WINDOW_CALLS);
        while let Some(front) = self.window.front() {
            if self.window.len() <= cap && front.at_ms > oldest_kept {
                break;
            }
            self.window_failures -= u32::from(front.failed);
            self.window_slow -= u32::from(front.slow);
            self.window.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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
    fn slow_calls_open_it_when_their_share_reaches_the_threshold_once_the_window_has_minimum_calls()
    {
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
}
