//! What a long outage costs a fleet: requests sent to a dead origin, with and without growing
//! cooldowns (`breaker.maxCooldownMs`), on this crate's own breaker.
//!
//! The model: a fleet of 5 clients (tabs, workers), each making a call every 100 ms to one origin
//! (retries off, so what is counted is the breaker's doing alone). The origin is down from 0 to
//! 60 s, answering every request with a failure, then healthy. Each client's breaker has the
//! default policy (failure rate over 30 s, at least 10 calls, 5 s cooldown); "growing" adds
//! `maxCooldownMs`. Time is virtual and the jitter's randomness seeded, so every run prints the
//! same numbers; the table is the mean over 20 seeds.
//!
//! Measured per configuration: requests the fleet sent while the origin was down, and how long
//! after it came back the last client's breaker closed (the price of a longer cooldown).
//!
//! Run: `cargo run --release --example dead_origin` (see `bench/README.md`).

use resilient_fetch::breaker::Breaker;
use resilient_fetch::policy::BreakerPolicy;
use resilient_fetch::vocab::Judgement;
use std::cell::Cell;

const CLIENTS: usize = 5;
const CALL_EVERY_MS: f64 = 100.0;
const OUTAGE_MS: f64 = 60_000.0;
/// The simulation runs until every breaker has closed, or this long.
const END_MS: f64 = 300_000.0;
const SEEDS: u64 = 20;

/// SplitMix64, seeded: the jitter's draws.
fn unit(state: &Cell<u64>) -> f64 {
    let s = state.get().wrapping_add(0x9E37_79B9_7F4A_7C15);
    state.set(s);
    let mut z = s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
}

/// (requests sent while down, of them probes, ms from recovery until the last breaker closed)
/// for one seed.
fn run(policy: &BreakerPolicy, seed: u64) -> (u64, u64, f64) {
    let rng = Cell::new(seed);
    let random = || unit(&rng);
    let mut breakers: Vec<Breaker> = (0..CLIENTS).map(|_| Breaker::new()).collect();
    // Each client calls on its own phase within the 100 ms period.
    let phase: Vec<f64> = (0..CLIENTS).map(|_| random() * CALL_EVERY_MS).collect();
    let (mut sent_down, mut probes, mut closed_at) = (0u64, 0u64, vec![None::<f64>; CLIENTS]);
    let mut tick = 0.0;
    while tick < END_MS {
        for (i, breaker) in breakers.iter_mut().enumerate() {
            let now = tick + phase[i];
            let Ok(permit) = breaker.try_acquire(now, policy, &random) else {
                continue;
            };
            let down = now < OUTAGE_MS;
            sent_down += u64::from(down);
            probes += u64::from(down && permit.is_probe());
            let judgement = if down {
                Judgement::Failure
            } else {
                Judgement::Success
            };
            let _ = breaker.record(permit, judgement, false, now, policy);
            if !down && closed_at[i].is_none() && breaker.is_closed() {
                closed_at[i] = Some(now);
            }
        }
        if closed_at.iter().all(Option::is_some) {
            break;
        }
        tick += CALL_EVERY_MS;
    }
    let last = closed_at
        .iter()
        .map(|t| t.unwrap_or(END_MS))
        .fold(0.0, f64::max);
    (sent_down, probes, last - OUTAGE_MS)
}

fn main() {
    let fixed = BreakerPolicy::default();
    println!(
        "A fleet of {CLIENTS} clients, a call each every {CALL_EVERY_MS} ms, retries off; the origin down for {} s, then healthy.",
        OUTAGE_MS / 1000.0
    );
    println!(
        "Default breaker (failure rate over 30 s, 10 calls, cooldown {} ms); mean of {SEEDS} seeds.",
        fixed.cooldown_ms
    );
    println!();
    println!(
        "| breaker | requests sent while down | per client | of them probes | last breaker closed after recovery |"
    );
    println!("| --- | ---: | ---: | ---: | ---: |");
    let calls = (OUTAGE_MS / CALL_EVERY_MS) as u64 * CLIENTS as u64;
    let mut rows = vec![(
        "fixed cooldown (maxCooldownMs = cooldownMs)".to_string(),
        fixed.clone(),
    )];
    for max in [30_000, 60_000] {
        rows.push((
            format!("growing, maxCooldownMs {max}"),
            BreakerPolicy {
                max_cooldown_ms: max,
                ..fixed.clone()
            },
        ));
    }
    for (name, policy) in rows {
        let (mut sent, mut probes, mut after) = (0.0, 0.0, 0.0);
        for seed in 1..=SEEDS {
            let (s, p, a) = run(&policy, seed);
            sent += s as f64;
            probes += p as f64;
            after += a;
        }
        let n = SEEDS as f64;
        println!(
            "| {name} | {:.1} of {calls} calls | {:.1} | {:.1} | {:.1} s |",
            sent / n,
            sent / n / CLIENTS as f64,
            probes / n,
            after / n / 1000.0
        );
    }
}
