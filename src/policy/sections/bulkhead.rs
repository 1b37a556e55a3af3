//! `bulkhead`: how many calls an origin has in flight and waiting at most.

use crate::policy::reader::{Check, Rows};
use crate::policy::value::Map;

/// The `bulkhead` defaults, each written once ([`crate::policy::defaults`] holds them all).
pub mod defaults {
    /// The bulkhead is off unless the policy sets `bulkhead`.
    pub const BULKHEAD_ENABLED: bool = false;
    /// Calls in flight per origin (JS `bulkhead.maxConcurrent`).
    pub const MAX_CONCURRENT: u32 = 10;
    /// Calls waiting for a slot per origin (JS `bulkhead.maxQueue`).
    pub const MAX_QUEUE: u32 = 0;
}

/// Bulkhead settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BulkheadPolicy {
    /// Calls in flight per origin.
    pub max_concurrent: u32,
    /// Calls waiting for a slot per origin; more are rejected at once.
    pub max_queue: u32,
}

impl Default for BulkheadPolicy {
    fn default() -> Self {
        BulkheadPolicy {
            max_concurrent: defaults::MAX_CONCURRENT,
            max_queue: defaults::MAX_QUEUE,
        }
    }
}

pub(in crate::policy) fn bulkhead_policy<R: Rows>(c: &mut Check<R>, map: &Map) -> BulkheadPolicy {
    let o = c.object(map, "bulkhead");
    BulkheadPolicy {
        max_concurrent: c.int(&o, "maxConcurrent"),
        max_queue: c.int(&o, "maxQueue"),
    }
}
