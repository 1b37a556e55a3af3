//! Failover through the loop: which origin each attempt goes to (the transport is told, the
//! events name it), whose breaker, budget and counters each attempt uses, and that a call whose
//! origins are all open fails as it would without failover.

use crate::support::*;
use resilient_fetch::breaker::BreakerState;
use resilient_fetch::engine::{Call, CallResult, Env};
use resilient_fetch::events::{Event, GiveUpReason};
use resilient_fetch::policy::Policy;

const C: &str = "https://c.test";

/// A's alternates: B, then C.
fn alternates() -> Vec<String> {
    vec![B.to_owned(), C.to_owned()]
}

fn to_a<'a>(call: Call<'a>, alternates: &'a [String]) -> Call<'a> {
    Call { alternates, ..call }
}

/// One failure opens a breaker for 5 s; retries wait nothing.
fn tripping(retry: serde_json::Value) -> Policy {
    policy(serde_json::json!({
        "retry": retry,
        "breaker": {"mode": "consecutive", "failureThreshold": 1, "cooldownMs": 5000},
    }))
}

/// Opens `origin`'s breaker with one failed call to it.
fn open(reg: &Owner, p: &Policy, clock: &Clock, origin: &'static str) {
    let mut script = Script::new(clock, &[Step::Status(503)]);
    let single = policy_without_retries(p);
    let _ = call(reg, &single, get(origin), &mut script);
    assert_eq!(
        snapshot(reg, origin, clock.now_ms()).breaker,
        BreakerState::Open
    );
}

fn policy_without_retries(p: &Policy) -> Policy {
    Policy {
        retry: None,
        ..p.clone()
    }
}

/// (kind, origin) of every event that names one.
fn origins(events: &[(String, Option<String>)]) -> Vec<(&str, &str)> {
    events
        .iter()
        .filter_map(|(k, o)| o.as_deref().map(|o| (k.as_str(), o)))
        .collect()
}

/// Runs `call` keeping every event's kind and origin.
fn run(
    reg: &Owner,
    p: &Policy,
    c: Call<'_>,
    script: &mut Script<'_>,
) -> (CallResult<u32>, Vec<(String, Option<String>)>) {
    let mut events = Vec::new();
    let clock = script.clock;
    let result = futures_executor::block_on(resilient_fetch::engine::run(
        reg,
        p,
        c,
        script,
        clock,
        &mut |e: &Event<'_>| events.push((e.kind().to_owned(), e.origin().map(str::to_owned))),
    ));
    (result, events)
}

#[test]
fn a_call_whose_origin_is_open_goes_to_the_first_alternate_not_open() {
    let (reg, clock) = (registry(), Clock::auto());
    let p = tripping(serde_json::json!(false));
    open(&reg, &p, &clock, A);
    let alt = alternates();
    let mut script = Script::new(&clock, &[Step::Status(200)]);
    let (result, events) = run(&reg, &p, to_a(get(A), &alt), &mut script);
    assert_eq!(result, done(1, 1));
    assert_eq!(*script.sent_to.borrow(), [Some(B.to_owned())]);
    assert_eq!(
        origins(&events),
        [("attemptStart", B), ("attemptEnd", B)],
        "no shortCircuit: A was not asked"
    );
    assert_eq!(snapshot(&reg, B, clock.now_ms()).stats.attempts, 1);
    let a = snapshot(&reg, A, clock.now_ms());
    assert_eq!((a.stats.attempts, a.stats.short_circuits), (1, 0));

    // B open too: C.
    open(&reg, &p, &clock, B);
    let mut script = Script::new(&clock, &[Step::Status(200)]);
    let (result, _) = run(&reg, &p, to_a(get(A), &alt), &mut script);
    assert_eq!(result, done(1, 1));
    assert_eq!(*script.sent_to.borrow(), [Some(C.to_owned())]);
}

#[test]
fn a_retry_goes_to_the_next_origin_and_that_origin_pays_and_counts() {
    let (reg, clock) = (registry(), Clock::auto());
    let p = policy(serde_json::json!({
        "retry": {"maxAttempts": 3, "baseDelayMs": 0, "maxDelayMs": 0},
        "retryBudget": {"capacity": 100, "retryCost": 10, "noRetryIncrement": 0},
    }));
    let alt = alternates();
    let steps = [Step::Status(503), Step::Network, Step::Status(200)];
    let mut script = Script::new(&clock, &steps);
    let (result, events) = run(&reg, &p, to_a(post(A, true), &alt), &mut script);
    assert_eq!(result, done(3, 3));
    assert_eq!(
        *script.sent_to.borrow(),
        [None, Some(B.to_owned()), Some(C.to_owned())]
    );
    assert_eq!(
        origins(&events),
        [
            ("attemptStart", A),
            ("attemptEnd", A),
            ("retry", B),
            ("attemptStart", B),
            ("attemptEnd", B),
            ("retry", C),
            ("attemptStart", C),
            ("attemptEnd", C),
        ]
    );
    let now = clock.now_ms();
    let [a, b, c] = [A, B, C].map(|o| snapshot(&reg, o, now));
    assert_eq!(
        [a.stats.attempts, b.stats.attempts, c.stats.attempts],
        [1, 1, 1]
    );
    assert_eq!([a.stats.failures, b.stats.failures], [1, 1]);
    assert_eq!(c.stats.successes, 1);
    // Each retry is paid by the origin it goes to (C's success gives back what its retry
    // cost, as without failover); A's budget is untouched.
    assert_eq!([b.budget_tokens, c.budget_tokens], [90, 100]);
    // (A bucket never drawn on is full, whatever capacity it is shown at.)
    assert!(a.budget_tokens >= 100, "{}", a.budget_tokens);
}

#[test]
fn a_retry_wraps_to_the_primary_and_skips_open_origins() {
    let (reg, clock) = (registry(), Clock::auto());
    let p = tripping(serde_json::json!({"maxAttempts": 3, "baseDelayMs": 0, "maxDelayMs": 0}));
    open(&reg, &p, &clock, C);
    let alt = alternates();
    // A fails (and opens), B fails (and opens), C is open: the third attempt has nowhere to
    // go, and the call gives up as it would without failover.
    let steps = [Step::Status(503), Step::Status(503), Step::Status(200)];
    let mut script = Script::new(&clock, &steps);
    let (result, events) = run(&reg, &p, to_a(get(A), &alt), &mut script);
    assert_eq!(result, done(2, 2));
    assert_eq!(*script.sent_to.borrow(), [None, Some(B.to_owned())]);
    let kinds: Vec<&str> = events.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(kinds.last(), Some(&"giveUp"));
    assert!(!kinds.contains(&"shortCircuit"), "{kinds:?}");

    // Without breakers tripping, a third attempt after B and C wraps to A.
    let (reg, clock) = (registry(), Clock::auto());
    let p =
        policy(serde_json::json!({"retry": {"maxAttempts": 4, "baseDelayMs": 0, "maxDelayMs": 0}}));
    let steps = [
        Step::Network,
        Step::Network,
        Step::Network,
        Step::Status(200),
    ];
    let mut script = Script::new(&clock, &steps);
    let (result, _) = run(&reg, &p, to_a(get(A), &alt), &mut script);
    assert_eq!(result, done(4, 4));
    assert_eq!(
        *script.sent_to.borrow(),
        [None, Some(B.to_owned()), Some(C.to_owned()), None]
    );
}

#[test]
fn a_retry_whose_next_origin_is_still_open_gives_up_with_the_breaker() {
    let (reg, clock) = (registry(), Clock::auto());
    let p = tripping(serde_json::json!({"maxAttempts": 3, "baseDelayMs": 0, "maxDelayMs": 0}));
    open(&reg, &p, &clock, B);
    open(&reg, &p, &clock, C);
    let alt = alternates();
    // A fails and opens: B and C are open, so is A when the wait ends.
    let mut script = Script::new(&clock, &[Step::Status(503), Step::Status(200)]);
    let (result, log) = call(&reg, &p, to_a(get(A), &alt), &mut script);
    assert_eq!(result, done(1, 1));
    assert_eq!(*script.sent_to.borrow(), [None]);
    assert_eq!(log.give_ups, [(GiveUpReason::BreakerOpen, 1)]);
}

#[test]
fn a_call_comes_back_to_its_origin_once_its_breaker_lets_a_probe_through() {
    let (reg, clock) = (registry(), Clock::auto());
    let p = tripping(serde_json::json!(false));
    open(&reg, &p, &clock, A);
    let alt = alternates();
    let mut script = Script::new(&clock, &[Step::Status(200)]);
    let _ = run(&reg, &p, to_a(get(A), &alt), &mut script);
    assert_eq!(*script.sent_to.borrow(), [Some(B.to_owned())]);

    clock.advance(5000.0);
    assert_eq!(
        snapshot(&reg, A, clock.now_ms()).breaker,
        BreakerState::HalfOpen
    );
    let mut script = Script::new(&clock, &[Step::Status(200)]);
    let (result, events) = run(&reg, &p, to_a(get(A), &alt), &mut script);
    assert_eq!(result, done(1, 1));
    assert_eq!(*script.sent_to.borrow(), [None], "the probe goes to A");
    assert_eq!(
        origins(&events),
        [
            ("breakerTransition", A),
            ("attemptStart", A),
            ("attemptEnd", A),
            ("breakerTransition", A),
        ]
    );
    assert_eq!(
        snapshot(&reg, A, clock.now_ms()).breaker,
        BreakerState::Closed
    );
}

#[test]
fn a_call_whose_origins_are_all_open_is_refused_by_its_own() {
    let (reg, clock) = (registry(), Clock::auto());
    let p = tripping(serde_json::json!(false));
    open(&reg, &p, &clock, A);
    clock.advance(1000.0);
    open(&reg, &p, &clock, B);
    open(&reg, &p, &clock, C);
    let alt = alternates();
    let mut script = Script::new(&clock, &[]);
    let (result, events) = run(&reg, &p, to_a(get(A), &alt), &mut script);
    assert_eq!(
        result,
        // A opened at 10 ms for 5 s; B's and C's calls took 10 ms each after 1 s.
        CallResult::ShortCircuited {
            retry_after_ms: 5010.0 - 1030.0
        },
        "A's wait, as without failover"
    );
    assert!(script.sent_to.borrow().is_empty());
    assert_eq!(origins(&events), [("shortCircuit", A)]);
    // The fast path leaves it to the loop (which may find an alternate), and says nothing.
    let mut told = 0;
    let at_once = resilient_fetch::engine::refused_at_once(
        &reg,
        &p,
        A,
        &alt,
        &|| clock.now_ms(),
        &mut |_| told += 1,
    );
    assert_eq!((at_once, told), (None, 0));
    assert!(
        resilient_fetch::engine::refused_at_once(&reg, &p, A, &[], &|| clock.now_ms(), &mut |_| {})
            .is_some()
    );
}

#[test]
fn a_call_without_alternates_goes_where_it_went() {
    let (reg, clock) = (registry(), Clock::auto());
    let p =
        policy(serde_json::json!({"retry": {"maxAttempts": 2, "baseDelayMs": 0, "maxDelayMs": 0}}));
    let mut script = Script::new(&clock, &[Step::Status(503), Step::Status(200)]);
    let (result, events) = run(&reg, &p, get(A), &mut script);
    assert_eq!(result, done(2, 2));
    assert_eq!(*script.sent_to.borrow(), [None, None]);
    assert!(origins(&events).iter().all(|(_, o)| *o == A));
}

#[test]
fn a_half_open_origin_whose_probes_are_all_out_is_passed_over() {
    let (reg, clock) = (registry(), Clock::auto());
    let p = tripping(serde_json::json!(false));
    open(&reg, &p, &clock, A);
    clock.advance(5000.0);
    // Another call's probe is out (halfOpenMaxCalls 1): A would refuse this call.
    let rules = p.breaker.clone().expect("a breaker");
    let probe = reg.with(A, |_, s| {
        s.breaker.try_acquire(clock.now_ms(), &rules, &|| 0.5)
    });
    assert!(probe.is_ok(), "the probe goes");
    let alt = alternates();
    let mut script = Script::new(&clock, &[Step::Status(200)]);
    let (result, events) = run(&reg, &p, to_a(get(A), &alt), &mut script);
    assert_eq!(result, done(1, 1));
    assert_eq!(*script.sent_to.borrow(), [Some(B.to_owned())]);
    assert!(
        !events.iter().any(|(k, _)| k == "shortCircuit"),
        "{events:?}"
    );
}
