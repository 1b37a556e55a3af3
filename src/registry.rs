//! The registry: per-origin state (breaker, budget, bulkhead, counters), bounded in size.
//!
//! A `Vec` of entries sorted by normalised origin, found by binary search (no hashing, so
//! no random seed is needed on wasm; a `Vec` is also far less code in the wasm than a
//! `BTreeMap`). Each access stamps the entry; when a new origin would exceed `maxOrigins`, one
//! entry is found by a linear scan and dropped: the least recently used *idle* one (no
//! attempt in flight, no call waiting to retry, no bulkhead slot held or waited for), a
//! closed breaker before an open one. Dropping a busy entry would hand its origin a fresh
//! bulkhead while calls still hold slots of the old one, or forget the failures a call
//! waiting to retry has just seen; dropping an open breaker forgets that the origin is
//! down. When every entry is busy none is dropped: the registry holds more than
//! `maxOrigins` until entries fall idle, and the next new origin then brings it back to the
//! bound. The scan is O(n) but runs only when a new origin arrives at a full
//! registry (n ≤ `maxOrigins`, 1000 by default); every other lookup is O(log n) (adding or
//! dropping an origin shifts the entries after it, a memmove of at most n entries).

use crate::breaker::{BreakerState, OpenReason};
pub use crate::origin::{OriginState, OriginStats};
use crate::share::Notes;
use crate::share::Share;
use std::cell::Cell;

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
    /// Why its breaker opened, while open or half-open.
    pub opened_by: Option<OpenReason>,
    /// Tokens left in its retry budget.
    pub budget_tokens: u32,
    /// Calls holding or granted a bulkhead slot.
    pub bulkhead_active: u32,
    /// Calls waiting for a bulkhead slot.
    pub bulkhead_queued: usize,
    /// How long a call must wait before sending to it now, in ms (0: none).
    pub wait_ms: f64,
    /// Requests left in its rate-limit window, when its headers said.
    pub quota_remaining: Option<u32>,
}

#[derive(Debug)]
struct Entry {
    origin: String,
    state: OriginState,
    id: u64,
    last_used: u64,
}

/// Per-origin state for every origin seen, up to a bound.
#[derive(Debug)]
pub struct Registry {
    /// Sorted by origin, origins unique.
    origins: Vec<Entry>,
    max_origins: usize,
    /// Stamps accesses (for LRU) and numbers entries.
    clock: u64,
    /// Where the entry last found is: asked first, since a call's steps ask for one origin
    /// again and again (its admission, its facts, its end).
    last: Cell<usize>,
    /// Binary searches made (each a few string comparisons): what [`Registry::searches`] reads.
    searches: Cell<u64>,
    /// Where notes for peers go, when the client shares (`share`; never without it).
    share: Option<Share>,
}

impl Registry {
    /// An empty registry keeping at most `max_origins` origins (at least 1).
    pub fn new(max_origins: u32) -> Self {
        Registry {
            origins: Vec::new(),
            max_origins: max_origins.max(1) as usize,
            clock: 0,
            last: Cell::new(0),
            searches: Cell::new(0),
            share: None,
        }
    }

    /// Shares this registry's origin health with peers through `share` (see [`crate::share`]).
    pub fn share_with(&mut self, share: Share) {
        self.share = Some(share);
    }

    /// This client's rank, when it shares.
    #[inline(always)]
    pub fn rank(&self) -> Option<u32> {
        self.share.as_ref().map(Share::rank)
    }

    /// Tells the peers `notes` about `origin` (nothing when the client does not share).
    pub fn tell(&mut self, origin: &str, notes: Notes) {
        if let Some(share) = &mut self.share {
            share.tell(origin, notes);
        }
    }

    /// Tells the peers, of every origin kept, what `f` says of it.
    pub fn tell_each(&mut self, f: impl Fn(&OriginState) -> Notes) {
        if let Some(share) = &mut self.share {
            for e in &self.origins {
                share.tell(&e.origin, f(&e.state));
            }
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
        let entry = self.touch(origin);
        f(EntryId(entry.id), &mut entry.state)
    }

    /// The entry of `origin` (created if new), marked as just used. Not generic, not
    /// inlined: each caller of [`Registry::with`] shares it.
    #[inline(never)]
    fn touch(&mut self, origin: &str) -> &mut Entry {
        self.clock += 1;
        let now = self.clock;
        let at = match self.find(origin) {
            Ok(at) => at,
            Err(at) => self.insert(origin, now, at),
        };
        let entry = &mut self.origins[at];
        entry.last_used = now;
        entry
    }

    /// The state of `origin` if its entry is still the one `id` names.
    pub fn get_mut(&mut self, origin: &str, id: EntryId) -> Option<&mut OriginState> {
        let at = self.find(origin).ok()?;
        let entry = &mut self.origins[at];
        (entry.id == id.0).then_some(&mut entry.state)
    }

    /// The state of `origin`, if kept, read without marking it used.
    pub fn peek(&self, origin: &str) -> Option<&OriginState> {
        self.find(origin).ok().map(|at| &self.origins[at].state)
    }

    /// The breaker state of `origin` at `now_ms` (closed for an origin not kept), read
    /// without marking it used.
    pub fn breaker_state(&self, origin: &str, now_ms: f64) -> BreakerState {
        match self.find(origin) {
            Ok(at) => self.origins[at].state.breaker.state(now_ms),
            Err(_) => BreakerState::Closed,
        }
    }

    /// Resets `origin` (or every origin): breaker closed, budget full, counters zeroed.
    /// Calls in flight keep their bulkhead slots and stay counted in `in_flight`.
    pub fn reset(&mut self, origin: Option<&str>) {
        let reset = |entry: &mut Entry| entry.state.reset();
        match origin {
            Some(origin) => {
                if let Ok(at) = self.find(origin) {
                    reset(&mut self.origins[at]);
                }
            }
            None => self.origins.iter_mut().for_each(reset),
        }
    }

    /// A snapshot of every origin, in origin order. `now_ms` decides open vs half-open;
    /// each origin's tokens are counted against the capacity last used on it
    /// ([`crate::budget::RetryBudget::tokens_now`]).
    pub fn stats(&self, now_ms: f64) -> Vec<OriginSnapshot> {
        self.origins
            .iter()
            .map(|e| OriginSnapshot {
                origin: e.origin.clone(),
                stats: e.state.stats(),
                breaker: e.state.breaker.state(now_ms),
                opened_by: e.state.breaker.opened_by(),
                budget_tokens: e.state.budget.tokens_now(),
                bulkhead_active: e.state.bulkhead.active(),
                bulkhead_queued: e.state.bulkhead.queued(),
                wait_ms: e.state.pacer.wait(now_ms).map_or(0.0, |(ms, _)| ms),
                quota_remaining: e.state.pacer.remaining(now_ms),
            })
            .collect()
    }

    /// Where `origin`'s entry is (`Ok`), or where it would go (`Err`): the entry last found
    /// first, else a binary search.
    fn find(&self, origin: &str) -> Result<usize, usize> {
        let last = self.last.get();
        if self.origins.get(last).is_some_and(|e| e.origin == origin) {
            return Ok(last);
        }
        self.searches.set(self.searches.get() + 1);
        let found = self
            .origins
            .binary_search_by(|e| e.origin.as_str().cmp(origin));
        if let Ok(at) = found {
            self.last.set(at);
        }
        found
    }

    /// How many times an origin was looked for among the entries (not found where the last
    /// one was): a call's attempt to one origin costs one at most.
    pub fn searches(&self) -> u64 {
        self.searches.get()
    }

    /// A fresh entry for `origin` (not kept yet), after making room for it; returns its
    /// index. `at`: where it goes before any eviction.
    fn insert(&mut self, origin: &str, now: u64, mut at: usize) -> usize {
        let kept = self.origins.len();
        while self.origins.len() >= self.max_origins && self.evict_one() {}
        if self.origins.len() != kept {
            // Eviction shifted the entries: look for the place again.
            at = self.find(origin).unwrap_or_else(|at| at);
        }
        self.origins.insert(
            at,
            Entry {
                origin: origin.to_owned(),
                state: OriginState::default(),
                id: now,
                last_used: now,
            },
        );
        self.last.set(at);
        at
    }

    /// Drops one idle origin; false if none is idle. The least recently used idle entry
    /// with a closed breaker goes first, then the least recently used idle one.
    fn evict_one(&mut self) -> bool {
        let victim = self
            .origins
            .iter()
            .enumerate()
            .filter(|(_, e)| e.state.is_idle())
            .min_by_key(|(_, e)| (!e.state.breaker.is_closed(), e.last_used))
            .map(|(at, _)| at);
        match victim {
            Some(at) => {
                self.origins.remove(at);
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bulkhead::{Admission, BulkheadPermit};
    use crate::classify::Judgement;
    use crate::policy::{BreakerPolicy, BulkheadPolicy, TripRule};
    use proptest::prelude::*;

    fn touch(r: &mut Registry, origin: &str) {
        r.with(origin, |_, _| ());
    }

    fn origins(r: &Registry) -> Vec<String> {
        r.stats(0.0).into_iter().map(|s| s.origin).collect()
    }

    #[test]
    fn keeps_state_per_origin() {
        let mut r = Registry::new(10);
        r.with("https://a.test", |_, s| s.stats_mut().attempts = 3);
        assert_eq!(r.with("https://a.test", |_, s| s.stats().attempts), 3);
        assert_eq!(r.with("https://b.test", |_, s| s.stats().attempts), 0);
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
            trip: TripRule::Consecutive {
                failure_threshold: 1,
            },
            ..BreakerPolicy::default()
        };
        for origin in ["a", "b"] {
            r.with(origin, |_, s| {
                *s.stats_mut() = OriginStats {
                    attempts: 4,
                    in_flight: 1,
                    ..OriginStats::default()
                };
                assert!(s.budget.try_withdraw(5, 500));
                let permit = s.breaker.try_acquire(0.0, &p, &|| 0.5).expect("closed");
                let _ = s.breaker.record(permit, Judgement::Failure, false, 0.0, &p);
            });
        }
        r.reset(Some("a"));
        r.reset(Some("unknown"));
        let snap = r.stats(0.0);
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
        let snap = r.stats(0.0);
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
            trip: TripRule::Consecutive {
                failure_threshold: 1,
            },
            cooldown_ms: 100,
            ..BreakerPolicy::default()
        };
        r.with("a", |_, s| {
            let permit = s.breaker.try_acquire(0.0, &p, &|| 0.5).expect("closed");
            let _ = s.breaker.record(permit, Judgement::Failure, false, 0.0, &p);
        });
        assert_eq!(r.stats(50.0)[0].breaker, BreakerState::Open);
        assert_eq!(r.stats(100.0)[0].breaker, BreakerState::HalfOpen);
    }

    #[test]
    fn a_zero_bound_still_keeps_one() {
        let mut r = Registry::new(0);
        touch(&mut r, "a");
        touch(&mut r, "b");
        assert_eq!(origins(&r), ["b"]);
    }

    fn hold_slot(r: &mut Registry, origin: &str) -> BulkheadPermit {
        let policy = BulkheadPolicy {
            max_concurrent: 1,
            max_queue: 0,
        };
        match r.with(origin, |_, s| s.bulkhead.acquire(&policy)) {
            Admission::Admitted(permit) => permit,
            other => panic!("expected a free slot, got {other:?}"),
        }
    }

    fn trip(r: &mut Registry, origin: &str) {
        let p = BreakerPolicy {
            trip: TripRule::Consecutive {
                failure_threshold: 1,
            },
            ..BreakerPolicy::default()
        };
        r.with(origin, |_, s| {
            if let Ok(permit) = s.breaker.try_acquire(0.0, &p, &|| 0.5) {
                let _ = s.breaker.record(permit, Judgement::Failure, false, 0.0, &p);
            }
        });
    }

    #[test]
    fn an_attempt_in_flight_keeps_its_entry() {
        let mut r = Registry::new(2);
        r.with("a", |_, s| s.stats_mut().in_flight = 1);
        touch(&mut r, "b");
        touch(&mut r, "c");
        assert_eq!(origins(&r), ["a", "c"], "b was idle: it went, not a");
    }

    #[test]
    fn a_call_waiting_to_retry_keeps_its_entry() {
        let mut r = Registry::new(2);
        let id = r.with("a", |id, s| {
            s.waiting = 1;
            id
        });
        touch(&mut r, "b");
        touch(&mut r, "c");
        assert_eq!(origins(&r), ["a", "c"], "b was idle: it went, not a");
        // The wait ends (without marking a used).
        r.get_mut("a", id).expect("kept").waiting = 0;
        touch(&mut r, "d");
        assert_eq!(origins(&r), ["c", "d"], "a is idle again: plain LRU");
    }

    #[test]
    fn a_held_bulkhead_slot_keeps_its_entry() {
        let mut r = Registry::new(2);
        // A call between attempts: nothing in flight, but its slot is held.
        let held = hold_slot(&mut r, "a");
        touch(&mut r, "b");
        touch(&mut r, "c");
        assert_eq!(origins(&r), ["a", "c"], "b was idle: it went, not a");
        drop(held);
        touch(&mut r, "d");
        assert_eq!(origins(&r), ["c", "d"], "a is idle again: plain LRU");
    }

    #[test]
    fn closed_breakers_go_before_open_ones() {
        let mut r = Registry::new(2);
        trip(&mut r, "a");
        touch(&mut r, "b");
        touch(&mut r, "c");
        assert_eq!(origins(&r), ["a", "c"], "a is down: it is remembered");
        // Among open breakers, the least recently used goes.
        trip(&mut r, "c");
        touch(&mut r, "d");
        assert_eq!(origins(&r), ["c", "d"]);
    }

    #[test]
    fn an_idle_open_breaker_goes_before_a_busy_entry() {
        let mut r = Registry::new(2);
        let _held = hold_slot(&mut r, "a");
        trip(&mut r, "b");
        touch(&mut r, "c");
        assert_eq!(origins(&r), ["a", "c"]);
    }

    #[test]
    fn when_every_entry_is_busy_none_goes_and_the_bound_is_exceeded_until_one_is_idle() {
        let mut r = Registry::new(2);
        let a = hold_slot(&mut r, "a");
        let _b = hold_slot(&mut r, "b");
        touch(&mut r, "c");
        assert_eq!(
            origins(&r),
            ["a", "b", "c"],
            "a busy origin keeps its bulkhead"
        );
        drop(a);
        touch(&mut r, "d");
        assert_eq!(
            origins(&r),
            ["b", "d"],
            "back to the bound once entries are idle"
        );
    }

    #[test]
    fn tokens_are_counted_against_the_capacity_last_used() {
        let mut r = Registry::new(10);
        touch(&mut r, "fresh");
        r.with("small", |_, s| {
            assert!(s.budget.try_withdraw(5, 50));
        });
        let snap = r.stats(0.0);
        assert_eq!(
            snap[0].budget_tokens, 500,
            "a fresh origin: the default, full"
        );
        assert_eq!(snap[1].budget_tokens, 45, "45 of 50, not 495 of 500");
    }

    #[derive(Clone, Debug)]
    enum Op {
        Touch(u8),
        /// An attempt starts on the origin (`in_flight` + 1).
        Start(u8),
        /// An attempt on the origin ends, if one is in flight.
        End(u8),
        /// A call takes a bulkhead slot of the origin.
        Hold(u8),
        /// The n-th slot held is released.
        Release(usize),
        /// The origin's breaker opens.
        Trip(u8),
    }

    fn op() -> impl Strategy<Value = Op> {
        let origin = 0u8..8;
        prop_oneof![
            3 => origin.clone().prop_map(Op::Touch),
            1 => origin.clone().prop_map(Op::Start),
            1 => origin.clone().prop_map(Op::End),
            1 => origin.clone().prop_map(Op::Hold),
            1 => any::<usize>().prop_map(Op::Release),
            1 => origin.prop_map(Op::Trip),
        ]
    }

    proptest! {
        #[test]
        fn a_busy_entry_is_never_evicted_while_an_idle_one_exists(
            max in 1u32..5,
            ops in prop::collection::vec(op(), 0..200),
        ) {
            let mut r = Registry::new(max);
            // Origins from least to most recently used, as the test sees them.
            let mut recent: Vec<String> = Vec::new();
            let mut held: Vec<BulkheadPermit> = Vec::new();
            for op in ops {
                let target = match &op {
                    Op::Touch(o) | Op::Start(o) | Op::End(o) | Op::Hold(o) | Op::Trip(o) => {
                        Some(o.to_string())
                    }
                    Op::Release(_) => None,
                };
                let before = r.stats(0.0);
                // What should go if the target is new to a full registry: the least recently
                // used idle entry, closed breakers first; none if none is idle.
                let rank = |s: &OriginSnapshot| {
                    let busy = s.stats.in_flight > 0 || s.bulkhead_active > 0 || s.bulkhead_queued > 0;
                    let open = !busy && s.breaker != BreakerState::Closed;
                    let age = recent.iter().position(|o| *o == s.origin);
                    (busy, open, age)
                };
                let expected_victim = before
                    .iter()
                    .filter(|s| !rank(s).0)
                    .min_by_key(|s| rank(s))
                    .map(|s| s.origin.clone());
                let any_idle = before.iter().any(|s| !rank(s).0);
                match op {
                    Op::Touch(o) => touch(&mut r, &o.to_string()),
                    Op::Start(o) => r.with(&o.to_string(), |_, s| s.stats_mut().in_flight += 1),
                    Op::End(o) => r.with(&o.to_string(), |_, s| {
                        s.stats_mut().in_flight = s.stats().in_flight.saturating_sub(1);
                    }),
                    Op::Hold(o) => {
                        let policy = BulkheadPolicy { max_concurrent: 100, max_queue: 0 };
                        if let Admission::Admitted(p) = r.with(&o.to_string(), |_, s| s.bulkhead.acquire(&policy)) {
                            held.push(p);
                        }
                    }
                    Op::Release(i) if !held.is_empty() => drop(held.swap_remove(i % held.len())),
                    Op::Release(_) => {}
                    Op::Trip(o) => trip(&mut r, &o.to_string()),
                }
                let after: Vec<String> = r.stats(0.0).into_iter().map(|s| s.origin).collect();
                let evicted: Vec<&OriginSnapshot> =
                    before.iter().filter(|s| !after.contains(&s.origin)).collect();
                let Some(target) = target else {
                    prop_assert!(evicted.is_empty());
                    continue;
                };
                let was_new = !before.iter().any(|s| s.origin == target);
                if was_new {
                    // Back to the bound, unless every entry kept from before is busy.
                    let kept_busy = before
                        .iter()
                        .filter(|s| after.contains(&s.origin) && rank(s).0)
                        .count();
                    prop_assert!(r.len() <= (max as usize).max(kept_busy + 1));
                }
                if was_new && before.len() >= max as usize && any_idle {
                    prop_assert!(!evicted.is_empty());
                    prop_assert!(evicted.iter().all(|s| !rank(s).0), "a busy entry was evicted");
                    let first = expected_victim.as_ref();
                    prop_assert!(evicted.iter().any(|s| Some(&s.origin) == first), "{:?} kept", first);
                } else if was_new && before.len() >= max as usize {
                    prop_assert!(evicted.is_empty(), "every entry was busy: none may go");
                } else {
                    prop_assert!(evicted.is_empty());
                }
                recent.retain(|o| !evicted.iter().any(|s| s.origin == *o) && *o != target);
                recent.push(target);
            }
        }

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
