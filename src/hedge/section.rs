//! `hedge`: hedged reads, when a hedge goes (a fixed delay, or the origin's recent p95 within
//! bounds) and how many go at most (see [`crate::hedge`]): the policy's section, its schema
//! rows and its row in the build's table of capabilities.

use crate::policy::field::{Field, Kind, MAX_MS, bounded, field, int};
use crate::policy::messages::int_range;
use crate::policy::reader::{Check, Object, Rows};
use crate::policy::value::{Map, Value};

/// The `hedge` defaults, each written once ([`crate::policy::defaults`] holds them all).
pub mod defaults {
    /// Hedged reads are off unless the policy sets `hedge`.
    pub const HEDGE_ENABLED: bool = false;
    /// Hedges after the first attempt at most (JS `hedge.maxHedges`).
    pub const MAX_HEDGES: u32 = 1;
    /// The shortest hedge delay `"auto"` uses, in ms (JS `hedge.minDelayMs`).
    pub const HEDGE_MIN_DELAY_MS: u32 = 10;
    /// The longest hedge delay `"auto"` uses, and its delay until it has learnt the
    /// origin's latency, in ms (JS `hedge.maxDelayMs`; Polly's default hedging delay).
    pub const HEDGE_MAX_DELAY_MS: u32 = 2000;
}

/// The capability's row in the build's table ([`crate::policy::CAPABILITIES`]): its option,
/// what it does, and that this build has it.
pub const CAPABILITY: (&str, &str, bool) = ("hedge", "hedged reads", true);

/// The `hedge` rows of the schema ([`crate::policy::schema::FIELDS`]), the object first.
pub const FIELDS: &[Field] = &[
    field(
        "hedge",
        Kind::Feature {
            on: defaults::HEDGE_ENABLED,
        },
    ),
    field(
        "hedge.delayMs",
        Kind::DelayOrAuto {
            min: 0,
            max: MAX_MS,
        },
    ),
    int("hedge.maxHedges", 1, 3, defaults::MAX_HEDGES),
    int("hedge.minDelayMs", 0, MAX_MS, defaults::HEDGE_MIN_DELAY_MS),
    bounded(
        "hedge.maxDelayMs",
        Kind::Int {
            min: 0,
            max: MAX_MS,
            default: defaults::HEDGE_MAX_DELAY_MS,
        },
        ">= minDelayMs, ..=2147483647",
    ),
];

/// When a hedge goes: after a fixed delay, or the origin's recent p95 of attempt latency.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HedgeDelay {
    /// `"auto"`: the origin's p95, within `[min_delay_ms, max_delay_ms]`.
    Auto,
    /// This many ms.
    Fixed(u32),
}

/// Hedging settings (GET, HEAD and OPTIONS without a body only).
#[derive(Clone, Debug, PartialEq)]
pub struct HedgePolicy {
    /// When a hedge goes.
    pub delay: HedgeDelay,
    /// Hedges after the first attempt at most (1..=3).
    pub max_hedges: u32,
    /// The shortest `"auto"` delay, in ms.
    pub min_delay_ms: u32,
    /// The longest `"auto"` delay (and its delay before it has learnt), in ms.
    pub max_delay_ms: u32,
}

impl Default for HedgePolicy {
    fn default() -> Self {
        HedgePolicy {
            delay: HedgeDelay::Auto,
            max_hedges: defaults::MAX_HEDGES,
            min_delay_ms: defaults::HEDGE_MIN_DELAY_MS,
            max_delay_ms: defaults::HEDGE_MAX_DELAY_MS,
        }
    }
}

/// The `hedge` a policy starts with (its default: off).
pub(crate) fn initial() -> Option<HedgePolicy> {
    defaults::HEDGE_ENABLED.then(HedgePolicy::default)
}

/// The policy's `hedge` from its fields `o`: `None` when off.
pub(crate) fn read<R: Rows>(c: &mut Check<R>, o: &Object) -> Option<HedgePolicy> {
    c.feature(o, "hedge").map(|m| hedge_policy(c, m))
}

fn hedge_policy<R: Rows>(c: &mut Check<R>, map: &Map) -> HedgePolicy {
    let o = c.object(map, "hedge");
    let max = MAX_MS;
    let delay = match o.get("delayMs") {
        None => HedgeDelay::Auto,
        Some(Value::String(s)) if s == "auto" => HedgeDelay::Auto,
        Some(Value::Number(n)) if n.fract() == 0.0 && (0.0..=f64::from(max)).contains(n) => {
            HedgeDelay::Fixed(*n as u32)
        }
        Some(other) => {
            let mut expected = int_range("", 0, "", max);
            expected.push_str(", or \"auto\"");
            let right_type = matches!(other, Value::String(_) | Value::Number(_));
            c.fail("hedge.delayMs".to_owned(), &expected, other, right_type);
            HedgeDelay::Auto
        }
    };
    let min_delay_ms = c.int(&o, "minDelayMs");
    let max_delay_ms = c.int(&o, "maxDelayMs");
    if max_delay_ms < min_delay_ms {
        c.fail(
            "hedge.maxDelayMs".to_owned(),
            &int_range("hedge.minDelayMs", min_delay_ms, "", MAX_MS),
            &Value::Number(f64::from(max_delay_ms)),
            true,
        );
    }
    HedgePolicy {
        delay,
        max_hedges: c.int(&o, "maxHedges"),
        min_delay_ms,
        max_delay_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::PolicyErrorKind;
    use crate::policy::test_support::*;
    use serde_json::json;

    #[test]
    fn hedge_is_off_by_default_and_checks_its_fields() {
        assert_eq!(parse(json!({})).map(|p| p.hedge), Ok(None));
        let on = parse(json!({"hedge": true})).map(|p| p.hedge);
        assert_eq!(
            on,
            Ok(Some(HedgePolicy {
                delay: HedgeDelay::Auto,
                max_hedges: 1,
                min_delay_ms: 10,
                max_delay_ms: 2000
            }))
        );
        let fixed = parse(json!({"hedge": {"delayMs": 50, "maxHedges": 3}})).map(|p| p.hedge);
        assert_eq!(
            fixed.map(|h| h.map(|h| (h.delay, h.max_hedges))),
            Ok(Some((HedgeDelay::Fixed(50), 3)))
        );
        for (bad, kind, words) in [
            (
                json!({"delayMs": "soon"}),
                PolicyErrorKind::Range,
                "hedge.delayMs must be an integer from 0 to 2147483647, or \"auto\" (got \"soon\")",
            ),
            (
                json!({"delayMs": 1.5}),
                PolicyErrorKind::Range,
                "hedge.delayMs",
            ),
            (
                json!({"delayMs": true}),
                PolicyErrorKind::Type,
                "hedge.delayMs",
            ),
            (
                json!({"maxHedges": 4}),
                PolicyErrorKind::Range,
                "hedge.maxHedges must be an integer from 1 to 3 (got 4)",
            ),
            (
                json!({"minDelayMs": 500, "maxDelayMs": 100}),
                PolicyErrorKind::Range,
                "hedge.maxDelayMs must be an integer from hedge.minDelayMs (500) to 2147483647 (got 100)",
            ),
        ] {
            let e = err(json!({ "hedge": bad }));
            assert_eq!(e.kind, kind, "{bad}");
            assert!(e.message.contains(words), "{}", e.message);
        }
    }
}
