//! The checking machinery every field goes through: [`Check`] keeps the first error,
//! [`Object`] holds one policy object's fields as given. The checks of each section read
//! their fields through it; it reads the schema's rows it is given.

use super::error::{PolicyError, PolicyErrorKind};
use super::field::{Field, Kind, find, key_in};
use super::messages::{int_range, push_number, push_quoted, type_name, within_edits};
use super::value::{Map, Value};
use std::marker::PhantomData;

/// The fields of one policy object, as given (`null` counts as absent).
pub(crate) struct Object<'a> {
    /// The object's JS path (empty for the policy itself).
    prefix: &'static str,
    /// The fields given, by name (known ones only: an unknown one is an error).
    given: Vec<(&'static str, &'a Value)>,
}

impl<'a> Object<'a> {
    /// The value of field `key`, if given.
    pub(crate) fn get(&self, key: &str) -> Option<&'a Value> {
        self.given.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    /// The JS path of field `key`.
    pub(crate) fn path(&self, key: &str) -> String {
        let mut path = self.prefix.to_owned();
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(key);
        path
    }
}

/// The known field nearest to the unknown one at `path` (in the object at `prefix`), if one is
/// within two edits (a misspelling, as TypeScript would name it) and not all of its own name
/// is edited (`x` is no misspelling of `k`): the first within one edit, else the first within
/// two. Only an error's path runs it.
#[inline(never)]
fn nearest<R: Rows>(path: &str, prefix: &str) -> Option<&'static str> {
    for edits in 1..=2u8 {
        for f in R::FIELDS {
            let known = f.path;
            let under = prefix.is_empty() || known.as_bytes().get(prefix.len()) == Some(&b'.');
            if under
                && known.starts_with(prefix)
                && known.len() > prefix.len() + usize::from(edits) + 1
                && within_edits(path.as_bytes(), known.as_bytes(), edits)
            {
                return Some(known);
            }
        }
    }
    None
}

/// Validation state: the first error found. Checking goes on after an error (with
/// defaults in place of bad values) but only the first error is kept, so the error
/// reported is the one of the first bad field in checking order. Plain values instead of
/// a `Result` per field keep the wasm small.
pub(crate) struct Check<R: Rows> {
    pub(crate) error: Option<PolicyError>,
    rows: PhantomData<R>,
}

/// The rows a [`Check`] reads: what each field holds. The schema is the one table
/// ([`super::schema::Schema`]); a type parameter, so that the checks of each section need
/// not import the table that names their defaults, at no cost (one instance).
pub(crate) trait Rows {
    /// Every row, objects before their fields.
    const FIELDS: &'static [Field];
}

impl<R: Rows> Check<R> {
    /// A check against the rows of `R`, no error yet.
    pub(crate) fn new() -> Self {
        Check {
            error: None,
            rows: PhantomData,
        }
    }

    /// The fields of the object at `prefix` (the schema names them) in `map`. Any
    /// other key is an error; function fields (taken out in JS) are not data.
    #[inline(never)]
    pub(crate) fn object<'a>(&mut self, map: &'a Map, prefix: &'static str) -> Object<'a> {
        let mut object = Object {
            prefix,
            given: Vec::new(),
        };
        for (key, value) in map.iter() {
            let known = R::FIELDS
                .iter()
                .filter(|f| !matches!(f.kind, Kind::Function | Kind::Held))
                .find_map(|f| key_in(f, prefix).filter(|k| k == key));
            match known {
                Some(key) if !matches!(value, Value::Null) => object.given.push((key, value)),
                Some(_) => {}
                // `false` for a capability this build lacks: off, as asked.
                None if prefix.is_empty() && super::build::asks_off(key, value) => {}
                None if self.error.is_none() => {
                    let path = object.path(key);
                    let mut message = "unknown policy field ".to_owned();
                    push_quoted(&mut message, &path, false);
                    if let Some(known) = nearest::<R>(&path, prefix) {
                        message.push_str(": did you mean ");
                        push_quoted(&mut message, known, false);
                        message.push('?');
                    }
                    self.error = Some(PolicyError {
                        path,
                        message,
                        kind: PolicyErrorKind::Type,
                    });
                }
                None => {}
            }
        }
        object
    }

    /// The integer field `key` of `o`, in the range and with the default the schema
    /// gives it.
    pub(crate) fn int(&mut self, o: &Object, key: &str) -> u32 {
        let path = o.path(key);
        match find(R::FIELDS, &path).map(|f| f.kind) {
            Some(Kind::Int { min, max, default } | Kind::IntOrOff { min, max, default }) => {
                self.int_in(o, key, min, max, default)
            }
            // Every integer the validator asks for is in the schema (tested).
            _ => 0,
        }
    }

    /// The optional integer field `key` of `o` (None when absent or bad), in the schema's range.
    pub(crate) fn opt_int(&mut self, o: &Object, key: &str) -> Option<u32> {
        let path = o.path(key);
        let Some(Kind::OptInt { min, max }) = find(R::FIELDS, &path).map(|f| f.kind) else {
            // Every optional integer the validator asks for is in the schema (tested).
            return None;
        };
        let v = o.get(key)?;
        let n = as_int(v, min, max);
        if n.is_none() {
            self.int_error(path, v, min, max);
        }
        n
    }

    /// An integer field in `min..=max` (`default` if absent or bad); JS numbers arrive as
    /// f64, so 3.0 counts and 3.5 does not.
    #[inline(never)]
    fn int_in(&mut self, o: &Object, key: &str, min: u32, max: u32, default: u32) -> u32 {
        match o.get(key) {
            None => default,
            Some(v) => as_int(v, min, max).unwrap_or_else(|| {
                self.int_error(o.path(key), v, min, max);
                default
            }),
        }
    }

    /// `v` at `path` is not an integer in `min..=max`.
    #[inline(never)]
    pub(crate) fn int_error(&mut self, path: String, v: &Value, min: u32, max: u32) {
        let expected = int_range("", min, "", max);
        self.fail(path, &expected, v, matches!(v, Value::Number(_)));
    }

    /// A string field that must be one of the names the schema lists for it: the
    /// index of the one given.
    #[inline(never)]
    pub(crate) fn choice(&mut self, o: &Object, key: &str) -> Option<usize> {
        let v = o.get(key)?;
        let names = match find(R::FIELDS, &o.path(key)).map(|f| f.kind) {
            Some(Kind::Choice(names)) => names,
            _ => &[],
        };
        if let Value::String(s) = v
            && let Some(i) = names.iter().position(|name| name == s)
        {
            return Some(i);
        }
        let mut expected = "one of ".to_owned();
        for (i, name) in names.iter().enumerate() {
            if i > 0 {
                expected.push_str(", ");
            }
            push_quoted(&mut expected, name, false);
        }
        self.fail(o.path(key), &expected, v, matches!(v, Value::String(_)));
        None
    }

    /// A boolean field, with the default the schema gives it.
    #[cfg(feature = "coalesce")]
    #[inline(never)]
    pub(crate) fn flag(&mut self, o: &Object, key: &str) -> bool {
        let default = matches!(
            find(R::FIELDS, key).map(|f| f.kind),
            Some(Kind::Bool { default: true })
        );
        match o.get(key) {
            None => default,
            Some(Value::Bool(b)) => *b,
            Some(other) => {
                self.fail(o.path(key), "true or false", other, false);
                default
            }
        }
    }

    /// A feature field: absent (its default), `false` (off), `true` (on, defaults) or an
    /// object; the object's fields if on.
    #[inline(never)]
    pub(crate) fn feature<'a>(&mut self, o: &Object<'a>, key: &str) -> Option<&'a Map> {
        let on_by_default = matches!(
            find(R::FIELDS, key).map(|f| f.kind),
            Some(Kind::Feature { on: true })
        );
        match o.get(key) {
            None if on_by_default => Some(&[]),
            None | Some(Value::Bool(false)) => None,
            Some(Value::Bool(true)) => Some(&[]),
            Some(Value::Map(m)) => Some(m),
            Some(other) => {
                self.fail(o.path(key), "true, false or an object", other, false);
                None
            }
        }
    }

    /// Records "`path` must be `expected` (got …)" unless an error is recorded already. With
    /// `right_type` (a number or string of the wrong value) it is a range error showing the
    /// value; otherwise a type error naming the type given.
    #[inline(never)]
    pub(crate) fn fail(&mut self, path: String, expected: &str, got: &Value, right_type: bool) {
        if self.error.is_some() {
            return;
        }
        let mut message = if path.is_empty() {
            "policy".to_owned()
        } else {
            path.clone()
        };
        message.push_str(" must be ");
        message.push_str(expected);
        message.push_str(" (got ");
        let kind = match got {
            Value::Number(n) if right_type => {
                push_number(&mut message, *n);
                PolicyErrorKind::Range
            }
            Value::String(s) if right_type => {
                push_quoted(&mut message, s, true);
                PolicyErrorKind::Range
            }
            _ => {
                message.push_str(type_name(got));
                PolicyErrorKind::Type
            }
        };
        message.push(')');
        self.error = Some(PolicyError {
            path,
            message,
            kind,
        });
    }
}

pub(crate) fn as_int(v: &Value, min: u32, max: u32) -> Option<u32> {
    match v {
        Value::Number(n) if n.fract() == 0.0 && *n >= f64::from(min) && *n <= f64::from(max) => {
            Some(*n as u32)
        }
        _ => None,
    }
}
