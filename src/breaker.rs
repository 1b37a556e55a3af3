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
pub use crate::vocab::{BreakerState, Transition};
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
}

/// The states, each with its own data.
#[derive(Debug)]
enum Phase {
    Closed(Health),
    /// `led`: the leader's `until` and rank when this breaker follows a peer's (src/share.rs): it
    /// then waits one cooldown longer than the leader, who probes first.
    Open {
        until_ms: f64,
        led: Option<(f64, u32)>,
    },
    HalfOpen {
        probes_in_flight: u32,
    },
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
}

#[derive(Debug)]
struct Sample {
    at_ms: f64,
    failed: bool,
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
            Phase::Open { until_ms, led } => Some(led.unwrap_or((until_ms, mine))),
            _ => None,
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
        health
            .record(failed, now_ms, policy)
            .then(|| self.open(now_ms + f64::from(policy.cooldown_ms), None))
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
                health.push(false, now_ms, window);
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
        let until_ms = until_ms.min(now_ms + cooldown);
        match &mut self.phase {
            // About itself (its own note, passed on by a peer), or a later leader's while its
            // own cooldown runs (once it has run out, a peer's reopening is news: follow it).
            Phase::Open {
                until_ms: own,
                led: None,
            } if rank == mine || (*own > now_ms && mine < rank) => None,
            Phase::Open {
                until_ms: own,
                led: Some(led),
            } => {
                if led.0 < until_ms {
                    *led = (until_ms, rank);
                    *own = until_ms + cooldown;
                }
                None
            }
            _ => {
                let t = self.open(until_ms + cooldown, Some((until_ms, rank)));
                (t.from != t.to).then_some(t)
            }
        }
    }

    /// A peer's probe succeeded: closes this breaker too (with a fresh history).
    pub fn close(&mut self) -> Option<Transition> {
        (!self.is_closed()).then(|| self.enter(Phase::default()))
    }

    fn open(&mut self, until_ms: f64, led: Option<(f64, u32)>) -> Transition {
        self.enter(Phase::Open { until_ms, led })
    }

    /// Probes currently out (0 unless half-open).
    pub fn probes_in_flight(&self) -> u32 {
        match self.phase {
            Phase::HalfOpen { probes_in_flight } => probes_in_flight,
            _ => 0,
        }
    }

    /// In how long a call may go, when [`Breaker::try_acquire`] would refuse one at `now_ms`;
    /// nothing changes.
    pub fn refusal(&self, now_ms: f64, policy: &BreakerPolicy) -> Option<f64> {
        match self.phase {
            Phase::Open { until_ms, .. } if now_ms < until_ms => Some(until_ms - now_ms),
            Phase::HalfOpen { probes_in_flight }
                if probes_in_flight >= policy.half_open_max_calls =>
            {
                Some(f64::from(policy.cooldown_ms))
            }
            _ => None,
        }
    }

    /// Asks leave to make a call.
    pub fn try_acquire(&mut self, now_ms: f64, policy: &BreakerPolicy) -> Result<Permit, Rejected> {
        let mut transition = None;
        if let Phase::Open { until_ms, .. } = self.phase {
            if now_ms < until_ms {
                return Err(Rejected {
                    retry_after_ms: until_ms - now_ms,
                });
            }
            transition = Some(self.enter(Phase::HalfOpen {
                probes_in_flight: 0,
            }));
        }
        let probe = match &mut self.phase {
            Phase::Closed(_) => false,
            Phase::HalfOpen { probes_in_flight }
                if *probes_in_flight < policy.half_open_max_calls =>
            {
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
    /// nothing; a probe's slot is freed). Returns the transition it caused.
    pub fn record(
        &mut self,
        permit: Permit,
        judgement: Judgement,
        now_ms: f64,
        policy: &BreakerPolicy,
    ) -> Option<Transition> {
        if permit.period != self.period {
            return None;
        }
        let failed = match &mut self.phase {
            Phase::HalfOpen { probes_in_flight } if permit.probe => {
                *probes_in_flight = probes_in_flight.saturating_sub(1);
                match judgement {
                    Judgement::Failure => true,
                    Judgement::Success => false,
                    Judgement::Unjudged => return None,
                }
            }
            Phase::Closed(health) if !permit.probe && judgement != Judgement::Unjudged => {
                if !health.record(judgement == Judgement::Failure, now_ms, policy) {
                    return None;
                }
                true
            }
            _ => return None,
        };
        Some(if failed {
            self.open(now_ms + f64::from(policy.cooldown_ms), None)
        } else {
            self.enter(Phase::default())
        })
    }

    /// Closes the breaker and forgets its history; permits out now are ignored when recorded.
    pub fn reset(&mut self) {
        self.enter(Phase::default());
    }

    fn enter(&mut self, phase: Phase) -> Transition {
        let from = self.kind();
        self.phase = phase;
        self.period = self.period.wrapping_add(1);
        Transition {
            from,
            to: self.kind(),
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
    /// Counts one call; true when the breaker should open.
    fn record(&mut self, failed: bool, now_ms: f64, policy: &BreakerPolicy) -> bool {
        self.consecutive_failures = if failed {
            self.consecutive_failures.saturating_add(1)
        } else {
            0
        };
        match policy.trip {
            TripRule::Consecutive { failure_threshold } => {
                self.consecutive_failures >= failure_threshold
            }
            TripRule::FailureRate {
                threshold,
                minimum_calls,
                window,
            } => {
                self.push(failed, now_ms, window);
                let total = self.window.len();
                failed
                    && total >= minimum_calls as usize
                    && f64::from(self.window_failures) / total as f64 >= threshold
            }
        }
    }

    fn push(&mut self, failed: bool, now_ms: f64, window: Window) {
        self.window.push_back(Sample {
            at_ms: now_ms,
            failed,
        });
        self.window_failures += u32::from(failed);
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
            ..BreakerPolicy::default()
        }
    }

    fn rate(threshold: f64, minimum: u32, window: Window) -> BreakerPolicy {
        BreakerPolicy {
            trip: TripRule::FailureRate {
                threshold,
                minimum_calls: minimum,
                window,
            },
            cooldown_ms: 1000,
            ..BreakerPolicy::default()
        }
    }

    /// One call through the breaker at `now`.
    fn call(b: &mut Breaker, failed: bool, now: f64, p: &BreakerPolicy) -> Option<Transition> {
        let permit = b
            .try_acquire(now, p)
            .expect("breaker lets the call through");
        b.record(
            permit,
            if failed {
                Judgement::Failure
            } else {
                Judgement::Success
            },
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
            b.try_acquire(400.0, &p),
            Err(Rejected {
                retry_after_ms: 600.0
            })
        );
        assert_eq!(b.state(999.0), BreakerState::Open);
        assert_eq!(b.state(1000.0), BreakerState::HalfOpen);
        let probe = b.try_acquire(1000.0, &p).expect("probe");
        assert!(probe.is_probe());
        assert_eq!(
            probe.transition(),
            Some(Transition {
                from: BreakerState::Open,
                to: BreakerState::HalfOpen
            })
        );
        let _ = b.record(probe, Judgement::Unjudged, 1000.0, &p);
    }

    #[test]
    fn half_open_admits_at_most_max_probes() {
        let p = BreakerPolicy {
            half_open_max_calls: 2,
            ..consecutive(1)
        };
        let mut b = opened(&p);
        let first = b.try_acquire(1000.0, &p).expect("probe 1");
        let second = b.try_acquire(1000.0, &p).expect("probe 2");
        assert_eq!(second.transition(), None);
        assert_eq!(b.probes_in_flight(), 2);
        assert_eq!(
            b.try_acquire(1000.0, &p),
            Err(Rejected {
                retry_after_ms: 1000.0
            })
        );
        // A probe released without an answer frees its slot and decides nothing.
        assert_eq!(b.record(first, Judgement::Unjudged, 1001.0, &p), None);
        assert_eq!(b.state(1001.0), BreakerState::HalfOpen);
        let third = b.try_acquire(1001.0, &p).expect("freed slot");
        let _ = b.record(second, Judgement::Unjudged, 1001.0, &p);
        let _ = b.record(third, Judgement::Unjudged, 1001.0, &p);
        assert_eq!(b.probes_in_flight(), 0);
    }

    #[test]
    fn a_successful_probe_closes_it_with_a_fresh_history() {
        let p = consecutive(2);
        let mut b = opened(&p);
        let probe = b.try_acquire(1000.0, &p).expect("probe");
        assert_eq!(
            b.record(probe, Judgement::Success, 1000.0, &p),
            Some(Transition {
                from: BreakerState::HalfOpen,
                to: BreakerState::Closed
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
        let probe = b.try_acquire(1500.0, &p).expect("probe");
        assert_eq!(
            b.record(probe, Judgement::Failure, 1600.0, &p),
            Some(Transition {
                from: BreakerState::HalfOpen,
                to: BreakerState::Open
            })
        );
        assert_eq!(
            b.try_acquire(2599.0, &p),
            Err(Rejected {
                retry_after_ms: 1.0
            })
        );
        assert!(b.try_acquire(2600.0, &p).is_ok());
    }

    #[test]
    fn answers_from_an_older_period_are_ignored() {
        let p = BreakerPolicy {
            half_open_max_calls: 2,
            ..consecutive(1)
        };
        let mut b = Breaker::new();
        let late = b.try_acquire(0.0, &p).expect("closed");
        let _ = call(&mut b, true, 0.0, &p);
        // The breaker opened meanwhile: the late success does not close it.
        assert_eq!(b.record(late, Judgement::Success, 1.0, &p), None);
        assert_eq!(b.state(1.0), BreakerState::Open);
        // Probes a and b; a fails and re-opens it; after the cooldown, probe c.
        let a = b.try_acquire(1000.0, &p).expect("probe a");
        let stale = b.try_acquire(1000.0, &p).expect("probe b");
        let _ = b.record(a, Judgement::Failure, 1000.0, &p);
        let c = b.try_acquire(2000.0, &p).expect("probe c");
        // b's answer belongs to the earlier half-open period: it frees no slot of this one
        // and decides nothing.
        assert_eq!(b.record(stale, Judgement::Success, 2000.0, &p), None);
        assert_eq!(b.probes_in_flight(), 1);
        let d = b.try_acquire(2000.0, &p).expect("probe d");
        assert!(
            b.try_acquire(2000.0, &p).is_err(),
            "c and d fill both slots"
        );
        let _ = b.record(c, Judgement::Unjudged, 2000.0, &p);
        let _ = b.record(d, Judgement::Unjudged, 2000.0, &p);
    }

    #[test]
    fn an_aborted_call_counts_as_nothing() {
        let p = consecutive(2);
        let mut b = Breaker::new();
        let _ = call(&mut b, true, 0.0, &p);
        let permit = b.try_acquire(0.0, &p).expect("closed");
        assert_eq!(b.record(permit, Judgement::Unjudged, 0.0, &p), None);
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
        assert_eq!(call(&mut b, true, 0.0, &p), OPENED);
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
        assert_eq!(call(&mut b, true, 0.0, &p), OPENED);
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
            OPENED,
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
        let probe = b.try_acquire(1000.0, &p).expect("probe");
        b.reset();
        assert_eq!(b.state(1000.0), BreakerState::Closed);
        assert_eq!(b.record(probe, Judgement::Failure, 1000.0, &p), None);
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
                        match b.try_acquire(now, &p) {
                            Ok(permit) => {
                                prop_assert_eq!(refusal, None);
                                out.push(permit);
                            }
                            Err(r) => prop_assert_eq!(refusal, Some(r.retry_after_ms)),
                        }
                    }
                    Op::Record(i, failed) if !out.is_empty() => {
                        let permit = out.swap_remove(i % out.len());
                        let _ = b.record(permit, failed, now, &p);
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
