//! The built-in checker: a Draft 2020-12 validator for exactly the keywords the schemas of
//! `#[tool]` arguments use (types, enums and constants, numeric bounds, `multipleOf`, string
//! lengths and patterns, array bounds, objects with `properties`/`required`/
//! `additionalProperties`, `anyOf`/`oneOf`/`allOf`/`not`, local `$ref`). It reports what the general
//! engine reports, message for message and path for path (the differential tests compare
//! them); a schema with any other keyword is refused at compile time ([`Unsupported`]), never
//! checked in part.
//!
//! Compiling walks the schema once, with no meta-schema and no regex for a schema without
//! `pattern`, which keeps registry start-up to microseconds.

mod eval;
mod num;
mod surely;
mod tree;
mod vocab;

use std::collections::HashMap;

use serde_json::{Map, Number, Value};

pub(crate) use tree::Checker;
use tree::{escape, str_of, Id, Keywords, Node, Span, TYPES};
use vocab::{as_count, entry, ANNOTATIONS, CHECKED_FORMATS};

pub(crate) use eval::Found;
pub(crate) use surely::compiles_surely;

/// Why a schema is outside what the built-in checker covers (or is malformed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unsupported {
    /// JSON pointer into the schema.
    pub(crate) at: String,
    /// What is there.
    pub(crate) what: String,
    /// `true` when the schema is wrong (no engine compiles it), not merely outside the
    /// checker's keywords.
    pub(crate) malformed: bool,
}

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.at.is_empty() { "/" } else { &self.at };
        write!(f, "{} at `{at}`", self.what)
    }
}

impl Checker {
    /// Compile `schema`, or say the first part of it the checker does not cover.
    pub(crate) fn compile(schema: &Value) -> Result<Checker, Unsupported> {
        let mut c = Compiler {
            root: schema,
            nodes: Vec::with_capacity(16),
            keywords: Vec::with_capacity(8),
            text: Vec::with_capacity(512),
            refs: Vec::new(),
            by_pointer: HashMap::new(),
        };
        if let Some(id) = schema.as_object().and_then(|m| entry(m, "$id")) {
            if !id.is_string() {
                return Err(c.bad(Span::EMPTY, "a `$id` that is not a string"));
            }
        }
        c.node(schema, Span::EMPTY)?;
        let checker = Checker {
            nodes: c.nodes,
            keywords: c.keywords,
            text: c.text,
        };
        // Only a `$ref` leads back to where a walk has been: without one there is no loop.
        let refers = checker.keywords.iter().any(|k| k.ref_.is_some());
        if let Some(at) = refers.then(|| checker.loop_at()).flatten() {
            return Err(Unsupported {
                at,
                what: "a `$ref` cycle that checks the same value again".to_owned(),
                malformed: false,
            });
        }
        Ok(checker)
    }

    /// The `i`-th node applied to the same value as `id` (not to a part of it), if any.
    fn same_value(&self, id: Id, i: usize) -> Option<Id> {
        match self.nodes[id] {
            Node::Schema(k) => self.keywords[k]
                .ref_
                .iter()
                .chain(&self.keywords[k].all_of)
                .chain(&self.keywords[k].any_of)
                .chain(&self.keywords[k].one_of)
                .chain(self.keywords[k].not.as_ref().map(|(n, _)| n))
                .nth(i)
                .copied(),
            _ => None,
        }
    }

    /// Where a chain of `$ref`s and combinators comes back to itself without descending into
    /// the value (it would never end), if anywhere.
    fn loop_at(&self) -> Option<String> {
        // 0: unseen, 1: on the current path, 2: done.
        let mut state = vec![0u8; self.nodes.len()];
        // The path walked: each node with the index of its next edge.
        let mut stack: Vec<(Id, usize)> = Vec::new();
        for start in 0..self.nodes.len() {
            if state[start] != 0 {
                continue;
            }
            stack.push((start, 0));
            state[start] = 1;
            while let Some((id, i)) = stack.last_mut() {
                if let Some(n) = self.same_value(*id, *i) {
                    *i += 1;
                    match state[n] {
                        1 => {
                            return Some(match self.nodes[n] {
                                Node::Schema(k) => self.str(self.keywords[k].at).to_owned(),
                                _ => String::new(),
                            })
                        }
                        0 => {
                            state[n] = 1;
                            stack.push((n, 0));
                        }
                        _ => {}
                    }
                } else {
                    state[*id] = 2;
                    stack.pop();
                }
            }
        }
        None
    }

    /// `true` when `instance` matches.
    pub(crate) fn is_valid(&self, instance: &Value) -> bool {
        eval::is_valid(self, 0, instance)
    }

    /// Everything wrong with `instance` (empty when it matches), unsorted.
    pub(crate) fn errors(&self, instance: &Value) -> Vec<Found> {
        let mut out = Vec::new();
        eval::errors(self, 0, instance, &mut String::new(), &mut out);
        out
    }
}

struct Compiler<'a> {
    root: &'a Value,
    nodes: Vec<Node>,
    keywords: Vec<Keywords>,
    /// [`Checker::text`]: locations and names, appended as the walk meets them.
    text: Vec<u8>,
    /// Node of each location a `$ref` named so far (a `$ref` cycle ends on one), by its
    /// pointer in the text: a schema names a few, found by comparing. Locations reached by
    /// walking need no entry: the walk reaches each one once.
    refs: Vec<(Span, Id)>,
    /// The same by pointer, kept once there are more than [`FEW_REFS`].
    by_pointer: HashMap<String, Id>,
}

impl Compiler<'_> {
    /// A schema no engine compiles.
    fn bad(&self, at: Span, what: impl Into<String>) -> Unsupported {
        Unsupported {
            at: str_of(&self.text, at).to_owned(),
            what: what.into(),
            malformed: true,
        }
    }

    /// A schema the general engine compiles and this checker does not cover.
    fn uncovered(&self, at: Span, what: impl Into<String>) -> Unsupported {
        Unsupported {
            malformed: false,
            ..self.bad(at, what)
        }
    }

    /// `s` copied into the text.
    fn push_text(&mut self, s: &str) -> Span {
        let start = self.text.len();
        self.text.extend_from_slice(s.as_bytes());
        Span {
            start,
            end: self.text.len(),
        }
    }

    /// The location `at` with each of `segments` appended as a JSON pointer segment (escaped
    /// already), as a new piece of the text.
    fn join(&mut self, at: Span, segments: &[&str]) -> Span {
        let start = self.text.len();
        self.text.extend_from_within(at.start..at.end);
        for s in segments {
            self.text.push(b'/');
            self.text.extend_from_slice(s.as_bytes());
        }
        Span {
            start,
            end: self.text.len(),
        }
    }

    fn node(&mut self, schema: &Value, at: Span) -> Result<Id, Unsupported> {
        let id = self.nodes.len();
        self.nodes.push(Node::True);
        self.fill(id, schema, at)
    }

    /// Compile `schema` into the node `id` (reserved before, so a `$ref` back to it ends there).
    fn fill(&mut self, id: Id, schema: &Value, at: Span) -> Result<Id, Unsupported> {
        let node = match schema {
            Value::Bool(true) => Node::True,
            Value::Bool(false) => Node::False(at),
            Value::Object(map) => self.keywords(map, at)?,
            _ => return Err(self.bad(at, "a schema that is neither an object nor a boolean")),
        };
        self.nodes[id] = node;
        Ok(id)
    }

    /// The value `v` of keyword `key` as a count.
    fn count(&self, v: &Value, key: &str, at: Span) -> Result<Option<u64>, Unsupported> {
        as_count(v)
            .map(Some)
            .ok_or_else(|| self.bad(at, format!("`{key}` that is not a non-negative integer")))
    }

    /// The value `v` of keyword `key` as a number.
    fn number(&self, v: &Value, key: &str, at: Span) -> Result<Option<Number>, Unsupported> {
        match v {
            Value::Number(n) => Ok(Some(n.clone())),
            _ => Err(self.bad(at, format!("`{key}` that is not a number"))),
        }
    }

    /// The bit of the type `name` in [`Keywords::types`].
    fn type_bit(&self, name: &str, at: Span) -> Result<u8, Unsupported> {
        let i = TYPES
            .iter()
            .position(|t| *t == name)
            .ok_or_else(|| self.bad(at, format!("unknown type `{name}`")))?;
        Ok(1 << i)
    }

    fn list(&mut self, v: &Value, at: Span, key: &str) -> Result<Vec<Id>, Unsupported> {
        let Some(items) = v.as_array().filter(|a| !a.is_empty()) else {
            return Err(self.bad(at, format!("`{key}` that is not a non-empty array")));
        };
        let mut ids = Vec::with_capacity(items.len());
        for (i, s) in items.iter().enumerate() {
            let at = self.join(at, &[key, index(i, &mut [0; 20])]);
            ids.push(self.node(s, at)?);
        }
        Ok(ids)
    }

    #[allow(clippy::too_many_lines)] // One arm per keyword.
    fn keywords(&mut self, map: &Map<String, Value>, at: Span) -> Result<Node, Unsupported> {
        let mut k = Keywords::default();
        let mut asserts = false;
        for (key, value) in map {
            let annotation = ANNOTATIONS.contains(&key.as_str()) || key.starts_with("x-");
            asserts |= !annotation;
            match key.as_str() {
                // Applied to no value, but the meta-schema checks every entry: each is compiled
                // (once, as a `$ref` to it would be), so a malformed one is refused here too.
                "$defs" | "definitions" => {
                    let defs = value
                        .as_object()
                        .ok_or_else(|| self.bad(at, format!("a `{key}` that is not an object")))?;
                    for name in defs.keys() {
                        let pointer = self.join(at, &[key, &escape(name)]);
                        let text = str_of(&self.text, pointer);
                        if text.contains('%') {
                            return Err(self.uncovered(
                                at,
                                format!("`$ref` `#{text}` that is not a plain JSON pointer"),
                            ));
                        }
                        self.reference_pointer(pointer, at)?;
                    }
                }
                _ if annotation => {}
                "$id" if at.is_empty() => {}
                "type" => {
                    let (bits, single) = match value {
                        Value::String(s) => (self.type_bit(s, at)?, true),
                        Value::Array(a) => {
                            if !a.iter().all(Value::is_string) {
                                return Err(self.bad(at, "a `type` list with a non-string"));
                            }
                            // The meta-schema: at least one name, none twice.
                            if a.is_empty() || a.iter().enumerate().any(|(i, n)| a[..i].contains(n))
                            {
                                return Err(self
                                    .bad(at, "a `type` list that is empty or names a type twice"));
                            }
                            let mut bits = 0u8;
                            for name in a.iter().filter_map(Value::as_str) {
                                bits |= self.type_bit(name, at)?;
                            }
                            (bits, a.len() == 1)
                        }
                        _ => {
                            return Err(self.bad(at, "a `type` that is neither a string nor a list"))
                        }
                    };
                    k.types = Some((bits, single));
                }
                "enum" => {
                    if !value.is_array() {
                        return Err(self.bad(at, "an `enum` that is not an array"));
                    }
                    k.enum_ = Some(value.clone());
                }
                "const" => k.const_ = Some(value.clone()),
                "minimum" => k.minimum = self.number(value, key, at)?,
                "maximum" => k.maximum = self.number(value, key, at)?,
                "exclusiveMinimum" => k.exclusive_minimum = self.number(value, key, at)?,
                "exclusiveMaximum" => k.exclusive_maximum = self.number(value, key, at)?,
                "multipleOf" => {
                    let m = value.as_f64().filter(|m| *m > 0.0 && m.is_finite());
                    k.multiple_of = Some(m.ok_or_else(|| {
                        self.bad(at, "a `multipleOf` that is not a positive number")
                    })?);
                }
                "minLength" => k.min_length = self.count(value, key, at)?,
                "maxLength" => k.max_length = self.count(value, key, at)?,
                "pattern" => {
                    let p = value
                        .as_str()
                        .ok_or_else(|| self.bad(at, "a `pattern` that is not a string"))?;
                    k.pattern = Some((self.regex(p, at)?, p.to_owned()));
                }
                "format" => {
                    let f = value
                        .as_str()
                        .ok_or_else(|| self.bad(at, "a `format` that is not a string"))?;
                    // Integer formats (`uint32`, `int64`, ...) and `float`/`double` are stated as
                    // bounds or are annotations; the general engine checks the others.
                    if CHECKED_FORMATS.contains(&f) {
                        return Err(self.uncovered(at, format!("format `{f}`")));
                    }
                }
                "prefixItems" => k.prefix_items = self.list(value, at, "prefixItems")?,
                "items" => {
                    if value.is_array() {
                        return Err(self.uncovered(at, "an `items` array (not Draft 2020-12)"));
                    }
                    let child = self.join(at, &["items"]);
                    k.items = Some(self.node(value, child)?);
                }
                "minItems" => k.min_items = self.count(value, key, at)?,
                "maxItems" => k.max_items = self.count(value, key, at)?,
                "uniqueItems" => {
                    k.unique_items = value
                        .as_bool()
                        .ok_or_else(|| self.bad(at, "a `uniqueItems` that is not a boolean"))?;
                }
                "properties" => {
                    let props = value
                        .as_object()
                        .ok_or_else(|| self.bad(at, "`properties` that is not an object"))?;
                    k.properties_given = true;
                    k.properties.reserve_exact(props.len());
                    for (name, s) in props {
                        let child = self.join(at, &["properties", &escape(name)]);
                        let id = self.node(s, child)?;
                        let name = self.push_text(name);
                        k.properties.push((name, id));
                    }
                }
                "required" => {
                    let names = value
                        .as_array()
                        .filter(|a| a.iter().all(Value::is_string))
                        .ok_or_else(|| self.bad(at, "a `required` that is not a list of names"))?;
                    // The meta-schema's `stringArray`: the names are unique.
                    if names
                        .iter()
                        .enumerate()
                        .any(|(i, n)| names[..i].contains(n))
                    {
                        return Err(self.bad(at, "a `required` that names a property twice"));
                    }
                    k.required.reserve_exact(names.len());
                    for name in names.iter().filter_map(Value::as_str) {
                        let name = self.push_text(name);
                        k.required.push(name);
                    }
                }
                "additionalProperties" => {
                    let child = self.join(at, &["additionalProperties"]);
                    k.additional = Some(self.node(value, child)?);
                }
                "minProperties" => k.min_properties = self.count(value, key, at)?,
                "maxProperties" => k.max_properties = self.count(value, key, at)?,
                "allOf" => k.all_of = self.list(value, at, "allOf")?,
                "anyOf" => k.any_of = self.list(value, at, "anyOf")?,
                "oneOf" => k.one_of = self.list(value, at, "oneOf")?,
                "not" => {
                    let child = self.join(at, &["not"]);
                    k.not = Some((self.node(value, child)?, value.clone()));
                }
                "$ref" => {
                    let r = value
                        .as_str()
                        .ok_or_else(|| self.bad(at, "a `$ref` that is not a string"))?;
                    k.ref_ = Some(self.reference(r, at)?);
                }
                other => return Err(self.uncovered(at, format!("keyword `{other}`"))),
            }
        }
        if !asserts {
            return Ok(Node::True);
        }
        k.at = at;
        self.keywords.push(k);
        Ok(Node::Schema(self.keywords.len() - 1))
    }

    /// The node a local `$ref` names (`#` or `#/json/pointer`, compiled once).
    fn reference(&mut self, r: &str, at: Span) -> Result<Id, Unsupported> {
        let Some(pointer) = r.strip_prefix('#') else {
            return Err(self.uncovered(at, format!("`$ref` `{r}` that is not local")));
        };
        if !(pointer.is_empty() || pointer.starts_with('/')) || pointer.contains('%') {
            return Err(
                self.uncovered(at, format!("`$ref` `{r}` that is not a plain JSON pointer"))
            );
        }
        // Named before: it resolved then (only a resolved pointer is remembered).
        if let Some(id) = self.named(pointer) {
            return Ok(id);
        }
        let pointer = self.push_text(pointer);
        self.reference_pointer(pointer, at)
    }

    /// The node at the JSON pointer `pointer` (a `$ref` to `#` and that pointer), compiled once.
    fn reference_pointer(&mut self, pointer: Span, at: Span) -> Result<Id, Unsupported> {
        let root = self.root;
        let text = str_of(&self.text, pointer);
        let target = resolve(root, text)
            .ok_or_else(|| self.bad(at, format!("`$ref` `#{text}` that names nothing")))?;
        if let Some(id) = self.named(text) {
            return Ok(id);
        }
        let id = self.nodes.len();
        self.nodes.push(Node::True);
        self.remember(pointer, id);
        self.fill(id, target, pointer)
    }

    /// The node a `$ref` to `pointer` was compiled into, if one was.
    fn named(&self, pointer: &str) -> Option<Id> {
        if self.refs.len() > FEW_REFS {
            return self.by_pointer.get(pointer).copied();
        }
        self.refs
            .iter()
            .find(|(p, _)| tree::bytes_of(&self.text, *p) == pointer.as_bytes())
            .map(|(_, id)| *id)
    }

    /// `pointer` names node `id` from now on.
    fn remember(&mut self, pointer: Span, id: Id) {
        self.refs.push((pointer, id));
        if self.refs.len() > FEW_REFS {
            // Past a few, looked up by hash: a schema with many definitions stays linear.
            let text = &self.text;
            let start = if self.by_pointer.is_empty() {
                0
            } else {
                self.refs.len() - 1
            };
            for (p, i) in &self.refs[start..] {
                self.by_pointer.insert(str_of(text, *p).to_owned(), *i);
            }
        }
    }

    /// `pattern` as the general engine reads it: ECMA 262 syntax translated to Rust's, matched
    /// anywhere in the string. Lookaround and back-references are left to the general engine.
    fn regex(&self, pattern: &str, at: Span) -> Result<regex::Regex, Unsupported> {
        let translated = jsonschema_regex::to_rust_regex(pattern).map_err(|()| {
            self.bad(
                at,
                format!("pattern `{pattern}` that is not a valid ECMA 262 regex"),
            )
        })?;
        regex::Regex::new(&translated).map_err(|_| {
            self.uncovered(
                at,
                format!("pattern `{pattern}` that needs a backtracking engine"),
            )
        })
    }
}

/// `i` in decimal, written into `buf`.
fn index(mut i: usize, buf: &mut [u8; 20]) -> &str {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (i % 10) as u8;
        i /= 10;
        if i == 0 {
            break;
        }
    }
    // Only ASCII digits were written.
    std::str::from_utf8(&buf[at..]).unwrap_or("0")
}

/// `Value::pointer`, unescaping a segment only where it has a `~`.
fn resolve<'v>(root: &'v Value, pointer: &str) -> Option<&'v Value> {
    if pointer.is_empty() {
        return Some(root);
    }
    let rest = pointer.strip_prefix('/')?;
    rest.split('/').try_fold(root, |target, segment| {
        let token = if segment.contains('~') {
            std::borrow::Cow::Owned(segment.replace("~1", "/").replace("~0", "~"))
        } else {
            std::borrow::Cow::Borrowed(segment)
        };
        match target {
            Value::Object(map) => entry(map, &token),
            Value::Array(list) => parse_index(&token).and_then(|i| list.get(i)),
            _ => None,
        }
    })
}

/// How many `$ref` targets are looked up by comparing before they are hashed.
const FEW_REFS: usize = 16;

/// An array index in a JSON pointer, as `Value::pointer` reads it: digits, no leading `+`,
/// no leading zero but for `0` itself.
fn parse_index(s: &str) -> Option<usize> {
    if s.starts_with('+') || (s.starts_with('0') && s.len() != 1) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_ref_cycle_that_never_descends_is_not_covered_one_that_descends_is() {
        let looping =
            json!({"$defs": {"d": {"anyOf": [{"$ref": "#/$defs/d"}]}}, "$ref": "#/$defs/d"});
        let e = Checker::compile(&looping).expect_err("a loop");
        assert!(!e.malformed && e.what.contains("cycle"), "{e}");
        let tree = json!({
            "$defs": {"t": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/t"}}}}},
            "$ref": "#/$defs/t"
        });
        let c = Checker::compile(&tree).expect("a recursive type");
        assert!(c.is_valid(&json!({"kids": [{"kids": []}]})));
        assert!(!c.is_valid(&json!({"kids": [{"kids": 1}]})));
    }

    /// Past a few `$ref` targets the compiler looks them up by hash: each is still compiled
    /// once, and a cycle through many is still found.
    #[test]
    fn many_definitions_are_compiled_once_each() {
        let mut defs = Map::new();
        let mut props = Map::new();
        for i in 0..40 {
            defs.insert(format!("d{i}"), json!({"type": "integer", "minimum": i}));
            for p in ["p", "q"] {
                props.insert(format!("{p}{i}"), json!({"$ref": format!("#/$defs/d{i}")}));
            }
        }
        let schema = json!({"type": "object", "properties": props, "$defs": defs});
        let c = Checker::compile(&schema).expect("compiles");
        // The root, 80 properties and 40 definitions.
        assert_eq!(c.nodes.len(), 121);
        assert!(c.is_valid(&json!({"p39": 39, "q39": 40, "p0": 0})));
        assert!(!c.is_valid(&json!({"q30": 29})));

        let mut defs = Map::new();
        for i in 0..20 {
            defs.insert(
                format!("a{i}"),
                json!({"$ref": format!("#/$defs/a{}", (i + 1) % 20)}),
            );
        }
        let looping = json!({"$defs": defs, "$ref": "#/$defs/a0"});
        let e = Checker::compile(&looping).expect_err("a loop");
        assert!(!e.malformed && e.what.contains("cycle"), "{e}");
    }

    #[test]
    fn malformed_and_uncovered_schemas_are_told_apart() {
        let bad =
            Checker::compile(&json!({"properties": {"p": {"pattern": "("}}})).expect_err("bad");
        assert!(bad.malformed, "{bad}");
        assert_eq!(bad.at, "/properties/p");
        let other = Checker::compile(&json!({"format": "email"})).expect_err("uncovered");
        assert!(!other.malformed, "{other}");
        assert!(Checker::compile(&json!({"format": "uint32", "type": "integer"})).is_ok());
    }

    /// Found by the `validator_diff` fuzz target: the meta-schema's `required` and `type` lists
    /// hold each name once (and `type` at least one), also in a definition nothing refers to, so
    /// the general engine refuses `["a", "a"]` there; the checker now refuses them too.
    #[test]
    fn lists_the_meta_schema_wants_unique_are_malformed_with_a_repeat() {
        let twice = json!({"required": ["a", "a"], "type": "null", "$defs": {"d": true}});
        let e = Checker::compile(&twice).expect_err("refused");
        assert!(e.malformed, "{e}");
        assert_eq!(e.at, "");
        assert!(Checker::compile(&json!({"required": ["a", "b"]})).is_ok());
        // Also in a definition nothing refers to, which the meta-schema checks all the same.
        let unused =
            json!({"allOf": [false], "$defs": {"d": {"required": ["a", "a"], "type": "null"}}});
        let e = Checker::compile(&unused).expect_err("refused");
        assert!(e.malformed, "{e}");
        assert_eq!(e.at, "/$defs/d");
        let nested = json!({"properties": {"p": {"definitions": {"x/y": {"type": 5}}}}});
        let e = Checker::compile(&nested).expect_err("refused");
        assert!(
            e.malformed && e.at == "/properties/p/definitions/x~1y",
            "{e}"
        );
        assert!(
            Checker::compile(&json!({"$defs": 1}))
                .expect_err("refused")
                .malformed
        );
        assert!(Checker::compile(&json!({"$defs": {"d": {"type": "string"}}})).is_ok());
        // A `type` list: at least one name, each once.
        for twice in [
            json!({"type": ["null", "null"], "$defs": {"d": true}}),
            json!({"type": []}),
        ] {
            assert!(
                Checker::compile(&twice).expect_err("refused").malformed,
                "{twice}"
            );
        }
        assert!(Checker::compile(&json!({"type": ["null", "string"]})).is_ok());
    }
}
