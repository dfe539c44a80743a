//! The compiled form of a schema: one node per schema location, keywords parsed.

use serde_json::{Number, Value};

/// A schema compiled for the built-in checker.
#[derive(Debug)]
pub(crate) struct Checker {
    pub(super) nodes: Vec<Node>,
}

/// Index of a node in [`Checker::nodes`]; the root is 0.
pub(super) type Id = usize;

#[derive(Debug)]
pub(super) enum Node {
    /// `true` or `{}` (annotations only).
    True,
    /// `false`: nothing matches; its location.
    False(String),
    Schema(Box<Keywords>),
}

/// The JSON types, in the order the general engine lists them.
pub(super) const TYPES: [&str; 7] = [
    "null", "boolean", "integer", "number", "string", "array", "object",
];

#[derive(Debug, Default)]
pub(super) struct Keywords {
    /// Location of this schema (JSON pointer into the document).
    pub(super) at: String,
    /// Bit `i` set: `TYPES[i]` allowed; with whether it was written as one string.
    pub(super) types: Option<(u8, bool)>,
    pub(super) enum_: Option<Value>,
    pub(super) const_: Option<Value>,
    pub(super) minimum: Option<Number>,
    pub(super) maximum: Option<Number>,
    pub(super) exclusive_minimum: Option<Number>,
    pub(super) exclusive_maximum: Option<Number>,
    pub(super) multiple_of: Option<f64>,
    pub(super) min_length: Option<u64>,
    pub(super) max_length: Option<u64>,
    pub(super) pattern: Option<(regex::Regex, String)>,
    pub(super) prefix_items: Vec<Id>,
    pub(super) items: Option<Id>,
    pub(super) min_items: Option<u64>,
    pub(super) max_items: Option<u64>,
    pub(super) unique_items: bool,
    pub(super) properties: Vec<(String, Id)>,
    /// Whether the schema has a `properties` keyword (even `{}`): without one, the general
    /// engine words a closed object's refusal as the `false` schema refusing its first value.
    pub(super) properties_given: bool,
    pub(super) required: Vec<String>,
    /// `additionalProperties`: a schema (`false` is a [`Node::False`]).
    pub(super) additional: Option<Id>,
    pub(super) min_properties: Option<u64>,
    pub(super) max_properties: Option<u64>,
    pub(super) all_of: Vec<Id>,
    pub(super) any_of: Vec<Id>,
    pub(super) one_of: Vec<Id>,
    pub(super) not: Option<(Id, Value)>,
    pub(super) ref_: Option<Id>,
}

/// `segment` as a JSON pointer segment (borrowed when there is nothing to escape, as for
/// nearly every property name).
pub(super) fn escape(segment: &str) -> std::borrow::Cow<'_, str> {
    if segment.contains(['~', '/']) {
        segment.replace('~', "~0").replace('/', "~1").into()
    } else {
        segment.into()
    }
}
