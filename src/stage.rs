//! An origin's stages: the parts of its state that answer whether an attempt may go and hear
//! how it ended, each through [`Stage`] (check, take, heard, reset), as a Polly pipeline's
//! strategies each see an execution before and after it. The origin (`origin.rs`) lists its
//! stages once, in the order they answer; a capability's stage lives in its own folder
//! (`src/<feature>/stage.rs`) and is one line of that list.
//!
//! The order: pacing, throttle, the latency sample (hedging), the retry budget (a hedge's),
//! the breaker. Every stage checks before any takes, so a refusal leaves nothing taken; the
//! breaker, the last that may refuse, takes its permit as it checks.

use crate::breaker::Permit;
use crate::pacing::{Quota, Ticket};
use crate::policy::Policy;
use crate::vocab::{Judgement, Transition};

/// One stage of an origin's admission list.
pub trait Stage {
    /// What of a policy its [`Stage::heard`] reads: a small copy, so that an end recorded
    /// later (the registry lent meanwhile: [`crate::owner`]) carries its own.
    type Rules: Clone + std::fmt::Debug;

    /// Those of `policy`.
    fn rules(policy: &Policy) -> Self::Rules;

    /// Whether `ask` may go. A refusal that is told counts itself in `cx.stats`. It takes
    /// nothing that a later stage's refusal would leave behind, but for the breaker: the last
    /// that may refuse, it takes its permit here, into `leave`. By default, it goes.
    #[inline(always)]
    fn check(&mut self, ask: Ask, cx: &mut Cx<'_>, leave: &mut Admitted) -> Result<(), Refusal> {
        let _ = (ask, cx, leave);
        Ok(())
    }

    /// Every stage let `ask` go: takes its part of the leave.
    #[inline(always)]
    fn take(&mut self, ask: Ask, cx: &mut Cx<'_>, leave: &mut Admitted) {
        let _ = (ask, cx, leave);
    }

    /// An attempt it let go ended. By default, it learns nothing.
    #[inline(always)]
    fn heard(&mut self, heard: &mut Heard<'_>, rules: &Self::Rules) {
        let _ = (heard, rules);
    }

    /// Forgets what it learnt.
    fn reset(&mut self);
}

/// What a stage's check reads: when, under which policy, a draw in `[0, 1)` (asked only by
/// a stage that draws), and the origin's counters.
pub struct Cx<'a> {
    /// Monotonic ms.
    pub now: f64,
    /// The asking call's policy.
    pub policy: &'a Policy,
    /// Uniform in `[0, 1)`.
    pub random: &'a dyn Fn() -> f64,
    /// The origin's counters.
    pub stats: &'a mut OriginStats,
}

/// What the stages hear of an attempt's end: how it ended, when, the permit the breaker gave
/// it (the breaker takes it back) and the transition the breaker made of it.
pub struct Heard<'q> {
    /// How it ended.
    pub finished: Finished<'q>,
    /// When, monotonic ms.
    pub now: f64,
    /// The breaker's permit, until the breaker hears it.
    pub permit: Option<Permit>,
    /// The transition the end caused.
    pub transition: Option<Transition>,
}

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
    /// Calls served a kept answer instead of their failure (`stale`).
    pub stale: u64,
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
    /// The breaker refused; it may let a call through in this many ms.
    Breaker(f64),
    /// Not the asker's to send (a hedge the origin would refuse, a fast path that cannot
    /// decide): nothing counted, nothing told.
    Quiet,
    // The capabilities' refusals, last: uninhabited in a build without the capability, they
    // leave no hole in the others' tags.
    /// The origin asks the call to wait first: `wait_ms` as told (a booked send's due time),
    /// `sleep_ms` until the call asks again, `booked` the send booked for it (pacing).
    Pace {
        /// How long the origin makes the call wait.
        wait_ms: f64,
        /// How long until the call asks again.
        sleep_ms: f64,
        /// Why.
        why: crate::pacing::Why,
        /// The ticket of a send booked for the call.
        booked: Option<Ticket>,
    },
    /// The origin's wait is too long for the call: rejected without sending (pacing).
    RateLimit(f64, crate::pacing::Why),
    /// Adaptive throttling refused it (at this probability). Last: uninhabited in a build
    /// without throttling, it leaves no hole in the others' tags.
    Throttled(crate::throttle::Probability),
}

/// Leave for an attempt: its breaker permit, whether pacing let it go as a probe window's
/// send, and the breaker transition the leave made (open to half-open). Each stage fills in
/// its part.
#[derive(Debug, Default)]
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
