//! One origin's state: its breaker, retry budget, bulkhead, pacing, throttle, latency sample
//! and counters, as the registry keeps it per origin (`registry.rs` bounds and finds them;
//! `src/share/` says what peers learn of them).
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

use crate::breaker::{Breaker, Permit};
use crate::budget::RetryBudget;
use crate::bulkhead::Bulkhead;
pub use crate::pacing::{Quota, Ticket};
use crate::policy::Policy;
use crate::share;
pub use crate::share::Notes;
pub use crate::stage::{Admitted, Ask, Finished, OriginStats, Refusal};
use crate::stage::{Cx, Heard, Stage};
use crate::vocab::{Judgement, Transition};

/// Declares [`OriginState`] with its stages, in admission order, and what runs them.
macro_rules! stages {
    (
        stages { $( $(#[doc = $d:literal])* $name:ident: $ty:ty, )* }
        parts { $( $(#[$pm:meta])* $pv:vis $part:ident: $pty:ty, )* }
    ) => {
        /// Everything kept for one origin: its stages, then the parts no attempt asks.
        #[derive(Debug, Default)]
        pub struct OriginState {
            $( $(#[doc = $d])* pub $name: $ty, )*
            $( $(#[$pm])* $pv $part: $pty, )*
        }

        /// What of a policy recording an attempt's end reads, stage by stage
        /// ([`Stage::Rules`]; [`OriginState::finish`]).
        #[derive(Clone, Debug)]
        pub struct EndRules {
            $( $name: <$ty as Stage>::Rules, )*
        }

        impl EndRules {
            /// Those of `policy`.
            pub fn of(policy: &Policy) -> Self {
                EndRules { $( $name: <$ty as Stage>::rules(policy), )* }
            }
        }

        impl OriginState {
            /// Every stage checks `ask`, in order; then every stage takes its part.
            #[inline(always)]
            fn run_stages(
                &mut self,
                ask: Ask,
                now: f64,
                policy: &Policy,
                random: &dyn Fn() -> f64,
            ) -> Result<Admitted, Refusal> {
                let cx = &mut Cx { now, policy, random, stats: &mut self.stats };
                let mut leave = Admitted::default();
                $( Stage::check(&mut self.$name, ask, cx, &mut leave)?; )*
                $( Stage::take(&mut self.$name, ask, cx, &mut leave); )*
                Ok(leave)
            }

            /// Every stage hears an attempt's end.
            #[inline(always)]
            fn hear_stages(&mut self, heard: &mut Heard<'_>, rules: &EndRules) {
                $( Stage::heard(&mut self.$name, heard, &rules.$name); )*
            }

            /// Every stage forgets.
            fn reset_stages(&mut self) {
                $( Stage::reset(&mut self.$name); )*
            }
        }
    };
}

stages! {
    // A capability's stage is one line here (a stand-in of no size in a build without it).
    stages {
        /// When it may be sent to (rate-limit quota, `Retry-After` holds).
        pacer: crate::pacing::Pacer,
        /// Its adaptive throttle's counts.
        throttle: crate::throttle::Throttle,
        /// Its recent attempt latencies (kept only while it is hedged).
        latency: crate::hedge::Latency,
        /// Its retry budget (a hedge's tokens; a retry's are withdrawn when it is decided,
        /// [`OriginState::withdraw`]).
        budget: RetryBudget,
        /// Its circuit breaker.
        breaker: Breaker,
    }
    parts {
        /// Its bulkhead (shared with the permits out): it holds calls, not attempts, and a
        /// hedge takes its slot before asking.
        pub bulkhead: Bulkhead,
        /// Its counters (written here only: [`OriginState::stats`] reads them).
        stats: OriginStats,
        /// Calls waiting to retry on this origin (a backoff wait): they use it as much as an
        /// attempt in flight does, so their breaker history is not evicted under them.
        pub waiting: u32,
        /// Successes not yet told to the peers (`share`): told with the next failure.
        pub untold: u32,
    }
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

    /// Its counters.
    pub fn stats(&self) -> OriginStats {
        self.stats
    }

    /// The admission list ([`crate::stage`]): every attempt asks it, the first, a retry, a
    /// hedge, and the open-breaker fast path. With leave, the attempt is counted.
    #[inline(never)]
    pub fn admit(
        &mut self,
        ask: Ask,
        now: f64,
        policy: &Policy,
        random: &dyn Fn() -> f64,
    ) -> Result<Admitted, Refusal> {
        let admitted = self.run_stages(ask, now, policy, random);
        let stats = &mut self.stats;
        if admitted.is_ok() {
            stats.attempts += 1;
            match ask {
                Ask::Attempt { retry, .. } => stats.retries += u64::from(retry),
                _ => stats.hedges += 1,
            }
            stats.in_flight += 1;
        }
        admitted
    }

    /// Records the end of an attempt that `admit` let go with `permit` (judged under
    /// `rules`, its policy's, at `now`): its counters, then every stage hears it. `rank`:
    /// this client's, when it shares. Returns the breaker's transition and the notes for
    /// the peers.
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
        let before = share::before(self, rank, now);
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
        let mut heard = Heard {
            finished: ended,
            now,
            permit,
            transition: None,
        };
        self.hear_stages(&mut heard, rules);
        let transition = heard.transition;
        let notes = share::notes(self, before, judgement, transition, now, rank);
        (transition, notes)
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
        self.pacer.unbook(ticket);
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
    pub fn hedge_won(&mut self) {
        self.stats.hedge_wins += 1;
    }

    /// A response's body waited past its deadline or `bodyTimeoutMs`.
    pub fn body_timed_out(&mut self) {
        self.stats.timeouts += 1;
    }

    /// A call was served a kept answer instead of its failure (`stale`).
    pub fn served_stale(&mut self) {
        self.stats.stale += 1;
    }

    /// Forgets its breaker, budget, pacing, throttle, latency and counters. Calls in flight
    /// keep their bulkhead slots and stay counted in `in_flight`.
    pub fn reset(&mut self) {
        self.reset_stages();
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
