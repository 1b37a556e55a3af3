//! A decoded JS value, the words every policy file reads: kept as given until validation.

/// A decoded JS value, kept as given until validation.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Value {
    /// `null`.
    #[default]
    Null,
    /// A boolean.
    Bool(bool),
    /// A number.
    Number(f64),
    /// A string.
    String(String),
    /// An array.
    List(Vec<Value>),
    /// Entries in order, keys unique (a repeated key keeps its last value, as in `JSON.parse`).
    Map(Vec<(String, Value)>),
}

/// An object's entries.
pub type Map = [(String, Value)];
