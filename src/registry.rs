//! The registry: per-origin state (breaker, budget, bulkhead, counters), bounded in size.
//!
//! A `BTreeMap` keyed by normalised origin (no hashing, so no random seed is needed on
//! wasm). Each access stamps the entry; when a new origin would exceed `maxOrigins`, the
//! least recently used entry is found by a linear scan and dropped. The scan is O(n) but
//! runs only when a new origin arrives at a full registry (n ≤ `maxOrigins`, 1000 by
//! default); every other access is O(log n).

use crate::breaker::{Breaker, BreakerState};
use crate::budget::RetryBudget;
use crate::bulkhead::Bulkhead;
use std::collections::BTreeMap;

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
    /// Attempts that timed out (also counted in `failures`).
    pub timeouts: u64,
    /// Attempts on the wire now.
    pub in_flight: u32,
}

/// Everything kept for one origin.
#[derive(Debug, Default)]
pub struct OriginState {
    /// Its circuit breaker.
    pub breaker: Breaker,
    /// Its retry budget.
    pub budget: RetryBudget,
    /// Its bulkhead (shared with the permits out).
    pub bulkhead: Bulkhead,
    /// Its counters.
    pub stats: OriginStats,
}

/// Identifies one origin's entry; a new entry for the same origin (after eviction) gets
/// a new id, so late updates meant for the old one are dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryId(u64);

/// One origin's state as seen at a moment.
#[derive(Clone, Debug, PartialEq)]
pub struct OriginSnapshot {
    /// Normalised origin.
    pub origin: String,
    /// Its counters.
    pub stats: OriginStats,
    /// Its breaker's state.
    pub breaker: BreakerState,
    /// Tokens left in its retry budget.
    pub budget_tokens: u32,
    /// Calls holding or granted a bulkhead slot.
    pub bulkhead_active: u32,
    /// Calls waiting for a bulkhead slot.
    pub bulkhead_queued: usize,
}

#[derive(Debug)]
struct Entry {
    state: OriginState,
    id: u64,
    last_used: u64,
}

/// Per-origin state for every origin seen, up to a bound.
#[derive(Debug)]
pub struct Registry {
    origins: BTreeMap<String, Entry>,
    max_origins: usize,
    /// Stamps accesses (for LRU) and numbers entries.
    clock: u64,
}

impl Registry {
    /// An empty registry keeping at most `max_origins` origins (at least 1).
    pub fn new(max_origins: u32) -> Self {
        Registry {
            origins: BTreeMap::new(),
            max_origins: max_origins.max(1) as usize,
            clock: 0,
        }
    }

    /// Origins kept now.
    pub fn len(&self) -> usize {
        self.origins.len()
    }

    /// Whether no origin is kept.
    pub fn is_empty(&self) -> bool {
        self.origins.is_empty()
    }

    /// Runs `f` on the state of `origin` (created if new, evicting the least recently used
    /// origin if full), marked as just used.
    pub fn with<R>(&mut self, origin: &str, f: impl FnOnce(EntryId, &mut OriginState) -> R) -> R {
        self.clock += 1;
        let now = self.clock;
        let entry = match self.origins.get_mut(origin) {
            Some(entry) => entry,
            None => self.insert(origin, now),
        };
        entry.last_used = now;
        f(EntryId(entry.id), &mut entry.state)
    }

    /// The state of `origin` if its entry is still the one `id` names.
    pub fn get_mut(&mut self, origin: &str, id: EntryId) -> Option<&mut OriginState> {
        self.origins
            .get_mut(origin)
            .filter(|e| e.id == id.0)
            .map(|e| &mut e.state)
    }

    /// The breaker state of `origin` (closed for an origin not kept), read
    /// without marking it used.
    pub fn breaker_state(&self, origin: &str, now_ms: f64) -> BreakerState {
        self.origins
            .get(origin)
            .map_or(BreakerState::Closed, |e| e.state.breaker.state(now_ms))
    }

    /// Resets `origin` (or every origin): breaker closed, budget full, counters zeroed.
    /// Calls in flight keep their bulkhead slots and stay counted in `in_flight`.
    pub fn reset(&mut self, origin: Option<&str>) {
        let reset = |entry: &mut Entry| {
            let state = &mut entry.state;
            state.breaker.reset();
            state.budget = RetryBudget::new();
            state.stats = OriginStats {
                in_flight: state.stats.in_flight,
                ..OriginStats::default()
            };
        };
        match origin {
            Some(origin) => self.origins.get_mut(origin).into_iter().for_each(reset),
            None => self.origins.values_mut().for_each(reset),
        }
    }

    /// A snapshot of every origin, in origin order. `now_ms` decides open vs half-open;
    /// `budget_capacity` is the capacity the tokens are counted against.
    pub fn stats(&self, now_ms: f64, budget_capacity: u32) -> Vec<OriginSnapshot> {
        self.origins
            .iter()
            .map(|(origin, e)| OriginSnapshot {
                origin: origin.clone(),
                stats: e.state.stats,
                breaker: e.state.breaker.state(now_ms),
                budget_tokens: e.state.budget.tokens(budget_capacity),
                bulkhead_active: e.state.bulkhead.active(),
                bulkhead_queued: e.state.bulkhead.queued(),
            })
            .collect()
    }

    /// A fresh entry for `origin`, after making room for it.
    fn insert(&mut self, origin: &str, now: u64) -> &mut Entry {
        while self.origins.len() >= self.max_origins && self.evict_one() {}
        self.origins.entry(origin.to_owned()).or_insert(Entry {
            state: OriginState::default(),
            id: now,
            last_used: now,
        })
    }

    /// Drops the least recently used origin; false if there was none.
    fn evict_one(&mut self) -> bool {
        let oldest = self
            .origins
            .iter()
            .min_by_key(|(_, e)| e.last_used)
            .map(|(origin, _)| origin.clone());
        match oldest {
            Some(origin) => self.origins.remove(&origin).is_some(),
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::BreakerPolicy;
    use proptest::prelude::*;

    fn touch(r: &mut Registry, origin: &str) {
        r.with(origin, |_, _| ());
    }

    fn origins(r: &Registry) -> Vec<String> {
        r.stats(0.0, 1).into_iter().map(|s| s.origin).collect()
    }

    #[test]
    fn keeps_state_per_origin() {
        let mut r = Registry::new(10);
        r.with("https://a.test", |_, s| s.stats.attempts = 3);
        assert_eq!(r.with("https://a.test", |_, s| s.stats.attempts), 3);
        assert_eq!(r.with("https://b.test", |_, s| s.stats.attempts), 0);
        assert_eq!(r.len(), 2);
    }

    #[test]
    fn evicts_the_least_recently_used_at_the_bound() {
        let mut r = Registry::new(2);
        touch(&mut r, "a");
        touch(&mut r, "b");
        touch(&mut r, "a"); // b is now the least recently used
        touch(&mut r, "c");
        assert_eq!(origins(&r), ["a", "c"]);
    }

    #[test]
    fn ids_tell_an_evicted_entry_from_its_successor() {
        let mut r = Registry::new(1);
        let old = r.with("a", |id, _| id);
        touch(&mut r, "b");
        let new = r.with("a", |id, _| id);
        assert_ne!(old, new);
        assert!(r.get_mut("a", old).is_none());
        assert!(r.get_mut("a", new).is_some());
    }

    #[test]
    fn reset_one_or_all() {
        let mut r = Registry::new(10);
        let p = BreakerPolicy {
            failure_threshold: 1,
            ..BreakerPolicy::default()
        };
        for origin in ["a", "b"] {
            r.with(origin, |_, s| {
                s.stats = OriginStats {
                    attempts: 4,
                    in_flight: 1,
                    ..OriginStats::default()
                };
                assert!(s.budget.try_withdraw(5, 500));
                let permit = s.breaker.try_acquire(0.0, &p).expect("closed");
                let _ = s.breaker.record(permit, Some(true), 0.0, &p);
            });
        }
        r.reset(Some("a"));
        r.reset(Some("unknown"));
        let snap = r.stats(0.0, 500);
        assert_eq!(
            snap[0].stats,
            OriginStats {
                in_flight: 1,
                ..OriginStats::default()
            }
        );
        assert_eq!(
            (snap[0].breaker, snap[0].budget_tokens),
            (BreakerState::Closed, 500)
        );
        assert_eq!(
            (
                snap[1].stats.attempts,
                snap[1].breaker,
                snap[1].budget_tokens
            ),
            (4, BreakerState::Open, 495)
        );
        r.reset(None);
        let snap = r.stats(0.0, 500);
        assert_eq!(
            (
                snap[1].stats.attempts,
                snap[1].breaker,
                snap[1].budget_tokens
            ),
            (0, BreakerState::Closed, 500)
        );
    }

    #[test]
    fn snapshot_reports_breaker_state_lazily() {
        let mut r = Registry::new(10);
        let p = BreakerPolicy {
            failure_threshold: 1,
            cooldown_ms: 100,
            ..BreakerPolicy::default()
        };
        r.with("a", |_, s| {
            let permit = s.breaker.try_acquire(0.0, &p).expect("closed");
            let _ = s.breaker.record(permit, Some(true), 0.0, &p);
        });
        assert_eq!(r.stats(50.0, 1)[0].breaker, BreakerState::Open);
        assert_eq!(r.stats(100.0, 1)[0].breaker, BreakerState::HalfOpen);
    }

    #[test]
    fn a_zero_bound_still_keeps_one() {
        let mut r = Registry::new(0);
        touch(&mut r, "a");
        touch(&mut r, "b");
        assert_eq!(origins(&r), ["b"]);
    }

    proptest! {
        #[test]
        fn never_over_its_bound(max in 1u32..8, touches in prop::collection::vec(0u8..20, 0..200)) {
            let mut r = Registry::new(max);
            let mut recent: Vec<u8> = Vec::new();
            for t in touches {
                touch(&mut r, &t.to_string());
                recent.retain(|x| *x != t);
                recent.push(t);
                prop_assert!(r.len() <= max as usize);
                // The most recently used origins are the ones kept.
                let start = recent.len().saturating_sub(max as usize);
                let mut expected: Vec<String> = recent.iter().skip(start).map(u8::to_string).collect();
                expected.sort();
                prop_assert_eq!(origins(&r), expected);
            }
        }
    }
}
