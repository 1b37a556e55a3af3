//! `stale`: serving the last good answer when the origin fails: how stale it may be, how much
//! is kept, and whether the store is private (see [`crate::stale`]): the policy's section, its
//! schema rows, its check and its row in the build's table of capabilities.
//!
//! `stale: true | false | { maxStaleMs, capMs, maxBodyBytes, maxEntries, maxBytes, private, store }`.
//! `maxEntries`, `maxBytes`, `private` and `store` describe a client's store: client only.

use crate::policy::field::{Field, Kind, MAX_MS, Scope, bounded, field, int};
use crate::policy::messages::int_range;
use crate::policy::reader::{Check, Object, Rows};
use crate::policy::value::{Map, Value};

/// The `stale` defaults, each written once ([`crate::policy::defaults`] holds them all).
pub mod defaults {
    /// No answer is kept unless the policy sets `stale`.
    pub const STALE_ENABLED: bool = false;
    /// How far past its freshness an answer without `stale-if-error` is served, in ms: five
    /// minutes (JS `stale.maxStaleMs`).
    pub const STALE_MAX_STALE_MS: u32 = 300_000;
    /// The most any window may be, its own `stale-if-error` included, in ms: a day (JS
    /// `stale.capMs`).
    pub const STALE_CAP_MS: u32 = 86_400_000;
    /// The largest body kept, in bytes: 1 MiB (JS `stale.maxBodyBytes`).
    pub const STALE_MAX_BODY_BYTES: u32 = 1_048_576;
    /// Answers the in-memory store keeps at most (JS `stale.maxEntries`).
    pub const STALE_MAX_ENTRIES: u32 = 500;
    /// Bytes of bodies the in-memory store keeps at most: 16 MiB (JS `stale.maxBytes`).
    pub const STALE_MAX_BYTES: u32 = 16_777_216;
    /// The store is taken to be shared where the runtime's is (JS `stale.private`).
    pub const STALE_PRIVATE: bool = false;
}

/// The capability's row in the build's table ([`crate::policy::CAPABILITIES`]): its option,
/// what it does, and that this build has it.
pub const CAPABILITY: (&str, &str, bool) = ("stale", "stale answers", true);

/// The largest `stale.maxBodyBytes`: 64 MiB, as `outbox.maxBodyBytes`.
pub const MAX_BODY_BYTES: u32 = 67_108_864;
/// The largest `stale.maxBytes`: 1 GiB.
pub const MAX_BYTES: u32 = 1_073_741_824;

/// Stale-if-error settings (see [`crate::stale`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StalePolicy {
    /// How far past its freshness lifetime an answer without its own `stale-if-error` is
    /// served, in ms (0..=`cap_ms`).
    pub max_stale_ms: u32,
    /// The most any window may be, in ms.
    pub cap_ms: u32,
    /// The largest body kept, in bytes (0..=`max_bytes`).
    pub max_body_bytes: u32,
    /// Answers the in-memory store keeps at most (1..=100000).
    pub max_entries: u32,
    /// Bytes the in-memory store keeps at most.
    pub max_bytes: u32,
    /// `true`: the store serves one user only, so answers to requests with credentials and
    /// `private` answers are kept too. `false`: as the runtime's store is (a browser's is
    /// private; a Worker's cache and a server's memory are shared).
    pub private: bool,
}

impl Default for StalePolicy {
    fn default() -> Self {
        StalePolicy {
            max_stale_ms: defaults::STALE_MAX_STALE_MS,
            cap_ms: defaults::STALE_CAP_MS,
            max_body_bytes: defaults::STALE_MAX_BODY_BYTES,
            max_entries: defaults::STALE_MAX_ENTRIES,
            max_bytes: defaults::STALE_MAX_BYTES,
            private: defaults::STALE_PRIVATE,
        }
    }
}

impl StalePolicy {
    /// Whether a body of `bytes` may be kept (also for one counted as it streams).
    pub fn fits(&self, bytes: u64) -> bool {
        bytes <= u64::from(self.max_body_bytes)
    }

    /// Whether the store is shared, given whether the runtime's store is (`policy.private`
    /// says it is not).
    pub fn shared(&self, runtime_store_shared: bool) -> bool {
        runtime_store_shared && !self.private
    }
}

/// A row of a client's store: given to a client only.
const fn client(path: &'static str, kind: Kind) -> Field {
    Field {
        path,
        kind,
        scope: Scope::Client,
        range_text: None,
    }
}

/// The `stale` rows of the schema ([`crate::policy::schema::FIELDS`]), the object first.
pub const FIELDS: &[Field] = &[
    field(
        "stale",
        Kind::Feature {
            on: defaults::STALE_ENABLED,
        },
    ),
    bounded(
        "stale.maxStaleMs",
        Kind::Int {
            min: 0,
            max: MAX_MS,
            default: defaults::STALE_MAX_STALE_MS,
        },
        "0..=capMs",
    ),
    int("stale.capMs", 0, MAX_MS, defaults::STALE_CAP_MS),
    bounded(
        "stale.maxBodyBytes",
        Kind::Int {
            min: 0,
            max: MAX_BODY_BYTES,
            default: defaults::STALE_MAX_BODY_BYTES,
        },
        "0..=maxBytes, ..=67108864",
    ),
    client(
        "stale.maxEntries",
        Kind::Int {
            min: 1,
            max: 100_000,
            default: defaults::STALE_MAX_ENTRIES,
        },
    ),
    client(
        "stale.maxBytes",
        Kind::Int {
            min: 1,
            max: MAX_BYTES,
            default: defaults::STALE_MAX_BYTES,
        },
    ),
    client(
        "stale.private",
        Kind::Bool {
            default: defaults::STALE_PRIVATE,
        },
    ),
    client("stale.store", Kind::Held),
];

/// Why a field of a client's store given to one call is a `TypeError` (they are client only).
pub const CLIENT_ONLY: &str = "stale.maxEntries, stale.maxBytes, stale.private and stale.store \
    describe a client's store: give them to new ResilientClient(...), not to one call";

/// The `stale` a policy starts with (its default: off).
pub(crate) fn initial() -> Option<StalePolicy> {
    defaults::STALE_ENABLED.then(StalePolicy::default)
}

/// The policy's `stale` from its fields `o`: `None` when off.
pub(crate) fn read<R: Rows>(c: &mut Check<R>, o: &Object) -> Option<StalePolicy> {
    c.feature(o, "stale").map(|m| stale_policy(c, m))
}

fn stale_policy<R: Rows>(c: &mut Check<R>, map: &Map) -> StalePolicy {
    let o = c.object(map, "stale");
    let cap_ms = c.int(&o, "capMs");
    let max_bytes = c.int(&o, "maxBytes");
    // A bound another field sets: a default above it follows it, a value given above it is
    // an error naming that field.
    let under = |c: &mut Check<R>, key: &str, bound: &str, top: u32| {
        let n = c.int(&o, key);
        if o.get(key).is_none() {
            return n.min(top);
        }
        if n > top {
            c.fail(
                o.path(key),
                &int_range("", 0, bound, top),
                &Value::Number(f64::from(n)),
                true,
            );
        }
        n
    };
    let max_stale_ms = under(c, "maxStaleMs", "stale.capMs", cap_ms);
    let max_body_bytes = under(c, "maxBodyBytes", "stale.maxBytes", max_bytes);
    let private = match o.get("private") {
        None => defaults::STALE_PRIVATE,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            c.fail(o.path("private"), "true or false", other, false);
            defaults::STALE_PRIVATE
        }
    };
    StalePolicy {
        max_stale_ms,
        cap_ms,
        max_body_bytes,
        max_entries: c.int(&o, "maxEntries"),
        max_bytes,
        private,
    }
}
