//! Which capabilities this build holds (the Cargo features of `Cargo.toml`). The package
//! ships two builds: `resilient-fetch`, the lean one (the mission: timeouts, retries,
//! breaker, keys, budget, bulkhead, hooks, events), and `resilient-fetch/full`. An option
//! of a capability the build lacks is a `TypeError` naming the option and the entry that
//! has it: never ignored. `false` (or absent) asks for the capability off, which is what
//! the lean build does, so it is accepted.

use super::error::{PolicyError, PolicyErrorKind};
use super::value::{Map, Value};

/// Each opt-in capability: its top-level option, what it does, and whether this build has it.
pub const CAPABILITIES: [(&str, &str, bool); 10] = [
    crate::pacing::CAPABILITY,
    crate::throttle::CAPABILITY,
    crate::hedge::CAPABILITY,
    crate::coalesce::CAPABILITY,
    crate::share::CAPABILITY,
    ("outbox", "the outbox", crate::outbox::BUILT),
    crate::stale::CAPABILITY,
    crate::failover::CAPABILITY,
    crate::resume::CAPABILITY,
    crate::sse::CAPABILITY,
];

/// Whether this build has every capability (the full build): then nothing is looked for.
const FULL: bool = {
    let mut i = 0;
    let mut all = true;
    while i < CAPABILITIES.len() {
        all &= CAPABILITIES[i].2;
        i += 1;
    }
    all
};

/// The error for the first option in `map` of a capability this build lacks, if any.
pub(super) fn lacking(map: &Map) -> Option<PolicyError> {
    if FULL {
        return None;
    }
    lacking_in(map, &CAPABILITIES)
}

/// Whether `value` asks for a capability off: `false` or `null`, what the lean build does.
fn off(value: &Value) -> bool {
    matches!(value, Value::Null | Value::Bool(false))
}

/// Whether `key: value` asks a capability this build lacks to be off (`false` or `null`).
pub(super) fn asks_off(key: &str, value: &Value) -> bool {
    !FULL
        && off(value)
        && CAPABILITIES
            .iter()
            .any(|&(option, _, here)| !here && option == key)
}

/// [`lacking`] against a table of capabilities (tests pass one where all are missing).
fn lacking_in(map: &Map, capabilities: &[(&str, &str, bool)]) -> Option<PolicyError> {
    capabilities
        .iter()
        .filter(|(_, _, here)| !here)
        .find_map(|&(option, what, _)| {
            let (_, value) = map.iter().find(|(key, _)| key == option)?;
            if off(value) {
                return None;
            }
            let mut message = String::from(option);
            message.push_str(
                " needs \"resilient-fetch/full\": \"resilient-fetch\" is the lean build, without ",
            );
            message.push_str(what);
            Some(PolicyError {
                path: option.to_owned(),
                message,
                kind: PolicyErrorKind::Type,
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lean() -> Vec<(&'static str, &'static str, bool)> {
        CAPABILITIES
            .iter()
            .map(|&(o, w, _)| (o, w, false))
            .collect()
    }

    fn map(entries: &[(&str, Value)]) -> Vec<(String, Value)> {
        entries
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect()
    }

    #[test]
    fn a_lacking_capability_s_option_names_itself_and_the_full_entry() {
        let e = lacking_in(&map(&[("hedge", Value::Bool(true))]), &lean()).expect("refused");
        assert_eq!(e.kind, PolicyErrorKind::Type);
        assert_eq!(e.path, "hedge");
        assert_eq!(
            e.message,
            "hedge needs \"resilient-fetch/full\": \"resilient-fetch\" is the lean build, without hedged reads"
        );
        let given = map(&[
            ("timeoutMs", Value::Number(5.0)),
            ("outbox", Value::Map(vec![])),
        ]);
        assert_eq!(
            lacking_in(&given, &lean()).map(|e| e.path),
            Some("outbox".into())
        );
    }

    #[test]
    fn false_or_null_asks_for_what_the_lean_build_does() {
        let given = map(&[("rateLimit", Value::Bool(false)), ("share", Value::Null)]);
        assert_eq!(lacking_in(&given, &lean()), None);
        assert_eq!(
            lacking_in(&map(&[("throttle", Value::Bool(true))]), &CAPABILITIES).is_some(),
            !crate::throttle::CAPABILITY.2
        );
    }

    #[test]
    fn the_full_build_has_every_capability() {
        assert_eq!(FULL, cfg!(feature = "full"));
        assert_eq!(CAPABILITIES.iter().all(|&(_, _, here)| here), FULL);
    }
}
