//! The retry storm: Marc Brooker's 2015 simulation ("Exponential Backoff And Jitter", AWS
//! Architecture Blog), rebuilt on this crate's own backoff and retry-budget code.
//!
//! The model (after the blog's simulator): N clients each want to update one row once, with
//! optimistic concurrency. A client reads the row's version, then writes with that version;
//! the write succeeds only if nobody wrote in between. After a failed write the client waits
//! (backoff) and starts over with a new read. Every message crosses the network in
//! |N(10, 2)| ms. Backoff: base 5 ms, cap 2 000 ms; the wait before retry `n` (from 1) is drawn
//! from the window `min(cap, base·2^n)`, as the simulator does. Time is virtual (an event
//! queue), randomness is seeded, so every run prints the same numbers.
//!
//! Measured per configuration: total write calls the row received and the time the last
//! client finished, each the mean of 100 trials per seed over 3 seeds.
//!
//! Run: `cargo run --release --example retry_storm` (see `bench/README.md`).

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::time::Instant;

use resilient_fetch::backoff::{Jitter, delay, window};
use resilient_fetch::budget::RetryBudget;
use resilient_fetch::policy::defaults;

/// Backoff base in ms (the blog's).
const BASE_MS: f64 = 5.0;
/// Backoff cap in ms (the blog's).
const CAP_MS: f64 = 2_000.0;
/// Network delay per hop: |N(mean, sd)| ms.
const NET_MEAN_MS: f64 = 10.0;
const NET_SD_MS: f64 = 2.0;
/// Trials per seed (the simulator's count) and the seeds.
const TRIALS: u32 = 100;
const SEEDS: [u64; 3] = [1, 2, 3];

/// The reference at 100 clients (the simulator, mean of 3 seeds): (time ms, calls).
const REFERENCE_100: [(Strategy, f64, f64); 4] = [
    (Strategy::Exponential, 63_086.0, 1_855.0),
    (Strategy::Equal, 6_624.0, 812.0),
    (Strategy::Full, 4_891.0, 796.0),
    (Strategy::Decorrelated, 4_540.0, 1_001.0),
];

/// SplitMix64: small, fast, seedable; plenty for a simulation.
struct Rng {
    state: u64,
    spare_normal: Option<f64>,
}

impl Rng {
    fn new(seed: u64) -> Self {
        Rng {
            state: seed,
            spare_normal: None,
        }
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1), 53 random bits.
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal by Box–Muller; the second value of each pair is kept for the next call.
    fn standard_normal(&mut self) -> f64 {
        if let Some(z) = self.spare_normal.take() {
            return z;
        }
        // 1 - unit() is in (0, 1]: the logarithm is finite.
        let radius = (-2.0 * (1.0 - self.unit()).ln()).sqrt();
        let angle = std::f64::consts::TAU * self.unit();
        self.spare_normal = Some(radius * angle.sin());
        radius * angle.cos()
    }

    /// One network hop in ms.
    fn hop(&mut self) -> f64 {
        (NET_MEAN_MS + NET_SD_MS * self.standard_normal()).abs()
    }
}

/// How a client waits after a failed write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Strategy {
    /// Retry at once.
    NoBackoff,
    /// The window itself (`Jitter::None`).
    Exponential,
    /// `Jitter::Equal`.
    Equal,
    /// `Jitter::Full` (this crate's default).
    Full,
    /// `Jitter::Decorrelated`.
    Decorrelated,
}

impl Strategy {
    const ALL: [Strategy; 5] = [
        Strategy::NoBackoff,
        Strategy::Exponential,
        Strategy::Equal,
        Strategy::Full,
        Strategy::Decorrelated,
    ];

    fn name(self) -> &'static str {
        match self {
            Strategy::NoBackoff => "none",
            Strategy::Exponential => "expo",
            Strategy::Equal => "equal",
            Strategy::Full => "full",
            Strategy::Decorrelated => "decorr",
        }
    }

    fn jitter(self) -> Option<Jitter> {
        match self {
            Strategy::NoBackoff => None,
            Strategy::Exponential => Some(Jitter::None),
            Strategy::Equal => Some(Jitter::Equal),
            Strategy::Full => Some(Jitter::Full),
            Strategy::Decorrelated => Some(Jitter::Decorrelated),
        }
    }
}

/// What arrives, and where.
#[derive(Clone, Copy)]
enum Message {
    /// A read request reaches the row.
    Read,
    /// The read's answer (the version) reaches the client.
    ReadReply(u64),
    /// A write with the version read reaches the row.
    Write(u64),
    /// The write's answer reaches the client.
    WriteReply(bool),
}

struct Event {
    at: f64,
    seq: u64,
    client: usize,
    message: Message,
}

// Earliest first in a max-heap; ties by sending order.
impl Ord for Event {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .at
            .total_cmp(&self.at)
            .then_with(|| other.seq.cmp(&self.seq))
    }
}

impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Event {}

/// Where retry budgets live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Budget {
    /// No budget: every failed write is retried.
    Off,
    /// One budget per client, as if each were its own process.
    PerClient,
    /// One budget for all: the clients are calls of one `ResilientClient` to one origin.
    Shared,
}

struct Client {
    /// Failed writes so far: the next backoff is for retry number `failures`.
    failures: u32,
    /// The last wait (decorrelated jitter); `BASE_MS` before the first.
    previous_ms: f64,
    budget: RetryBudget,
}

/// One trial's result.
#[derive(Clone, Copy, Default)]
struct Outcome {
    /// When the last message was handled, in ms.
    time_ms: f64,
    /// Writes the row received.
    calls: f64,
    /// Clients that stopped because their budget could not pay for a retry.
    gave_up: f64,
}

impl Outcome {
    fn add(&mut self, other: Outcome) {
        self.time_ms += other.time_ms;
        self.calls += other.calls;
        self.gave_up += other.gave_up;
    }

    fn scaled(self, by: f64) -> Outcome {
        Outcome {
            time_ms: self.time_ms / by,
            calls: self.calls / by,
            gave_up: self.gave_up / by,
        }
    }
}

fn trial(clients: usize, strategy: Strategy, budget: Budget, rng: &mut Rng) -> Outcome {
    let capacity = defaults::BUDGET_CAPACITY;
    // A lost write race is an error status (a 409/412-like answer), not a network error.
    let cost = defaults::RETRY_COST;
    let mut shared = RetryBudget::new();
    let mut state: Vec<Client> = (0..clients)
        .map(|_| Client {
            failures: 0,
            previous_ms: BASE_MS,
            budget: RetryBudget::new(),
        })
        .collect();
    let mut queue = BinaryHeap::with_capacity(clients * 2);
    let mut seq = 0u64;
    let mut send = |queue: &mut BinaryHeap<Event>, at: f64, client: usize, message: Message| {
        seq += 1;
        queue.push(Event {
            at,
            seq,
            client,
            message,
        });
    };
    for client in 0..clients {
        let at = rng.hop();
        send(&mut queue, at, client, Message::Read);
    }
    let mut version = 0u64;
    let mut out = Outcome::default();
    while let Some(event) = queue.pop() {
        let now = event.at;
        out.time_ms = now;
        let client = event.client;
        match event.message {
            Message::Read => {
                let at = now + rng.hop();
                send(&mut queue, at, client, Message::ReadReply(version));
            }
            Message::ReadReply(seen) => {
                let at = now + rng.hop();
                send(&mut queue, at, client, Message::Write(seen));
            }
            Message::Write(seen) => {
                out.calls += 1.0;
                let ok = seen == version;
                if ok {
                    version += 1;
                }
                let at = now + rng.hop();
                send(&mut queue, at, client, Message::WriteReply(ok));
            }
            Message::WriteReply(true) => {
                // As the engine does: a success gives back what its retry cost, or a token.
                let c = &mut state[client];
                let refund = if c.failures > 0 {
                    cost
                } else {
                    defaults::NO_RETRY_INCREMENT
                };
                match budget {
                    Budget::Off => {}
                    Budget::PerClient => c.budget.on_success(refund, capacity),
                    Budget::Shared => shared.on_success(refund, capacity),
                }
            }
            Message::WriteReply(false) => {
                let c = &mut state[client];
                c.failures += 1;
                let paid = match budget {
                    Budget::Off => true,
                    Budget::PerClient => c.budget.try_withdraw(cost, capacity),
                    Budget::Shared => shared.try_withdraw(cost, capacity),
                };
                if !paid {
                    out.gave_up += 1.0;
                    continue;
                }
                let hop = rng.hop();
                let wait = match strategy.jitter() {
                    None => 0.0,
                    Some(jitter) => {
                        let random = rng.unit();
                        delay(jitter, c.failures, BASE_MS, CAP_MS, c.previous_ms, random)
                    }
                };
                c.previous_ms = wait;
                send(&mut queue, now + hop + wait, client, Message::Read);
            }
        }
    }
    out
}

/// Mean over `TRIALS` trials for each seed, then over the seeds.
fn measure(clients: usize, strategy: Strategy, budget: Budget) -> Outcome {
    let mut total = Outcome::default();
    for seed in SEEDS {
        // One stream per (seed, clients, strategy): configurations do not share draws.
        let mix = seed
            .wrapping_mul(1_000_003)
            .wrapping_add(clients as u64 * 131)
            .wrapping_add(strategy as u64 * 7)
            .wrapping_add(budget as u64);
        let mut rng = Rng::new(mix);
        for _ in 0..TRIALS {
            total.add(trial(clients, strategy, budget, &mut rng));
        }
    }
    total.scaled(f64::from(TRIALS) * SEEDS.len() as f64)
}

fn thousands(value: f64) -> String {
    let digits = format!("{:.0}", value.round());
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(' ');
        }
        out.push(ch);
    }
    out
}

/// A table's title and header row: the strategies, then `extra` columns.
/// One table: a row per client count, one metric of every strategy, then
/// the two budget columns.
fn metric_table(title: &str, rows: &[Row], metric: impl Fn(&Outcome) -> f64) {
    header(title, &["full+budget", "full+shared"]);
    for r in rows {
        let cells: Vec<String> = r.plain.iter().map(|o| thousands(metric(o))).collect();
        println!(
            "| {} | {} | {} | {} |",
            r.clients,
            cells.join(" | "),
            thousands(metric(&r.full_per_client)),
            thousands(metric(&r.full_shared))
        );
    }
    println!();
}

fn header(title: &str, extra: &[&str]) {
    println!("{title}");
    println!();
    let mut names: Vec<&str> = Strategy::ALL.iter().map(|s| s.name()).collect();
    names.extend_from_slice(extra);
    println!("| clients | {} |", names.join(" | "));
    println!("| ---: |{}", " ---: |".repeat(names.len()));
}

/// One client count's results.
struct Row {
    clients: usize,
    /// Per strategy, in `Strategy::ALL` order, no budget.
    plain: Vec<Outcome>,
    /// Full jitter, a budget per client.
    full_per_client: Outcome,
    /// Full jitter, one budget shared by all clients.
    full_shared: Outcome,
    /// No backoff, one budget shared by all clients.
    none_shared: Outcome,
}

fn main() {
    let started = Instant::now();
    let rows: Vec<Row> = (1..=19)
        .map(|i| {
            let n = i * 10;
            Row {
                clients: n,
                plain: Strategy::ALL
                    .iter()
                    .map(|&s| measure(n, s, Budget::Off))
                    .collect(),
                full_per_client: measure(n, Strategy::Full, Budget::PerClient),
                full_shared: measure(n, Strategy::Full, Budget::Shared),
                none_shared: measure(n, Strategy::NoBackoff, Budget::Shared),
            }
        })
        .collect();

    println!(
        "## Retry storm (Brooker 2015 model; this crate's backoff::delay and budget::RetryBudget)"
    );
    println!();
    println!(
        "N clients race for one optimistic-concurrency row; hop |N({NET_MEAN_MS}, {NET_SD_MS})| ms; base {BASE_MS} ms, cap {CAP_MS} ms;"
    );
    println!(
        "the wait before retry n (from 1) is drawn from min(cap, base*2^n) as in the simulator (window(1, ..) = {} ms);",
        window(1, BASE_MS, CAP_MS)
    );
    println!(
        "no retry limit; virtual time; seeds {SEEDS:?} x {TRIALS} trials each, mean. Budget: RetryBudget with the defaults"
    );
    println!(
        "(capacity {}, {} tokens per retry, a success refunds its retry's cost or {} token); a retry it cannot pay is not made.",
        defaults::BUDGET_CAPACITY,
        defaults::RETRY_COST,
        defaults::NO_RETRY_INCREMENT
    );
    println!(
        "\"+budget\": one budget per client (the brief's model); \"+shared\": one budget for all N (N calls of one ResilientClient)."
    );
    println!();

    metric_table(
        "Completion time, ms (when the last client is done)",
        &rows,
        |o| o.time_ms,
    );
    metric_table("Total calls (writes the row received)", &rows, |o| o.calls);

    println!("Budget on: clients that gave up (mean per trial; a give-up is an update not made)");
    println!();
    println!(
        "| clients | full+budget | full+shared | none+shared gave up | none+shared calls | none calls |"
    );
    println!("| ---: | ---: | ---: | ---: | ---: | ---: |");
    for r in &rows {
        println!(
            "| {} | {:.2} | {:.2} | {:.2} | {} | {} |",
            r.clients,
            r.full_per_client.gave_up,
            r.full_shared.gave_up,
            r.none_shared.gave_up,
            thousands(r.none_shared.calls),
            thousands(r.plain[0].calls)
        );
    }
    println!();

    println!("100 clients against the reference (the simulator, mean of 3 seeds)");
    println!();
    println!("| strategy | time ms | reference | ratio | calls | reference | ratio |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    if let Some(r) = rows.iter().find(|r| r.clients == 100) {
        for (strategy, ref_time, ref_calls) in REFERENCE_100 {
            let Some(i) = Strategy::ALL.iter().position(|&s| s == strategy) else {
                continue;
            };
            let o = r.plain[i];
            println!(
                "| {} | {} | {} | {:.2} | {} | {} | {:.2} |",
                strategy.name(),
                thousands(o.time_ms),
                thousands(ref_time),
                o.time_ms / ref_time,
                thousands(o.calls),
                thousands(ref_calls),
                o.calls / ref_calls
            );
        }
    }
    println!();
    println!(
        "(retry_storm: {} configurations x {} trials in {:.1} s)",
        rows.len() * (Strategy::ALL.len() + 3),
        TRIALS as usize * SEEDS.len(),
        started.elapsed().as_secs_f64()
    );
}
