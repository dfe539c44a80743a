//! The compiled form of a schema: one node per schema location, keywords parsed.

use serde_json::{Number, Value};

/// A schema compiled for the built-in checker: the nodes, the keywords of those that have any,
/// and every location and name they refer to in one buffer (a compile allocates per schema, not
/// per node).
#[derive(Debug)]
pub(crate) struct Checker {
    pub(super) nodes: Vec<Node>,
    pub(super) keywords: Vec<Keywords>,
    pub(super) text: Vec<u8>,
}

/// Index of a node in [`Checker::nodes`]; the root is 0.
pub(super) type Id = usize;

/// A piece of [`Checker::text`] (UTF-8: only whole strings are copied into it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Span {
    pub(super) start: usize,
    pub(super) end: usize,
}

impl Span {
    /// The root's location.
    pub(super) const EMPTY: Span = Span { start: 0, end: 0 };

    pub(super) fn is_empty(self) -> bool {
        self.start == self.end
    }
}

/// The bytes of `span` in `text`.
pub(super) fn bytes_of(text: &[u8], span: Span) -> &[u8] {
    &text[span.start..span.end]
}

/// The text of `span` in `text`.
pub(super) fn str_of(text: &[u8], span: Span) -> &str {
    std::str::from_utf8(bytes_of(text, span)).unwrap_or_default()
}

impl Checker {
    /// The bytes of a name or location.
    pub(super) fn bytes(&self, span: Span) -> &[u8] {
        bytes_of(&self.text, span)
    }

    /// A name or location.
    pub(super) fn str(&self, span: Span) -> &str {
        str_of(&self.text, span)
    }
}

#[derive(Debug)]
pub(super) enum Node {
    /// `true` or `{}` (annotations only).
    True,
    /// `false`: nothing matches; its location.
    False(Span),
    /// Index into [`Checker::keywords`].
    Schema(usize),
}

/// The JSON types, in the order the general engine lists them.
pub(super) const TYPES: [&str; 7] = [
    "null", "boolean", "integer", "number", "string", "array", "object",
];

#[derive(Debug, Default)]
pub(super) struct Keywords {
    /// Location of this schema (JSON pointer into the document).
    pub(super) at: Span,
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
    pub(super) properties: Vec<(Span, Id)>,
    /// Whether the schema has a `properties` keyword (even `{}`): without one, the general
    /// engine words a closed object's refusal as the `false` schema refusing its first value.
    pub(super) properties_given: bool,
    pub(super) required: Vec<Span>,
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
