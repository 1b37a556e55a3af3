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
    /// Binary searches made (each a few string comparisons): what [`Registry::searches`] reads
    /// (counted in builds with debug assertions, the tests').
    #[cfg(debug_assertions)]
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
            #[cfg(debug_assertions)]
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
        #[cfg(debug_assertions)]
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
    #[cfg(debug_assertions)]
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
mod tests;
