//! The pacer's properties, over arbitrary sends, reports and bookings.

use super::*;
use proptest::prelude::*;

proptest! {
    /// However sends and reports of one window interleave, no more sends go out in it
    /// than the first report said were left (later reports may say more: a server
    /// does not count requests still on their way).
    #[test]
    fn never_more_sends_than_reported_left(
        ops in proptest::collection::vec((0u32..5, 0u32..500), 1..40),
        left in 0u32..10,
    ) {
        let reset = 10_000.0;
        let mut p = Pacer::default();
        p.learn(&quota(left, reset), 0.0, ANY);
        let (mut sent, mut now) = (0u32, 0.0);
        for (extra, dt) in ops {
            now += f64::from(dt);
            if now >= reset {
                break;
            }
            if p.admit(now, f64::INFINITY, None) == Admit::Go {
                p.take(now);
                sent += 1;
            }
            p.learn(&quota(left.saturating_sub(sent) + extra, reset - now), now, ANY);
            prop_assert!(p.wait(now).is_none_or(|(ms, _)| ms.is_finite() && ms > 0.0));
        }
        prop_assert!(sent <= left);
    }

    /// With a known limit and window, booked and immediate sends together never put
    /// more than the limit into any window, and every booking lands on a window start.
    #[test]
    fn bookings_never_overfill_a_window(
        arrivals in proptest::collection::vec(0u32..300, 1..120),
        limit in 1u32..6,
    ) {
        let span = 1_000.0;
        let mut p = Pacer::default();
        p.learn(&limited(0, span, limit, span), 0.0, ANY);
        let mut per_window = std::collections::BTreeMap::<i64, u32>::new();
        let mut now = 0.0;
        for dt in arrivals {
            now += f64::from(dt);
            let at = match p.admit(now, f64::INFINITY, None) {
                Admit::Go => {
                    p.take(now);
                    now
                }
                Admit::Booked { due, .. } => {
                    let at = now + due;
                    prop_assert!((at / span).fract() == 0.0, "booked at {}", at);
                    at
                }
                other => return Err(TestCaseError::fail(format!("{other:?}"))),
            };
            *per_window.entry((at / span).floor() as i64).or_default() += 1;
        }
        for (window, n) in per_window {
            prop_assert!(n <= limit, "window {} got {} sends", window, n);
        }
    }

    /// Whatever resets answers claim, a spent quota never holds a call back longer than
    /// the cap (or a probe window's second), and nothing is booked beyond what is believed.
    #[test]
    fn a_spent_quota_holds_calls_back_at_most_the_cap(
        ops in proptest::collection::vec(
            (0u32..3_000, 0u32..4, 0u32..100_000_000, prop::option::of(1u32..4), any::<bool>()),
            1..60,
        ),
        cap in 0u32..20_000,
    ) {
        let cap = f64::from(cap);
        let mut p = Pacer::default();
        let mut now = 0.0;
        for (dt, remaining, reset, limit, answer) in ops {
            now += f64::from(dt);
            if answer {
                let q = Quota {
                    remaining,
                    reset_ms: f64::from(reset).min(crate::pacing::rate_limit::MAX_RESET_MS),
                    limit,
                    window_ms: limit.map(|_| f64::from(reset % 100_000)),
                };
                p.heard((true, Some(&q)), false, now, cap);
            } else {
                match p.admit(now, ANY, None) {
                    Admit::Go => {
                        p.take(now);
                    }
                    Admit::Wait(ms, _) => prop_assert!(ms <= cap.max(SAME_WINDOW_MS), "{ms}"),
                    Admit::Booked { wake, .. } => prop_assert!(wake <= cap, "wakes in {wake} ms"),
                    Admit::TooLong(..) => prop_assert!(false),
                }
            }
            if let Some((ms, _)) = p.wait(now) {
                prop_assert!(ms <= cap.max(SAME_WINDOW_MS), "waits {} ms, cap {}", ms, cap);
            }
        }
    }

    /// Calls arrive, some that wait give up, and the waiting ones ask again when told to:
    /// no window gets more than the limit, the first booked go first, and a call told to
    /// wait on at a reset finds that window full (a booking given back moved the ones
    /// behind it up).
    #[test]
    fn bookings_given_back_move_the_queue_up(
        ops in proptest::collection::vec((0u32..400, any::<bool>(), 0usize..8), 1..80),
        limit in 1u32..4,
    ) {
        let span = 1_000.0;
        let mut p = Pacer::default();
        p.learn(&limited(0, span, limit, span), 0.0, ANY);
        // Calls waiting: (ticket, asks again at, arrived as).
        let mut waiting: Vec<(Ticket, f64, usize)> = Vec::new();
        let (mut sent, mut refilled) = (Vec::<(f64, usize)>::new(), Vec::<f64>::new());
        let mut now = 0.0;
        let mut arrived = 0;
        let mut ask = |p: &mut Pacer, now: f64, ticket, who, waiting: &mut Vec<_>| {
            match p.admit(now, ANY, ticket) {
                Admit::Go => {
                    if ticket.is_none() {
                        p.take(now);
                    }
                    sent.push((now, who));
                }
                Admit::Booked { ticket: t, wake, .. } => {
                    if ticket.is_some() {
                        refilled.push(now);
                    }
                    waiting.push((t, now + wake, who));
                }
                other => panic!("{other:?}"),
            }
        };
        for (dt, gives_up, which) in ops {
            let next = now + f64::from(dt);
            // Those due by then ask again, in the order they are due.
            while let Some(i) = (0..waiting.len())
                .filter(|i| waiting[*i].1 <= next)
                .min_by(|a, b| waiting[*a].1.total_cmp(&waiting[*b].1).then(a.cmp(b)))
            {
                let (ticket, at, who) = waiting.remove(i);
                ask(&mut p, at, Some(ticket), who, &mut waiting);
            }
            now = next;
            if gives_up && !waiting.is_empty() {
                let (ticket, ..) = waiting.remove(which % waiting.len());
                p.unbook(ticket);
            } else {
                ask(&mut p, now, None, arrived, &mut waiting);
                arrived += 1;
            }
        }
        let in_window = |w: f64| sent.iter().filter(|(t, _)| (t / span).floor() == w).count();
        for (t, _) in &sent {
            prop_assert!(in_window((t / span).floor()) <= limit as usize, "{sent:?}");
        }
        for t in refilled {
            prop_assert_eq!(in_window((t / span).floor()), limit as usize, "at {}: {:?}", t, sent);
        }
        let booked_order: Vec<usize> = sent.iter().filter(|(t, _)| *t >= span).map(|s| s.1).collect();
        prop_assert!(booked_order.windows(2).all(|w| w[0] < w[1]), "{sent:?}");
    }
}
