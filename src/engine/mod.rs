//! The engine: one call's loop of attempts, waits and decisions.
//!
//! The loop ([`run`], `call.rs`, written down as its phases) does the waiting, the I/O and the
//! bookkeeping; what follows an attempt is decided from facts alone in [`decide()`]
//! (`decide.rs`), with [`crate::classify`], [`crate::backoff`] and [`crate::budget`]; may an
//! attempt go is the origin's one admission list ([`crate::origin`]); the holds a call keeps on
//! its origin's entry live in `guards.rs`; an attempt's end (recorded, judged, asked about) in
//! `attempt.rs`; a hedged race is [`crate::hedge`]'s strategy (`hedge/race.rs`). Time, randomness, timers and the caller's abort signal come from
//! an [`Env`]; requests go out through a [`Transport`]. Both are the shell's in production
//! and fakes in tests.
//!
//! Each attempt has its own origin: the call's, or with failover ([`crate::failover`]) the first
//! of its route whose breaker is not open for the first attempt, the next one for a retry. The
//! holds, the admission, the record of its end, the decision's facts and the retry's tokens are
//! that origin's registry entry's; the bulkhead is the call's own origin's.
//!
//! Order of a call: bulkhead (may queue), then per attempt: the origin's admission (pacing,
//! throttle, breaker), send (limited by the
//! per-attempt timeout and what is left of the total deadline), record, decide; a retry
//! needs a safe request, attempts left, an acceptable `Retry-After`, a wait that ends at
//! least [`MIN_ATTEMPT_MS`] before the deadline, a breaker that will not still be open when
//! the wait ends, and budget tokens, in that order. The tokens are withdrawn when the retry
//! is decided (so concurrent calls cannot spend them during the wait) and given back if the
//! retry is then not sent: the breaker refuses it, the deadline has come, the caller
//! aborts, or the call is dropped. No `RefCell` borrow is held across an `await` or while
//! an event is delivered (`onEvent` may call back into the registry).
//!
//! A timeout counts against the origin's breaker when the attempt had at least half of
//! the smaller of `timeoutMs` and `totalTimeoutMs` to answer. An attempt cut short by what
//! was left of the call's deadline before that says nothing about the origin (the call ran
//! out of its own time, not the server): it counts in `timeouts` only. So an origin that
//! never answers trips the breaker under any ordering of the two limits.

pub use crate::classify::AttemptOutcome;

pub(crate) mod attempt;
mod call;
mod decide;
mod guards;

pub use call::{Course, run, run_course};
pub use decide::{Facts, Next, decide};

use crate::breaker::Transition;
use crate::bulkhead::{Admission, BulkheadPermit};
use crate::events::{Event, GiveUpReason};
use crate::failover::{Alternate, Route};
use crate::origin::{Ask, Refusal};
use crate::owner::Owner;
use crate::policy::Policy;
use crate::retry_after;
use std::future::{Future, poll_fn};
use std::pin::pin;
use std::task::Poll;

/// Time, randomness, timers and the caller's abort signal. All methods take `&self`:
/// implement with `Cell`/`RefCell` inside.
pub trait Env {
    /// Monotonic time in ms (`performance.now()`).
    fn now_ms(&self) -> f64;
    /// Wall-clock time in ms since 1970 (`Date.now()`), for HTTP-date `Retry-After`.
    fn unix_ms(&self) -> f64;
    /// A uniform random number in `[0, 1)`.
    fn random(&self) -> f64;
    /// Resolves after `ms` milliseconds (at once if `ms <= 0`); dropping it cancels the timer.
    fn sleep(&self, ms: f64) -> impl Future<Output = ()>;
    /// Whether the caller's signal has already aborted.
    fn aborted(&self) -> bool;
    /// Resolves when the caller aborts; pending forever without a signal.
    fn abort_wait(&self) -> impl Future<Output = ()>;
    /// Whether the runtime says it has no network now (a browser's `navigator.onLine` is
    /// false); false where it cannot tell. Asked only about an attempt that failed to reach
    /// its origin.
    fn offline(&self) -> bool {
        false
    }
    /// Resolves when the runtime says the network is back (the `online` event); pending
    /// forever where it cannot tell.
    fn online_wait(&self) -> impl Future<Output = ()> {
        std::future::pending()
    }
}

/// Least time, in ms, that must be left before the total deadline for an attempt to start;
/// with less, the deadline counts as reached (an attempt given a sliver of time would only
/// time out).
pub const MIN_ATTEMPT_MS: f64 = 1.0;

/// How long one attempt may take.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AttemptLimit {
    /// The attempt's time limit in ms: `timeoutMs`, or less if the deadline is nearer.
    pub timeout_ms: f64,
    /// Whether this limit is what is left of the total deadline (not `timeoutMs`).
    pub is_deadline: bool,
}

impl AttemptLimit {
    /// The limit of an attempt that starts with `remaining` ms left before the deadline.
    pub fn at(policy: &Policy, remaining: f64) -> Self {
        let timeout = f64::from(policy.timeout_ms);
        AttemptLimit {
            timeout_ms: timeout.min(remaining),
            is_deadline: remaining < timeout,
        }
    }

    /// Whether a timeout under this limit is held against the origin: yes under
    /// `timeoutMs`, and under the deadline's rest when that was at least half of the
    /// smaller of `timeoutMs` and `totalTimeoutMs` (see the module docs).
    pub fn timeout_counts(&self, policy: &Policy) -> bool {
        let full = policy.timeout_ms.min(policy.total_timeout_ms);
        !self.is_deadline || self.timeout_ms * 2.0 >= f64::from(full)
    }
}

/// Sends one attempt. The transport enforces the limit itself and reports
/// [`AttemptOutcome::Timeout`] when it runs out. It also carries the caller's own
/// decisions, if any (`breaker.isFailure`, `retry.shouldRetry`); by default there are none.
pub trait Transport {
    /// What the shell gets back from an attempt (a JS `Response` or error), opaque here.
    type Output;
    /// Sends attempt number `attempt` (from 1) within `limit`, to the call's own URL, or with
    /// `to` an alternate origin ([`crate::failover`]), to that origin instead (the same path,
    /// query, method, headers and body). Hedged reads have several in flight at once;
    /// dropping one before it ends aborts it (its request is cancelled).
    fn send(
        &self,
        attempt: u32,
        limit: AttemptLimit,
        to: Option<Alternate<'_>>,
    ) -> impl Future<Output = (AttemptOutcome, Self::Output)>;

    /// The caller's answer to "does this outcome count against the breaker?" (by default the
    /// built-in rule). Synchronous: the breaker decides at once.
    fn is_failure(&self, _ended: &Ended<'_>, _output: &Self::Output) -> BreakerAnswer {
        BreakerAnswer::Default
    }

    /// Whether the caller decides about retries ([`Transport::should_retry`]).
    fn asks_should_retry(&self) -> bool {
        false
    }

    /// The caller's answer to "retry after this outcome?", asked after every attempt the
    /// caller did not abort when [`Transport::asks_should_retry`] (in a hedged race, about
    /// each attempt that ended, while the others go on); bounded by the call's deadline and
    /// the caller's abort. The answer may borrow the transport, not what it was asked about.
    fn should_retry<'t>(
        &'t self,
        _ended: &Ended<'_>,
        _output: &Self::Output,
    ) -> impl Future<Output = HookAnswer<Self::Output>> + use<'t, Self> {
        std::future::ready(HookAnswer::Default)
    }
}

/// The caller's answer to "does this outcome count against the breaker?" (`breaker.isFailure`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BreakerAnswer {
    /// It counts as a failure.
    Failure,
    /// It counts as a success.
    Success,
    /// The built-in rule decides.
    Default,
}

/// An attempt that has ended, as the caller's decisions see it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ended<'a> {
    /// The attempt's number, from 1.
    pub attempt: u32,
    /// How it ended.
    pub outcome: &'a AttemptOutcome,
    /// Since the call started, in ms.
    pub elapsed_ms: f64,
    /// Until the call's deadline, in ms.
    pub remaining_ms: f64,
}

/// The caller's answer to "retry?". It widens or narrows which outcomes are retried, never
/// the safety rules: an unsafe request without a key is not repeated, and attempts, the
/// deadline, the budget, the breaker and `Retry-After` still apply.
#[derive(Debug, PartialEq)]
pub enum HookAnswer<O> {
    /// Retry (if repeating is safe and the other rules allow it).
    Retry,
    /// Do not retry: this outcome is the call's.
    Stop,
    /// Keep the built-in answer.
    Default,
    /// The hook failed: stop, and end the call with this output instead.
    Fail(O),
}

/// What the engine needs to know about a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Call<'a> {
    /// The origin, as the platform's URL parser serialises it (the registry's key), or the
    /// name `breaker.key` gives the call.
    pub origin: &'a str,
    /// The alternates of its URL's origin (`failover`), tried in order when its breaker is
    /// open or an attempt fails; each keyed by its origin. None without failover.
    pub alternates: crate::failover::AlternateOrigins<'a>,
    /// HTTP method.
    pub method: &'a str,
    /// Whether the request carries an idempotency key.
    pub has_key: bool,
    /// Whether the body can be sent again (false for a one-shot stream).
    pub replayable: bool,
    /// Whether the request has a body (then it is never hedged).
    pub has_body: bool,
    /// Whether an outbox keeps it when it gets no definite answer: then an attempt that fails
    /// while offline is retried and given up as any failure is (the outbox keeps it and sends
    /// it once the network is back), not waited on.
    pub kept: bool,
}

/// How a call ended.
#[derive(Debug, PartialEq)]
pub enum CallResult<O> {
    /// Attempts were made; `output` is the last one's (resolve with it or reject with it).
    Done {
        /// The last attempt's output.
        output: O,
        /// Attempts made.
        attempts: u32,
    },
    /// The breaker was open before the first attempt: nothing was sent.
    ShortCircuited {
        /// When the breaker may let a call through, in ms from now.
        retry_after_ms: f64,
    },
    /// The bulkhead and its queue were full: nothing was sent.
    BulkheadFull,
    /// The caller aborted before the first attempt, or while waiting (backoff or queue).
    Aborted,
    /// The total deadline ran out before any attempt could start.
    DeadlineExceeded,
    /// The origin's rate-limit wait was too long for the call: nothing was sent. (Never
    /// without pacing: its [`crate::pacing::Why`] cannot be made.)
    RateLimited {
        /// When the origin may be sent to, in ms from now.
        retry_after_ms: f64,
        /// Why it waits.
        reason: crate::pacing::Why,
    },
    /// Adaptive throttling refused the call locally: nothing was sent. None without
    /// `throttle` (its probability is uninhabited there).
    Throttled(crate::throttle::Probability),
}

/// A call its origin's breaker refuses now (`now()` is read only when its breaker is not
/// closed) with nothing that could stand before the breaker in the loop (no bulkhead, no
/// throttling, no deadline shorter than an attempt, no rate-limit quota or hold known for the
/// origin): refused at once, counted and told (`shortCircuit`) as [`run`] would, without the
/// call's async machinery. Returns in how long a call may go; `None`: the call runs, and
/// [`run`] decides the same way.
pub fn refused_at_once(
    owner: &Owner,
    policy: &Policy,
    origin: &str,
    alternates: crate::failover::AlternateOrigins<'_>,
    now: &dyn Fn() -> f64,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> Option<f64> {
    // A bulkhead may queue the call before its first attempt asks; an alternate may take the
    // call its origin refuses (the loop asks them).
    if policy.bulkhead.is_some()
        || f64::from(policy.total_timeout_ms) < MIN_ATTEMPT_MS
        || !alternates.is_empty()
    {
        return None;
    }
    let mut registry = owner.free()?;
    // An origin without state has a closed breaker: nothing to refuse, no clock to read.
    registry.peek(origin).filter(|s| !s.breaker.is_closed())?;
    let now = now();
    // The origin's own admission list, asked to refuse at once or to say nothing.
    let asked = registry.with(origin, |_, s| s.admit(Ask::AtOnce, now, policy, &|| 0.0));
    drop(registry);
    let Err(Refusal::Breaker(retry_after_ms)) = asked else {
        return None;
    };
    on_event(&Event::ShortCircuit {
        origin,
        retry_after_ms,
    });
    Some(retry_after_ms)
}

/// What every step of a call shares (and a call strategy it runs: [`crate::hedge`]).
pub(crate) struct Ctx<'a> {
    pub(crate) owner: &'a Owner,
    pub(crate) policy: &'a Policy,
    /// The call's origins: its own, then its alternates ([`crate::failover`]).
    route: Route<'a>,
    /// Where in the route the current attempt goes (or the next, once a retry is decided).
    at: crate::failover::At<'a>,
    /// Whether repeating the request is safe.
    pub(crate) safe: bool,
    /// When the call started (monotonic ms).
    called_at: f64,
    /// When the whole call must be over (monotonic ms).
    pub(crate) deadline: f64,
    /// Whether an outbox keeps it when it gets no definite answer ([`Call::kept`]).
    kept: bool,
}

impl<'a> Ctx<'a> {
    /// The origin the current attempt goes to (or the next, once a retry is decided): its
    /// registry entry is asked, charged and told.
    #[inline(always)]
    pub(crate) fn origin(&self) -> &'a str {
        self.at.origin(&self.route)
    }

    /// The call's own origin (or its `breaker.key` name): its bulkhead is the call's.
    #[inline(always)]
    pub(crate) fn primary(&self) -> &'a str {
        self.route.origin(0)
    }

    /// The alternate origin the current attempt goes to; `None`: the call's own URL.
    #[inline(always)]
    pub(crate) fn to(&self) -> Option<Alternate<'a>> {
        self.route.alternate(self.at.get())
    }

    /// Whether `origin`'s breaker would refuse an attempt at `now` (the breaker's own
    /// [`crate::breaker::Breaker::refusal`]: open, or half-open with every probe out).
    fn is_open(&self, origin: &str, now: f64) -> bool {
        let Some(rules) = &self.policy.breaker else {
            return false;
        };
        let registry = self.owner.lend();
        registry
            .peek(origin)
            .is_some_and(|s| s.breaker.refusal(now, rules).is_some())
    }

    /// Sends the first attempt to the first origin of the route whose breaker is not open
    /// `now()` (the call's own unless it is; its own when all are). Without alternates the
    /// clock is not read.
    #[inline(always)]
    fn route_first(&self, now: impl FnOnce() -> f64) {
        if !self.route.is_empty() {
            let now = now();
            let first = self.route.first(|o| self.is_open(o, now));
            self.at.set(&self.route, first);
        }
    }

    /// Where a retry after the current attempt goes, judged at `now`: the next origin of the
    /// route whose breaker is not open (see [`crate::failover::Route::after`]).
    #[inline(always)]
    fn route_after(&self, now: f64) -> usize {
        if self.route.is_empty() {
            return self.at.get();
        }
        self.route.after(self.at.get(), |o| self.is_open(o, now))
    }
}

impl Ctx<'_> {
    /// An attempt that ended at `end`, as the caller's decisions see it.
    fn ended<'o>(&self, attempt: u32, outcome: &'o AttemptOutcome, end: f64) -> Ended<'o> {
        Ended {
            attempt,
            outcome,
            elapsed_ms: end - self.called_at,
            remaining_ms: self.deadline - end,
        }
    }
}

/// The wait an attempt's `Retry-After` asks for, in ms, read now (an HTTP date against the
/// wall clock). The shell reads the header only from error statuses.
fn retry_after_of<E: Env>(outcome: &AttemptOutcome, env: &E) -> Option<f64> {
    match outcome {
        AttemptOutcome::Response {
            retry_after: Some(value),
            ..
        } => retry_after::parse(value, env.unix_ms()),
        _ => None,
    }
}

fn give_up<O>(
    reason: GiveUpReason,
    output: O,
    attempts: u32,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> CallResult<O> {
    on_event(&Event::GiveUp { reason, attempts });
    CallResult::Done { output, attempts }
}

fn report(transition: Option<Transition>, origin: &str, on_event: &mut dyn FnMut(&Event<'_>)) {
    if let Some(t) = transition {
        on_event(&Event::BreakerTransition {
            origin,
            from: t.from,
            to: t.to,
            reason: t.reason,
        });
    }
}

/// Why a call got no bulkhead slot.
enum NoSlot {
    Full,
    Aborted,
    Deadline,
}

impl<O> From<NoSlot> for CallResult<O> {
    fn from(refusal: NoSlot) -> Self {
        match refusal {
            NoSlot::Full => CallResult::BulkheadFull,
            NoSlot::Aborted => CallResult::Aborted,
            NoSlot::Deadline => CallResult::DeadlineExceeded,
        }
    }
}

/// A bulkhead slot (none when the bulkhead is off); waiting races the abort and the deadline.
async fn admit<E: Env>(
    ctx: &Ctx<'_>,
    env: &E,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> Result<Option<BulkheadPermit>, NoSlot> {
    let Some(policy) = &ctx.policy.bulkhead else {
        return Ok(None);
    };
    let bulkhead = ctx.owner.with(ctx.primary(), |_, s| s.bulkhead.clone());
    let wait = match bulkhead.acquire(policy) {
        Admission::Admitted(permit) => return Ok(Some(permit)),
        Admission::Full => {
            on_event(&Event::BulkheadRejected {
                origin: ctx.primary(),
            });
            return Err(NoSlot::Full);
        }
        Admission::Queued(wait) => wait,
    };
    let stop = race(env.abort_wait(), env.sleep(ctx.deadline - env.now_ms()));
    match race(wait, stop).await {
        Either::Left(permit) => Ok(Some(permit)),
        Either::Right(Either::Left(())) => Err(NoSlot::Aborted),
        Either::Right(Either::Right(())) => Err(NoSlot::Deadline),
    }
}

/// Which of two raced futures finished first.
pub(crate) enum Either<A, B> {
    /// The first.
    Left(A),
    /// The second.
    Right(B),
}

/// Awaits both futures and returns the first to finish (`a` wins a tie); the other is dropped.
pub(crate) async fn race<A: Future, B: Future>(a: A, b: B) -> Either<A::Output, B::Output> {
    let mut a = pin!(a);
    let mut b = pin!(b);
    poll_fn(|cx| {
        if let Poll::Ready(out) = a.as_mut().poll(cx) {
            return Poll::Ready(Either::Left(out));
        }
        b.as_mut().poll(cx).map(Either::Right)
    })
    .await
}
