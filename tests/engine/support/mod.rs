//! The fakes and helpers every concern's tests use: the fake environment and the scripted
//! transport (`fakes`), concurrent calls on the manual clock (`pool`), attempts on a timed
//! plan for hedged reads (`timed`), and the helpers below.

mod fakes;
pub mod pool;
#[cfg(feature = "hedge")]
pub mod timed;

pub use fakes::*;

use futures_executor::block_on;
use resilient_fetch::engine::{self, Call, CallResult};
use resilient_fetch::events::Event;
pub use resilient_fetch::owner::Owner;
#[cfg(feature = "pacing")]
use resilient_fetch::pacing::Why;
use resilient_fetch::policy::{Policy, PolicyInput};
use resilient_fetch::registry::{OriginSnapshot, Registry};

pub const A: &str = "https://a.test";
pub const B: &str = "https://b.test";

/// 2025-01-01T00:00:00Z: the wall clock at virtual time 0.
pub const UNIX_BASE: f64 = 1_735_689_600_000.0;

// ---------------------------------------------------------------- helpers

pub fn policy(json: serde_json::Value) -> Policy {
    let input: PolicyInput = serde_json::from_value(json).expect("decodes");
    Policy::from_input(&input).expect("valid policy")
}

pub fn get(origin: &'static str) -> Call<'static> {
    Call {
        origin,
        method: "GET",
        has_key: false,
        replayable: true,
        has_body: false,
        kept: false,
        alternates: Default::default(),
    }
}

pub fn post(origin: &'static str, has_key: bool) -> Call<'static> {
    Call {
        origin,
        method: "POST",
        has_key,
        replayable: true,
        has_body: false,
        kept: false,
        alternates: Default::default(),
    }
}

pub fn registry() -> Owner {
    Owner::new(Registry::new(1000))
}

/// Runs one call to completion.
pub fn call(
    reg: &Owner,
    policy: &Policy,
    call: Call<'_>,
    script: &mut Script<'_>,
) -> (CallResult<u32>, Log) {
    let mut log = Log::default();
    let clock = script.clock;
    let result = block_on(engine::run(reg, policy, call, script, clock, &mut |e| {
        log.record(e)
    }));
    (result, log)
}

pub fn snapshot(reg: &Owner, origin: &str, now: f64) -> OriginSnapshot {
    reg.lend()
        .stats(now)
        .into_iter()
        .find(|s| s.origin == origin)
        .expect("origin is in the registry")
}

/// Nothing of the call is left holding a slot or counted as in flight or waiting.
pub fn assert_released(reg: &Owner, origin: &str) {
    let s = snapshot(reg, origin, 0.0);
    assert_eq!(s.stats.in_flight, 0, "in_flight back to 0");
    assert_eq!(
        reg.lend().with(origin, |_, s| s.waiting),
        0,
        "waiting back to 0"
    );
    assert_eq!(
        (s.bulkhead_active, s.bulkhead_queued),
        (0, 0),
        "bulkhead slots back"
    );
}

/// A GET to A with the default policy, events going to `on_event`.
pub fn default_get_a(
    reg: &Owner,
    script: &mut Script<'_>,
    clock: &Clock,
    on_event: &mut dyn FnMut(&Event<'_>),
) -> CallResult<u32> {
    block_on(engine::run(
        reg,
        &Policy::default(),
        get(A),
        script,
        clock,
        on_event,
    ))
}

pub fn done(output: u32, attempts: u32) -> CallResult<u32> {
    CallResult::Done { output, attempts }
}

/// An event's kind, the wait (or probability) it states, and why it waits.
#[cfg(feature = "pacing")]
pub type Paced = (String, f64, Option<Why>);

/// Runs a GET to A under `p`, keeping the pacing events.
#[cfg(feature = "pacing")]
pub fn paced_get(
    reg: &Owner,
    p: &Policy,
    clock: &Clock,
    steps: &[Step],
) -> (CallResult<u32>, Vec<Paced>, usize) {
    let mut script = Script::new(clock, steps);
    let mut events = Vec::new();
    let result = block_on(engine::run(reg, p, get(A), &mut script, clock, &mut |e| {
        let (ms, why) = match *e {
            Event::RateLimitWait {
                wait_ms, reason, ..
            } => (wait_ms, Some(reason)),
            Event::RateLimitRejected {
                retry_after_ms,
                reason,
                ..
            } => (retry_after_ms, Some(reason)),
            #[cfg(feature = "throttle")]
            Event::Throttled { probability, .. } => (probability, None),
            _ => (0.0, None),
        };
        events.push((e.kind().to_owned(), ms, why));
    }));
    (result, events, script.limits.borrow().len())
}
