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
mod tests;

mod stage;
