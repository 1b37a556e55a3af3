//! The in-memory store's rules (Node, and any runtime without the Cache API): answers by key,
//! the least recently used dropped first once it holds more than `stale.maxEntries` answers
//! or `stale.maxBytes` bytes.
//!
//! Plain data: what is kept (`V`) is the shell's; the store says what it holds and which keys
//! it dropped, so that the shell can drop their values too.

use std::collections::{BTreeMap, HashMap};

/// One answer held: its value, its size, and when it was last used.
#[derive(Debug)]
struct Slot<V> {
    value: V,
    bytes: u64,
    used: u64,
}

/// A store bounded by entries and bytes, least recently used out first.
#[derive(Debug)]
pub struct Lru<V> {
    slots: HashMap<String, Slot<V>>,
    /// Keys by last use, oldest first.
    order: BTreeMap<u64, String>,
    /// The next use's number (uses only grow).
    clock: u64,
    bytes: u64,
    max_entries: usize,
    max_bytes: u64,
}

/// What a [`Lru::put`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Put {
    /// Kept; these keys were dropped to make room (oldest first).
    Kept(Vec<String>),
    /// Not kept: larger than the whole store may hold (nothing dropped; an older answer under
    /// the key is dropped, since it is no longer the last good one).
    TooLarge,
}

impl<V> Lru<V> {
    /// An empty store of at most `max_entries` answers (at least 1) and `max_bytes` bytes.
    pub fn new(max_entries: u32, max_bytes: u64) -> Self {
        Lru {
            slots: HashMap::new(),
            order: BTreeMap::new(),
            clock: 0,
            bytes: 0,
            max_entries: (max_entries as usize).max(1),
            max_bytes,
        }
    }

    /// Answers held.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The answer under `key`, now the most recently used.
    pub fn get(&mut self, key: &str) -> Option<&V> {
        let now = self.tick();
        let slot = self.slots.get_mut(key)?;
        self.order.remove(&slot.used);
        slot.used = now;
        self.order.insert(now, key.to_owned());
        Some(&slot.value)
    }

    /// The answer under `key`, as it is (its use not counted).
    pub fn peek(&self, key: &str) -> Option<&V> {
        self.slots.get(key).map(|s| &s.value)
    }

    /// Keeps `value` of `bytes` under `key` (replacing what was there), then drops the least
    /// recently used others until both bounds hold.
    pub fn put(&mut self, key: &str, value: V, bytes: u64) -> Put {
        self.delete(key);
        if bytes > self.max_bytes {
            return Put::TooLarge;
        }
        let now = self.tick();
        self.slots.insert(
            key.to_owned(),
            Slot {
                value,
                bytes,
                used: now,
            },
        );
        self.order.insert(now, key.to_owned());
        self.bytes += bytes;
        let mut dropped = Vec::new();
        while self.slots.len() > self.max_entries || self.bytes > self.max_bytes {
            // The newest is `key` itself and it fits alone: the oldest is another.
            let Some((_, oldest)) = self.order.pop_first() else {
                break;
            };
            if let Some(slot) = self.slots.remove(&oldest) {
                self.bytes -= slot.bytes;
            }
            dropped.push(oldest);
        }
        Put::Kept(dropped)
    }

    /// Drops the answer under `key`; whether there was one.
    pub fn delete(&mut self, key: &str) -> bool {
        match self.slots.remove(key) {
            Some(slot) => {
                self.order.remove(&slot.used);
                self.bytes -= slot.bytes;
                true
            }
            None => false,
        }
    }

    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }
}
