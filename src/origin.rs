//! One origin's state: its breaker, retry budget, bulkhead, pacing, throttle, latency sample
//! and counters, as the registry keeps it per origin (`registry.rs` bounds and finds them;
//! `share.rs` says what peers learn of them).
//!
//! Its owner has three entry points, as Polly's circuit-state controller does: [`admit`]
//! (may an attempt go?), [`finish`] (what an attempt's end does to the origin) and the holds a
//! call keeps meanwhile (budget tokens, a booked send, a wait). It is the only writer of its
//! counters. What must be told leaves through the return values: events are told once the
//! registry's borrow has ended; notes for peers are posted while it lasts (a post is never
//! delivered at once, so no peer's note comes back into the borrow).
//!
//! [`admit`]: OriginState::admit
//! [`finish`]: OriginState::finish

pub use crate::absent::{Notes, Quota, Ticket};
use crate::breaker::{Breaker, Permit};
use crate::budget::RetryBudget;
use crate::bulkhead::Bulkhead;
#[cfg(feature = "pacing")]
use crate::pacing::{Admit, Pacer};
#[cfg(feature = "hedge")]
use crate::policy::HedgePolicy;
use crate::policy::Policy;
#[cfg(feature = "share")]
use crate::share::{self, Note};
#[cfg(feature = "throttle")]
use crate::throttle::Throttle;
#[cfg(feature = "pacing")]
use crate::vocab::Why;
use crate::vocab::{BreakerState, Judgement, Transition};

/// Counters of one origin.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OriginStats {
    /// Attempts sent.
    pub attempts: u64,
    /// Attempts that ended with a non-failure response.
    pub successes: u64,
    /// Attempts that failed (network error, timeout, 408, 429, 5xx).
    pub failures: u64,
    /// Attempts that were retries.
    pub retries: u64,
    /// Attempts the breaker refused.
    pub short_circuits: u64,
    /// Attempts that timed out (also counted in `failures`, unless the attempt's limit was
    /// what was left of the call's total deadline: such a timeout says nothing about the origin).
    pub timeouts: u64,
    /// Attempts on the wire now.
    pub in_flight: u32,
    /// Attempts not sent because the origin's rate-limit wait was too long for their call.
    pub rate_limited: u64,
    /// Attempts adaptive throttling refused locally.
    pub throttled: u64,
    /// Hedges sent (attempts beside one still in flight).
    pub hedges: u64,
    /// Attempts that failed while the runtime was offline (counted neither as failures nor
    /// against the breaker).
    pub offline: u64,
    /// Calls a hedge answered first.
    pub hedge_wins: u64,
}

/// Everything kept for one origin.
#[derive(Debug, Default)]
pub struct OriginState {
    /// Its circuit breaker.
    pub breaker: Breaker,
    /// Its retry budget.
    pub budget: RetryBudget,
    /// Its bulkhead (shared with the permits out).
    pub bulkhead: Bulkhead,
    /// Its counters (written here only: [`OriginState::stats`] reads them).
    stats: OriginStats,
    /// When it may be sent to (rate-limit quota, `Retry-After` holds).
    #[cfg(feature = "pacing")]
    pub pacer: Pacer,
    /// Its adaptive throttle's counts.
    #[cfg(feature = "throttle")]
    pub throttle: Throttle,
    /// Its recent attempt latencies (kept only while it is hedged).
    #[cfg(feature = "hedge")]
    pub latency: crate::hedge::Latency,
    /// Calls waiting to retry on this origin (a backoff wait): they use it as much as an
    /// attempt in flight does, so their breaker history is not evicted under them.
    pub waiting: u32,
    /// Successes not yet told to the peers (`share`): told with the next failure.
    #[cfg(feature = "share")]
    pub untold: u32,
}

impl OriginState {
    /// Whether no call uses the origin now: no attempt in flight, no call waiting to retry,
    /// no bulkhead slot held and no call queued for one.
    pub fn is_idle(&self) -> bool {
        self.stats.in_flight == 0
            && self.waiting == 0
            && self.bulkhead.active() == 0
            && self.bulkhead.queued() == 0
    }
}

/// What a call asks its origin for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ask {
    /// An attempt of the call, the first or a `retry`: `booked` is the ticket of the send
    /// the origin's pacing booked for the call, if one is; it may wait at most `max_wait` ms.
    Attempt {
        /// Whether it is a retry.
        retry: bool,
        /// The ticket of the send booked for it.
        booked: Option<Ticket>,
        /// The longest it may still wait for the origin, in ms.
        max_wait: f64,
    },
    /// A hedge beside an attempt in flight: it goes only if nothing stands in its way (no
    /// wait, no throttling, a closed breaker, half the budget and a retry's cost in it), and
    /// is simply not sent otherwise ([`Refusal::Quiet`]).
    Hedge,
    /// The open-breaker fast path: refused by the breaker at once, or [`Refusal::Quiet`] when
    /// that cannot be told now; nothing is taken either way.
    AtOnce,
}

/// Why an attempt may not go now: the one answer of every refusal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Refusal {
    /// What is left of the call's deadline is too little for an attempt (the engine's).
    Deadline,
    /// The origin asks the call to wait first: `wait_ms` as told (a booked send's due time),
    /// `sleep_ms` until the call asks again, `booked` the send booked for it.
    #[cfg(feature = "pacing")]
    Pace {
        /// How long the origin makes the call wait.
        wait_ms: f64,
        /// How long until the call asks again.
        sleep_ms: f64,
        /// Why.
        why: Why,
        /// The ticket of a send booked for the call.
        booked: Option<Ticket>,
    },
    /// The origin's wait is too long for the call: rejected without sending.
    #[cfg(feature = "pacing")]
    RateLimit(f64, Why),
    /// Adaptive throttling refused it (at this probability).
    #[cfg(feature = "throttle")]
    Throttled(f64),
    /// The breaker refused; it may let a call through in this many ms.
    Breaker(f64),
    /// Not the asker's to send (a hedge the origin would refuse, a fast path that cannot
    /// decide): nothing counted, nothing told.
    Quiet,
}

/// Leave for an attempt: its breaker permit, whether pacing let it go as a probe window's
/// send, and the breaker transition the leave made (open to half-open).
#[derive(Debug)]
pub struct Admitted {
    /// The breaker's permit (none with the breaker off).
    pub permit: Option<Permit>,
    /// Whether what its answer says goes to pacing as a probe's.
    pub probe: bool,
    /// The transition taking the leave made.
    pub transition: Option<Transition>,
}

/// How an attempt ended, as its origin records it.
#[derive(Clone, Copy, Default)]
pub struct Finished<'q> {
    /// How it counts for the breaker and the stats.
    pub judgement: Judgement,
    /// Whether it timed out.
    pub timed_out: bool,
    /// Whether an answer came (a response, whatever its status).
    pub answered: bool,
    /// Its rate-limit headers.
    pub quota: Option<&'q Quota>,
    /// Until when a `Retry-After` on a 429 or 503 holds the origin (monotonic ms).
    pub hold_until: Option<f64>,
    /// How long it took to answer, when the origin's latency is learnt (hedging).
    pub latency_ms: Option<f64>,
    /// How long it took to end, in ms: longer than the breaker's `slowCallMs` is slow.
    pub duration_ms: f64,
    /// Whether it failed to reach the origin while the runtime was offline (unjudged).
    pub offline: bool,
    /// Whether it was pacing's probe.
    pub probe: bool,
    /// Whether the call goes on to retry (it keeps the origin in use meanwhile).
    pub hold: bool,
}

/// What of a policy recording an attempt's end reads ([`OriginState::finish`]): a small
/// copy, so that an end recorded later (the registry lent meanwhile: [`crate::owner`])
/// carries its own.
#[derive(Clone, Debug)]
pub struct EndRules {
    /// The breaker's settings, when it is on.
    pub breaker: Option<crate::policy::BreakerPolicy>,
    /// The throttle's, when it is on.
    #[cfg(feature = "throttle")]
    pub throttle: Option<crate::policy::ThrottlePolicy>,
    /// The longest hold pacing takes from an answer, in ms, when pacing is on.
    #[cfg(feature = "pacing")]
    pub pacing_cap_ms: Option<f64>,
}

impl EndRules {
    /// Those of `policy`.
    pub fn of(policy: &Policy) -> Self {
        EndRules {
            breaker: policy.breaker.clone(),
            #[cfg(feature = "throttle")]
            throttle: policy.throttle.clone(),
            #[cfg(feature = "pacing")]
            pacing_cap_ms: policy
                .paced()
                .then(|| f64::from(policy.max_retry_after_ms())),
        }
    }
}

impl OriginState {
    /// Its counters.
    pub fn stats(&self) -> OriginStats {
        self.stats
    }

    /// The admission list, in its order: pacing, throttle, breaker, budget (a hedge's; a
    /// retry's tokens are withdrawn when it is decided, [`OriginState::withdraw`]); the
    /// bulkhead holds calls, not attempts, and a hedge takes its slot before asking. Every
    /// attempt asks it: the first, a retry, a hedge, and the open-breaker fast path. Checks
    /// come first, then the leave is taken: the attempt counted, its request of the quota
    /// taken, its permit and (a hedge) its budget tokens.
    #[inline(never)]
    pub fn admit(
        &mut self,
        ask: Ask,
        now: f64,
        policy: &Policy,
        random: &dyn Fn() -> f64,
    ) -> Result<Admitted, Refusal> {
        let hedge = ask == Ask::Hedge;
        #[cfg(not(feature = "throttle"))]
        let _ = random;
        #[cfg(feature = "pacing")]
        let paced = policy.paced();
        #[cfg(feature = "pacing")]
        if paced {
            match ask {
                Ask::Attempt {
                    booked, max_wait, ..
                } => match self.pacer.admit(now, max_wait, booked) {
                    Admit::Go => {}
                    Admit::Wait(ms, why) => {
                        return Err(Refusal::Pace {
                            wait_ms: ms,
                            sleep_ms: ms,
                            why,
                            booked: None,
                        });
                    }
                    Admit::Booked { ticket, due, wake } => {
                        return Err(Refusal::Pace {
                            wait_ms: due,
                            sleep_ms: wake,
                            why: Why::Quota,
                            booked: Some(ticket),
                        });
                    }
                    Admit::TooLong(ms, why) => {
                        self.stats.rate_limited += 1;
                        return Err(Refusal::RateLimit(ms, why));
                    }
                },
                // Neither waits: an origin that asks for a wait is not theirs to send to. A
                // hedge asks as an attempt that may not wait (so a window served to booked
                // calls, or a probe's, is not its), and is refused quietly.
                Ask::Hedge if self.pacer.admit(now, 0.0, None) != Admit::Go => {
                    return Err(Refusal::Quiet);
                }
                Ask::AtOnce if !self.pacer.is_quiet(now) => return Err(Refusal::Quiet),
                Ask::Hedge | Ask::AtOnce => {}
            }
        }
        #[cfg(feature = "throttle")]
        if let Some(t) = &policy.throttle {
            match ask {
                // A refusal drawn at random is the attempt's own, never told at once.
                Ask::AtOnce => return Err(Refusal::Quiet),
                Ask::Hedge if self.throttle.reject_probability(now, t) > 0.0 => {
                    return Err(Refusal::Quiet);
                }
                Ask::Hedge => {}
                Ask::Attempt { .. } => {
                    if let Some(probability) = self.throttle.refuse(now, random, t) {
                        self.stats.throttled += 1;
                        return Err(Refusal::Throttled(probability));
                    }
                }
            }
        }
        let breaker = policy.breaker.as_ref();
        match (ask, breaker) {
            (Ask::AtOnce, None) => return Err(Refusal::Quiet),
            (Ask::AtOnce, Some(b)) => {
                let retry_after_ms = self.breaker.refusal(now, b).ok_or(Refusal::Quiet)?;
                self.stats.short_circuits += 1;
                return Err(Refusal::Breaker(retry_after_ms));
            }
            // A probe is never hedged.
            (Ask::Hedge, Some(_)) if self.breaker.state(now) != BreakerState::Closed => {
                return Err(Refusal::Quiet);
            }
            _ => {}
        }
        let budget = policy.retry_budget.as_ref().filter(|_| hedge);
        #[cfg(feature = "hedge")]
        if let Some(b) = budget {
            let tokens = self.budget.tokens(b.capacity);
            if !(crate::hedge::budget_allows(tokens, b.capacity) && tokens >= b.retry_cost) {
                return Err(Refusal::Quiet);
            }
        }
        // Every check passed: the leave is taken.
        let permit = match breaker.map(|b| self.breaker.try_acquire(now, b, random)) {
            Some(Err(rejected)) => {
                self.stats.short_circuits += 1;
                return Err(Refusal::Breaker(rejected.retry_after_ms));
            }
            Some(Ok(permit)) => Some(permit),
            None => None,
        };
        #[cfg(feature = "pacing")]
        let probe = {
            let booked = matches!(
                ask,
                Ask::Attempt {
                    booked: Some(_),
                    ..
                }
            );
            paced && !booked && self.pacer.take(now)
        };
        #[cfg(not(feature = "pacing"))]
        let probe = false;
        if let Some(b) = budget {
            // Cannot fail: checked above, and nothing ran in between.
            let _ = self.budget.try_withdraw(b.retry_cost, b.capacity);
        }
        let stats = &mut self.stats;
        stats.attempts += 1;
        match ask {
            Ask::Attempt { retry, .. } => stats.retries += u64::from(retry),
            _ => stats.hedges += 1,
        }
        stats.in_flight += 1;
        let transition = permit.as_ref().and_then(Permit::transition);
        Ok(Admitted {
            permit,
            probe,
            transition,
        })
    }

    /// Records the end of an attempt that `admit` let go with `permit` (judged under
    /// `rules`, its policy's, at `now`): its counters, the throttle, the latency sample, what
    /// its answer said of the origin's limits, the breaker. `rank`: this client's, when it
    /// shares. Returns the breaker's transition and the notes for the peers.
    pub fn finish(
        &mut self,
        permit: Option<Permit>,
        ended: Finished<'_>,
        now: f64,
        rules: &EndRules,
        rank: Option<u32>,
    ) -> (Option<Transition>, Notes) {
        let Finished { judgement, .. } = ended;
        // What the peers knew before this answer (only a sharing client tells them).
        #[cfg(feature = "share")]
        let before = rank.map(|_| (self.breaker.is_failing(), self.pacer.wait(now).is_some()));
        #[cfg(not(feature = "share"))]
        let _ = rank;
        self.waiting += u32::from(ended.hold);
        let stats = &mut self.stats;
        stats.in_flight = stats.in_flight.saturating_sub(1);
        match judgement {
            Judgement::Failure => stats.failures += 1,
            Judgement::Success => stats.successes += 1,
            Judgement::Unjudged => {}
        }
        stats.timeouts += u64::from(ended.timed_out && !ended.offline);
        stats.offline += u64::from(ended.offline);
        #[cfg(feature = "throttle")]
        if let Some(t) = &rules.throttle
            && judgement != Judgement::Unjudged
        {
            self.throttle
                .record(now, judgement == Judgement::Success, t);
        }
        #[cfg(feature = "hedge")]
        if let Some(ms) = ended.latency_ms {
            self.latency.record(ms);
        }
        #[cfg(feature = "pacing")]
        if let Some(cap) = rules.pacing_cap_ms {
            self.pacer
                .heard((ended.answered, ended.quota), ended.probe, now, cap);
            if let Some(until) = ended.hold_until {
                self.pacer.hold(until);
            }
        }
        let transition = permit.zip(rules.breaker.as_ref()).and_then(|(permit, p)| {
            let slow = p
                .slow_call_ms()
                .is_some_and(|ms| ended.duration_ms > f64::from(ms));
            self.breaker.record(permit, judgement, slow, now, p)
        });
        #[cfg(feature = "share")]
        let notes = match (rank, before) {
            (Some(rank), Some(before)) => {
                let parts = (&self.breaker, &self.pacer, &mut self.untold);
                share::told(parts, before, judgement, transition, now, rank)
            }
            _ => [None, None],
        };
        #[cfg(not(feature = "share"))]
        let notes = [];
        (transition, notes)
    }

    /// A peer's note about this origin, applied under `policy` (this client's); `rank` is this
    /// client's. Returns the breaker transition it caused.
    #[cfg(feature = "share")]
    pub fn hear(&mut self, note: Note, now: f64, policy: &Policy, rank: u32) -> Option<Transition> {
        share::apply(
            (&mut self.breaker, &mut self.pacer),
            note,
            now,
            policy,
            rank,
        )
    }

    /// What a client that starts is told of this origin: its open period, its wait.
    #[cfg(feature = "share")]
    pub fn describe(&self, now: f64, rank: u32) -> [Option<Note>; 2] {
        share::describe(&self.breaker, &self.pacer, now, rank)
    }

    /// Withdraws `cost` budget tokens of `capacity` for a retry; false if too few are left.
    pub fn withdraw(&mut self, cost: u32, capacity: u32) -> bool {
        self.budget.try_withdraw(cost, capacity)
    }

    /// Gives `tokens` back to the budget (a success's refund, a retry not sent), up to `capacity`.
    pub fn refund(&mut self, tokens: u32, capacity: u32) {
        self.budget.on_success(tokens, capacity);
    }

    /// A send booked with `ticket` was not made: its place goes to the calls behind it.
    pub fn unbook(&mut self, ticket: Ticket) {
        #[cfg(feature = "pacing")]
        self.pacer.unbook(ticket);
        #[cfg(not(feature = "pacing"))]
        match ticket {}
    }

    /// A call starts waiting for the origin (to retry, or for its rate limit).
    pub fn wait_begins(&mut self) {
        self.waiting += 1;
    }

    /// A call's wait for the origin ended.
    pub fn wait_ends(&mut self) {
        self.waiting = self.waiting.saturating_sub(1);
    }

    /// A hedge answered for its call first.
    #[cfg(feature = "hedge")]
    pub fn hedge_won(&mut self) {
        self.stats.hedge_wins += 1;
    }

    /// A response's body waited past its deadline or `bodyTimeoutMs`.
    pub fn body_timed_out(&mut self) {
        self.stats.timeouts += 1;
    }

    /// How long a call waits before it hedges an attempt to this origin.
    #[cfg(feature = "hedge")]
    pub fn hedge_delay(&self, policy: &HedgePolicy) -> f64 {
        crate::hedge::delay_ms(policy, &self.latency)
    }

    /// Forgets its breaker, budget, pacing, throttle, latency and counters. Calls in flight
    /// keep their bulkhead slots and stay counted in `in_flight`.
    pub fn reset(&mut self) {
        self.breaker.reset();
        self.budget = RetryBudget::new();
        #[cfg(feature = "pacing")]
        self.pacer.reset();
        #[cfg(feature = "throttle")]
        {
            self.throttle = Throttle::default();
        }
        #[cfg(feature = "hedge")]
        {
            self.latency = Default::default();
        }
        self.stats = OriginStats {
            in_flight: self.stats.in_flight,
            ..OriginStats::default()
        };
    }

    /// Its counters, to set up a test.
    #[cfg(test)]
    pub(crate) fn stats_mut(&mut self) -> &mut OriginStats {
        &mut self.stats
    }
}

#[cfg(all(test, feature = "hedge", feature = "pacing"))]
mod tests {
    use super::*;
    use crate::policy::PolicyInput;

    fn policy(json: serde_json::Value) -> Policy {
        let input: PolicyInput = serde_json::from_value(json).unwrap_or_default();
        Policy::from_input(&input).unwrap_or_else(|e| panic!("{}", e.message))
    }

    #[test]
    fn a_hedge_never_takes_a_window_served_to_a_booked_call() {
        let p = policy(serde_json::json!({"hedge": {"delayMs": 50}, "breaker": false}));
        let mut s = OriginState::default();
        let spent = Quota {
            remaining: 0,
            reset_ms: 500.0,
            limit: Some(1),
            window_ms: None,
        };
        s.pacer.learn(&spent, 0.0, 30_000.0);
        // A call finds the quota spent and is booked into the next window.
        let ask = Ask::Attempt {
            retry: false,
            booked: None,
            max_wait: 5_000.0,
        };
        assert!(matches!(
            s.admit(ask, 100.0, &p, &|| 0.5),
            Err(Refusal::Pace {
                booked: Some(_),
                ..
            })
        ));
        // Just after the reset, before the booked call asks again, a hedge is due: the
        // window's one request is the booked call's, so the hedge does not go, quietly.
        assert_eq!(
            s.admit(Ask::Hedge, 600.0, &p, &|| 0.5).map(|_| ()),
            Err(Refusal::Quiet)
        );
        let stats = s.stats();
        assert_eq!(
            (stats.attempts, stats.hedges, stats.rate_limited),
            (0, 0, 0)
        );
    }
}
