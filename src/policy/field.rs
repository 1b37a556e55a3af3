//! What a schema row says of a field: its kind (type, range, default) and its scope. The
//! words the table (`schema.rs`) is written in and the reader (`reader.rs`) reads; this
//! file imports nothing of ours.

/// The largest millisecond value accepted: the largest `setTimeout` delay.
pub const MAX_MS: u32 = 2_147_483_647;

/// What a field holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// A whole number in `min..=max`, `default` when absent.
    Int {
        /// Smallest accepted.
        min: u32,
        /// Largest accepted.
        max: u32,
        /// When absent.
        default: u32,
    },
    /// An `Int`, or `false` for "none".
    IntOrOff {
        /// Smallest accepted.
        min: u32,
        /// Largest accepted.
        max: u32,
        /// When absent.
        default: u32,
    },
    /// A whole number in `min..=max`, or absent: none (the field's section says what
    /// absent means).
    OptInt {
        /// Smallest accepted.
        min: u32,
        /// Largest accepted.
        max: u32,
    },
    /// `true` (on, defaults), `false` (off) or an object of the fields under this path.
    Feature {
        /// On when absent.
        on: bool,
    },
    /// One of these names.
    Choice(&'static [&'static str]),
    /// A number in (0, 1].
    Rate,
    /// A number in 1..=100, fractions allowed.
    Factor,
    /// A list of statuses in 400..=599.
    Statuses,
    /// `idempotencyKey`: `true`, `false` or a key string.
    Key,
    /// `idempotencyHeader`: a header name scripts may set.
    Header,
    /// A name of 1 to 64 characters (`share`: or `false`, none, the default, or an object
    /// of the fields under this path).
    Name,
    /// `hedge.delayMs`: a whole number of ms in `min..=max`, or `"auto"` (the default).
    DelayOrAuto {
        /// Smallest accepted.
        min: u32,
        /// Largest accepted.
        max: u32,
    },
    /// `true` or `false`, `default` when absent.
    Bool {
        /// When absent.
        default: bool,
    },
    /// A function: taken out of the policy in JS (js/policy-arg.js), never data.
    Function,
    /// An object the client holds as it is (`outbox.store`, `share.durableObject`): taken
    /// out in JS too.
    Held,
    /// `failover`: an object of at most `keys` origins, each to a list of 1 to `items` other
    /// origins, or `false` (none, the default). Its keys are the caller's: no rows under it.
    Origins {
        /// Origins listed at most.
        keys: u32,
        /// Alternates of one origin at most.
        items: u32,
    },
}

/// Where a field may be given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// To a client and to a call.
    Both,
    /// To a client only (it sizes the client's state).
    Client,
    /// Strings to a call only (a key string names one operation).
    StringPerCall,
}

/// One field of the policy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Field {
    /// The JS path, e.g. `retry.maxAttempts`.
    pub path: &'static str,
    /// What it holds.
    pub kind: Kind,
    /// Where it may be given.
    pub scope: Scope,
    /// The range as the TypeScript declarations state it, where another field bounds it
    /// (None: `min..=max` of the kind).
    pub range_text: Option<&'static str>,
}

/// The row of `fields` at `path`.
pub fn find<'f>(fields: &'f [Field], path: &str) -> Option<&'f Field> {
    fields.iter().find(|f| f.path == path)
}

/// The name of `field` within the object at `prefix` ("" for the policy itself), if it is
/// one of that object's own fields.
pub fn key_in<'f>(field: &'f Field, prefix: &str) -> Option<&'f str> {
    let rest = if prefix.is_empty() {
        field.path
    } else {
        field.path.strip_prefix(prefix)?.strip_prefix('.')?
    };
    (!rest.contains('.')).then_some(rest)
}

/// A row of `path` holding `kind`, given anywhere.
pub const fn field(path: &'static str, kind: Kind) -> Field {
    Field {
        path,
        kind,
        scope: Scope::Both,
        range_text: None,
    }
}

/// A row of an integer field in `min..=max`, `default` when absent, given anywhere.
pub const fn int(path: &'static str, min: u32, max: u32, default: u32) -> Field {
    field(path, Kind::Int { min, max, default })
}

/// A row whose range another field bounds, as the TypeScript declarations state it.
pub const fn bounded(path: &'static str, kind: Kind, range_text: &'static str) -> Field {
    Field {
        path,
        kind,
        scope: Scope::Both,
        range_text: Some(range_text),
    }
}

/// How many rows `sections` hold in all.
pub const fn rows(sections: &[&[Field]]) -> usize {
    let (mut n, mut i) = (0, 0);
    while i < sections.len() {
        n += sections[i].len();
        i += 1;
    }
    n
}

/// The rows of `sections` in one table, in order (`N`: [`rows`] of them), made at compile time:
/// each capability's rows are written in its folder, the schema lists the sections.
pub const fn joined<const N: usize>(sections: &[&[Field]]) -> [Field; N] {
    let mut table = [field("", Kind::Held); N];
    let (mut i, mut k) = (0, 0);
    while i < sections.len() {
        let mut j = 0;
        while j < sections[i].len() {
            table[k] = sections[i][j];
            j += 1;
            k += 1;
        }
        i += 1;
    }
    table
}
