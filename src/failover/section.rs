//! `failover`: each primary origin's alternates, in the order they are tried (see
//! [`crate::failover`]): the policy's section, its schema row and its row in the build's table
//! of capabilities.
//!
//! `failover: { "<origin>": ["<alternate origin>", ...] }`. Keys and alternates are origins
//! (`scheme://host[:port]`, http or https, nothing after but one `/`); kept normalised, as the
//! platform serialises origins, so that they compare with the origin a call is keyed by. Its
//! keys are the caller's, so no schema row lists fields under it: its one row
//! ([`Kind::Origins`]) says how many of each it takes (the constants below, which the check
//! applies), and the check words its errors as every field's (`Check::fail`).

use super::route::Route;
use super::url::{NotOrigin, origin};
use crate::policy::field::{Field, Kind, field};
use crate::policy::messages::{push_quoted, push_u64};
use crate::policy::reader::{Check, Object, Rows};
use crate::policy::value::Value;

/// Primary origins listed at most.
pub const MAX_PRIMARIES: usize = 64;
/// Alternates of one primary at most.
pub const MAX_ALTERNATES: usize = 8;

/// The capability's row in the build's table ([`crate::policy::CAPABILITIES`]): its option,
/// what it does, and that this build has it.
pub const CAPABILITY: (&str, &str, bool) = ("failover", "failover origins", true);

/// The `failover` row of the schema ([`crate::policy::schema::FIELDS`]): given to a client, a
/// call, or both (a call's origins lie over the client's, primary by primary).
pub const FIELDS: &[Field] = &[field(
    "failover",
    Kind::Origins {
        keys: MAX_PRIMARIES as u32,
        items: MAX_ALTERNATES as u32,
    },
)];

/// One primary origin and its alternates, each normalised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alternates {
    /// The primary origin.
    pub primary: String,
    /// Its alternates, in the order they are tried (1 to [`MAX_ALTERNATES`], none its primary,
    /// none twice).
    pub alternates: Vec<String>,
}

/// Failover settings: the primaries listed, each once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FailoverPolicy {
    /// Each primary with its alternates, in the order given.
    pub origins: Vec<Alternates>,
}

impl FailoverPolicy {
    /// The alternates of `primary` (an origin as [`super::origin`] gives it); none if unlisted.
    pub fn alternates(&self, primary: &str) -> &[String] {
        self.origins
            .iter()
            .find(|a| a.primary == primary)
            .map_or(&[], |a| &a.alternates)
    }

    /// The route of a call to `primary`: its alternates, in order (none if unlisted).
    pub fn route<'a>(&'a self, primary: &'a str) -> Route<'a> {
        Route::new(primary, self.alternates(primary))
    }
}

/// The `failover` a policy starts with: none.
pub(crate) fn initial() -> Option<FailoverPolicy> {
    None
}

/// The policy's `failover` from its fields `o`: `None` when absent, `false` or `{}`. An error
/// names the first bad key or alternate (`failover["https://a.test"][1]`) and what it must be.
pub(crate) fn read<R: Rows>(c: &mut Check<R>, o: &Object) -> Option<FailoverPolicy> {
    let map = match o.get("failover")? {
        Value::Bool(false) => return None,
        Value::Map(map) => map,
        other => {
            let expected = "an object of origins, each to a list of alternate origins, or false";
            c.fail("failover".to_owned(), expected, other, false);
            return None;
        }
    };
    // The bounds of the schema's row (`FIELDS`).
    if map.len() > MAX_PRIMARIES {
        let expected = "an object of at most 64 origins";
        c.fail("failover".to_owned(), expected, &count(map.len()), true);
        return None;
    }
    let mut policy = FailoverPolicy::default();
    for (key, list) in map.iter() {
        let path = key_path(key);
        let primary = checked(c, &path, key)?;
        // Keys before it are in `policy.origins`, in order.
        if let Some(i) = policy.origins.iter().position(|a| a.primary == primary) {
            let expected = other_than(&key_path(&map[i].0));
            c.fail(path, &expected, &Value::String(key.clone()), true);
            return None;
        }
        let expected = "a list of 1 to 8 origins";
        let list = match list {
            Value::List(list) if (1..=MAX_ALTERNATES).contains(&list.len()) => list,
            Value::List(list) => {
                c.fail(path, expected, &count(list.len()), true);
                return None;
            }
            other => {
                c.fail(path, expected, other, false);
                return None;
            }
        };
        let mut alternates: Vec<String> = Vec::with_capacity(list.len());
        for (j, item) in list.iter().enumerate() {
            let item_path = index_path(&path, j);
            let Value::String(s) = item else {
                c.fail(item_path, "an origin (scheme://host[:port])", item, false);
                return None;
            };
            let alternate = checked(c, &item_path, s)?;
            let same = if alternate == primary {
                Some("its primary".to_owned())
            } else {
                (alternates.iter().position(|a| *a == alternate)).map(|k| index_path(&path, k))
            };
            if let Some(same) = same {
                c.fail(item_path, &other_than(&same), item, true);
                return None;
            }
            alternates.push(alternate);
        }
        policy.origins.push(Alternates {
            primary,
            alternates,
        });
    }
    (!policy.origins.is_empty()).then_some(policy)
}

/// The origin `given` at `path` names, normalised; else the error says what it lacks.
fn checked<R: Rows>(c: &mut Check<R>, path: &str, given: &str) -> Option<String> {
    match origin(given) {
        Ok(origin) => Some(origin),
        Err(why) => {
            let value = Value::String(given.to_owned());
            c.fail(path.to_owned(), why.expected(), &value, true);
            None
        }
    }
}

/// What a count is shown as: "(got 9)".
fn count(n: usize) -> Value {
    Value::Number(n as f64)
}

/// "an origin other than `what`".
fn other_than(what: &str) -> String {
    let mut expected = "an origin other than ".to_owned();
    expected.push_str(what);
    expected
}

/// `failover["<key>"]`.
fn key_path(key: &str) -> String {
    let mut path = "failover[".to_owned();
    push_quoted(&mut path, key, true);
    path.push(']');
    path
}

/// `<path>[i]`.
fn index_path(path: &str, i: usize) -> String {
    let mut p = path.to_owned();
    p.push('[');
    push_u64(&mut p, i as u64);
    p.push(']');
    p
}

impl NotOrigin {
    /// What the field must be instead, for its error's "must be …".
    pub fn expected(self) -> &'static str {
        match self {
            NotOrigin::Scheme => "an origin of scheme http or https (scheme://host[:port])",
            NotOrigin::UserInfo => {
                "an origin without a user name or password (scheme://host[:port])"
            }
            NotOrigin::Path => {
                "an origin without a path, query or fragment (scheme://host[:port], and at most \"/\" after it)"
            }
            NotOrigin::Host => {
                "an origin whose host is ASCII letters, digits, '-', '.' and '_' (punycode for others), or [IPv6] (scheme://host[:port])"
            }
            NotOrigin::Port => "an origin whose port is 1 to 65535 (scheme://host[:port])",
        }
    }
}
