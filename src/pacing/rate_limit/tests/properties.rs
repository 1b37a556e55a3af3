//! The parser's properties: arbitrary fields never panic, well-formed ones round-trip.

use super::*;
use proptest::prelude::*;

/// A member of a generated draft field: name index, quoted, then `r` and `t` (or `q`
/// and `w`), each of which may be left out.
type Gen = (usize, bool, Option<u64>, Option<u64>);

const NAMES: [&str; 3] = ["default", "burst", "a*b/c"];

fn render(members: &[Gen], first: &str, second: &str, pad: &str) -> String {
    let mut field = String::new();
    for (i, &(name, quoted, x, y)) in members.iter().enumerate() {
        if i > 0 {
            field.push_str(pad);
            field.push(',');
            field.push_str(pad);
        }
        let name = NAMES[name];
        if quoted {
            field.push_str(&format!("\"{name}\""));
        } else {
            field.push_str(name);
        }
        field.push_str(";pk=:YWJj:");
        if let Some(x) = x {
            field.push_str(&format!("{pad};{first}={x}"));
        }
        if let Some(y) = y {
            field.push_str(&format!(";{pad}{second}={y}"));
        }
        field.push_str(";qu=\"a, b;c\"");
    }
    field
}

fn members_strategy(max: usize) -> impl Strategy<Value = Vec<Gen>> {
    prop::collection::vec(
        (
            0..NAMES.len(),
            any::<bool>(),
            prop::option::weighted(0.9, 0u64..6_000_000_000),
            prop::option::weighted(0.8, 0u64..200_000),
        ),
        1..=max,
    )
}

/// What the draft field should give, computed the plain way.
fn expected(ratelimit: &[Gen], policy: &[Gen]) -> Option<Quota> {
    let mut best: Option<Quota> = None;
    for &(name, _, r, t) in ratelimit {
        let policy = policy.iter().find(|p| p.0 == name);
        let Some(r) = r else { continue };
        let Some(t) = t.or(policy.and_then(|p| p.3)) else {
            continue;
        };
        let candidate = Quota {
            remaining: u32::try_from(r).unwrap_or(u32::MAX),
            reset_ms: (t as f64 * 1000.0).min(MAX_RESET_MS),
            limit: policy
                .and_then(|p| p.2)
                .map(|q| u32::try_from(q).unwrap_or(u32::MAX)),
            window_ms: policy
                .and_then(|p| p.3)
                .filter(|w| *w > 0)
                .map(|w| w as f64 * 1000.0),
        };
        let better = match best {
            None => true,
            Some(b) => (candidate.remaining, -candidate.reset_ms) <= (b.remaining, -b.reset_ms),
        };
        if better {
            best = Some(candidate);
        }
    }
    best
}

proptest! {
    #[test]
    fn arbitrary_fields_never_panic(
        ratelimit in prop::option::of(any::<String>()),
        policy in prop::option::of(any::<String>()),
        remaining in prop::option::of(any::<String>()),
        reset in prop::option::of(any::<String>()),
        limit in prop::option::of(any::<String>()),
        now in any::<f64>(),
    ) {
        let headers = Headers {
            ratelimit: ratelimit.as_deref(),
            policy: policy.as_deref(),
            remaining: remaining.as_deref(),
            reset: reset.as_deref(),
            limit: limit.as_deref(),
        };
        if let Some(q) = parse(&headers, now) {
            prop_assert!(q.reset_ms.is_finite() && (0.0..=MAX_RESET_MS).contains(&q.reset_ms));
        }
    }

    #[test]
    fn near_valid_fields_never_panic(
        ratelimit in "[ \t\"a-z0-9;=,.\\\\*:()-]{0,40}",
        policy in "[ \t\"a-z0-9;=,.\\\\*:()-]{0,40}",
        remaining in "[ \t0-9.-]{0,22}",
        reset in "[ \t0-9.e-]{0,22}",
        now in any::<f64>(),
    ) {
        let headers = Headers {
            ratelimit: Some(&ratelimit),
            policy: Some(&policy),
            remaining: Some(&remaining),
            reset: Some(&reset),
            limit: Some(&remaining),
        };
        if let Some(q) = parse(&headers, now) {
            prop_assert!(q.reset_ms.is_finite() && (0.0..=MAX_RESET_MS).contains(&q.reset_ms));
            prop_assert!(q.window_ms.is_none_or(|w| w.is_finite() && w >= 0.0));
        }
    }

    #[test]
    fn well_formed_draft_round_trips(
        ratelimit in members_strategy(4),
        policy in members_strategy(3),
        pad in "[ \t]{0,2}",
    ) {
        let rendered_ratelimit = render(&ratelimit, "r", "t", &pad);
        let rendered_policy = render(&policy, "q", "w", &pad);
        prop_assert_eq!(
            draft(&rendered_ratelimit, Some(&rendered_policy)),
            expected(&ratelimit, &policy),
            "{} / {}", rendered_ratelimit, rendered_policy
        );
    }

    #[test]
    fn well_formed_split_round_trips(
        remaining in 0u64..10_000_000_000,
        whole in 0u64..100_000,
        millis in 0u64..1000,
        limit in prop::option::of(0u32..1_000_000),
    ) {
        let reset = format!("{whole}.{millis:03}");
        let limit_text = limit.map(|l| l.to_string());
        let got = split(&remaining.to_string(), &reset, limit_text.as_deref());
        let reset_ms = (whole as f64 + millis as f64 / 1000.0) * 1000.0;
        let q = got.expect("well formed");
        prop_assert_eq!(q.remaining, u32::try_from(remaining).unwrap_or(u32::MAX));
        prop_assert!((q.reset_ms - reset_ms.min(MAX_RESET_MS)).abs() < 1e-6);
        prop_assert_eq!(q.limit, limit);
    }
}
