//! `failover`: each primary origin's alternates, in the order they are tried (see
//! [`crate::failover`]).
//!
//! `failover: { "<origin>": ["<alternate origin>", ...] }`. Keys and alternates are origins
//! (`scheme://host[:port]`, http or https, nothing after but one `/`); kept normalised, as the
//! platform serialises origins, so that they compare with the origin a call is keyed by. Its
//! keys are the caller's, so no schema row lists fields under it, and no `Kind` of the schema
//! says "an object of origins" yet: [`check`] reads the field itself, with the schema's
//! sentences.

use super::route::Route;
use super::url::{NotOrigin, origin};
use crate::policy::{PolicyError, PolicyErrorKind, Value};

/// Primary origins listed at most.
pub const MAX_PRIMARIES: usize = 64;
/// Alternates of one primary at most.
pub const MAX_ALTERNATES: usize = 8;

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

const ORIGIN: &str =
    "an origin, scheme://host[:port] with http or https and nothing after but \"/\"";

/// The `failover` field's value checked: `None` when absent, `null`, `false` or `{}`. The error
/// names the first bad key or alternate (`failover["https://a.test"][1]`) and what it must be.
pub fn check(value: Option<&Value>) -> Result<Option<FailoverPolicy>, PolicyError> {
    let map = match value {
        None | Some(Value::Null) | Some(Value::Bool(false)) => return Ok(None),
        Some(Value::Map(map)) => map,
        Some(other) => {
            let expected = "an object of origins to lists of alternate origins";
            return Err(type_error("failover".to_owned(), expected, other));
        }
    };
    if map.len() > MAX_PRIMARIES {
        let mut message = "failover must list at most 64 origins (got ".to_owned();
        message.push_str(&map.len().to_string());
        message.push(')');
        return Err(range("failover".to_owned(), message));
    }
    let mut policy = FailoverPolicy::default();
    for (key, list) in map.iter() {
        let path = key_path(key);
        let primary = origin(key).map_err(|why| bad_origin(&path, key, why))?;
        if let Some(before) = map
            .iter()
            .take_while(|(k, _)| k != key)
            .find(|(k, _)| origin(k).as_deref() == Ok(primary.as_str()))
        {
            return Err(repeated(&path, key, &key_path(&before.0)));
        }
        let items = match list {
            Value::List(items) if (1..=MAX_ALTERNATES).contains(&items.len()) => items,
            Value::List(items) => {
                let mut message = path.clone();
                message.push_str(" must be a list of 1 to 8 origins (got ");
                message.push_str(&items.len().to_string());
                message.push(')');
                return Err(range(path, message));
            }
            other => return Err(type_error(path, "a list of 1 to 8 origins", other)),
        };
        let mut alternates: Vec<String> = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let item_path = index_path(&path, i);
            let Value::String(s) = item else {
                return Err(type_error(item_path, ORIGIN, item));
            };
            let alternate = origin(s).map_err(|why| bad_origin(&item_path, s, why))?;
            if alternate == primary {
                let mut message = item_path.clone();
                message.push_str(" must be an origin other than its primary (got ");
                push_quoted(&mut message, s);
                message.push(')');
                return Err(range(item_path, message));
            }
            if let Some(j) = alternates.iter().position(|a| *a == alternate) {
                return Err(repeated(&item_path, s, &index_path(&path, j)));
            }
            alternates.push(alternate);
        }
        policy.origins.push(Alternates {
            primary,
            alternates,
        });
    }
    Ok((!policy.origins.is_empty()).then_some(policy))
}

/// `failover["<key>"]`.
fn key_path(key: &str) -> String {
    let mut path = "failover[".to_owned();
    push_quoted(&mut path, key);
    path.push(']');
    path
}

/// `<path>[i]`.
fn index_path(path: &str, i: usize) -> String {
    let mut p = path.to_owned();
    p.push('[');
    p.push_str(&i.to_string());
    p.push(']');
    p
}

fn range(path: String, message: String) -> PolicyError {
    PolicyError {
        path,
        message,
        kind: PolicyErrorKind::Range,
    }
}

/// "`path` must be an origin, … (got "`given`": `why`)".
fn bad_origin(path: &str, given: &str, why: NotOrigin) -> PolicyError {
    let mut message = path.to_owned();
    message.push_str(" must be ");
    message.push_str(ORIGIN);
    message.push_str(" (got ");
    push_quoted(&mut message, given);
    message.push_str(", with ");
    message.push_str(why.found());
    message.push(')');
    range(path.to_owned(), message)
}

/// "`path` must be an origin not listed before (got "`given`", as at `before`)".
fn repeated(path: &str, given: &str, before: &str) -> PolicyError {
    let mut message = path.to_owned();
    message.push_str(" must be an origin not listed before it (got ");
    push_quoted(&mut message, given);
    message.push_str(", the origin of ");
    message.push_str(before);
    message.push(')');
    range(path.to_owned(), message)
}

/// "`path` must be `expected` (got a …)".
fn type_error(path: String, expected: &str, got: &Value) -> PolicyError {
    let mut message = path.clone();
    message.push_str(" must be ");
    message.push_str(expected);
    message.push_str(" (got ");
    message.push_str(match got {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::List(_) => "an array",
        Value::Map(_) => "an object",
    });
    message.push(')');
    PolicyError {
        path,
        message,
        kind: PolicyErrorKind::Type,
    }
}

/// `s` in double quotes, `"` and `\` and control characters escaped, cut after 80 characters.
fn push_quoted(out: &mut String, s: &str) {
    out.push('"');
    for (i, c) in s.chars().enumerate() {
        if i == 80 {
            out.push_str("\"…");
            return;
        }
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.extend(c.escape_unicode()),
            c => out.push(c),
        }
    }
    out.push('"');
}
