//! Running a [`Checker`]: a yes/no walk for the hot path, and the full list of violations,
//! worded as the general engine words them, for a refusal.

use std::cmp::Ordering;

use serde_json::Value;

use super::num::{compare, equal, is_integer, is_multiple_of};
use super::tree::{escape, Checker, Id, Keywords, Node, TYPES};

/// One violation as the checker finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    /// JSON pointer to the offending value.
    pub(crate) path: String,
    /// What is wrong (not yet cut to length).
    pub(crate) message: String,
    /// JSON pointer to the subschema the value must match (for `required`, the missing
    /// property's schema).
    pub(crate) schema_path: String,
    /// For a failed `const` or `enum`: the allowed values, as JSON.
    allowed: Option<Vec<String>>,
}

fn type_bit(v: &Value) -> u8 {
    match v {
        Value::Null => 1,
        Value::Bool(_) => 1 << 1,
        Value::Number(n) if is_integer(n) => 1 << 2 | 1 << 3,
        Value::Number(_) => 1 << 3,
        Value::String(_) => 1 << 4,
        Value::Array(_) => 1 << 5,
        Value::Object(_) => 1 << 6,
    }
}

fn type_ok(bits: u8, v: &Value) -> bool {
    type_bit(v) & bits != 0
}

fn is_unique(items: &[Value]) -> bool {
    items
        .iter()
        .enumerate()
        .all(|(i, a)| items[i + 1..].iter().all(|b| !equal(a, b)))
}

fn chars(s: &str) -> u64 {
    s.chars().count() as u64
}

/// `true` when `v` matches node `id`.
pub(super) fn is_valid(c: &Checker, id: Id, v: &Value) -> bool {
    match c.nodes[id] {
        Node::True => true,
        Node::False(_) => false,
        Node::Schema(k) => keywords_valid(c, &c.keywords[k], v),
    }
}

/// Objects up to this many keys are matched against `properties` by comparing names.
const SMALL_OBJECT: usize = 8;

fn keywords_valid(c: &Checker, k: &Keywords, v: &Value) -> bool {
    if let Some((bits, _)) = k.types {
        if !type_ok(bits, v) {
            return false;
        }
    }
    if let Some(r) = k.ref_ {
        if !is_valid(c, r, v) {
            return false;
        }
    }
    if let Some(e) = &k.enum_ {
        if !e.as_array().is_some_and(|a| a.iter().any(|o| equal(o, v))) {
            return false;
        }
    }
    if let Some(e) = &k.const_ {
        if !equal(e, v) {
            return false;
        }
    }
    match v {
        Value::Number(n) => {
            let below = |limit: &Option<serde_json::Number>, bad: &[Ordering]| {
                limit
                    .as_ref()
                    .is_some_and(|l| compare(n, l).is_none_or(|o| bad.contains(&o)))
            };
            if below(&k.minimum, &[Ordering::Less])
                || below(&k.maximum, &[Ordering::Greater])
                || below(&k.exclusive_minimum, &[Ordering::Less, Ordering::Equal])
                || below(&k.exclusive_maximum, &[Ordering::Greater, Ordering::Equal])
            {
                return false;
            }
            if k.multiple_of.is_some_and(|m| !is_multiple_of(n, m)) {
                return false;
            }
        }
        Value::String(s) => {
            if k.min_length.is_some() || k.max_length.is_some() {
                let len = chars(s);
                if k.min_length.is_some_and(|m| len < m) || k.max_length.is_some_and(|m| len > m) {
                    return false;
                }
            }
            if k.pattern.as_ref().is_some_and(|(re, _)| !re.is_match(s)) {
                return false;
            }
        }
        Value::Array(a) => {
            let n = a.len() as u64;
            if k.min_items.is_some_and(|m| n < m) || k.max_items.is_some_and(|m| n > m) {
                return false;
            }
            if k.unique_items && !is_unique(a) {
                return false;
            }
            for (item, s) in a.iter().zip(&k.prefix_items) {
                if !is_valid(c, *s, item) {
                    return false;
                }
            }
            if let Some(s) = k.items {
                if !a
                    .iter()
                    .skip(k.prefix_items.len())
                    .all(|i| is_valid(c, s, i))
                {
                    return false;
                }
            }
        }
        Value::Object(m) => {
            let n = m.len() as u64;
            if k.min_properties.is_some_and(|x| n < x) || k.max_properties.is_some_and(|x| n > x) {
                return false;
            }
            if m.len() <= SMALL_OBJECT {
                // A call's arguments: a few keys, each looked up among the properties by
                // comparing names, with no key hashed. The same keywords, the same answer.
                if !k
                    .required
                    .iter()
                    .all(|r| m.keys().any(|key| key.as_bytes() == c.bytes(*r)))
                {
                    return false;
                }
                for (name, p) in m {
                    let name = name.as_bytes();
                    let schema = match k.properties.iter().find(|(n, _)| c.bytes(*n) == name) {
                        Some((_, s)) => Some(*s),
                        None => k.additional,
                    };
                    if schema.is_some_and(|s| !is_valid(c, s, p)) {
                        return false;
                    }
                }
            } else {
                if !k.required.iter().all(|r| m.contains_key(c.str(*r))) {
                    return false;
                }
                for (name, s) in &k.properties {
                    if let Some(p) = m.get(c.str(*name)) {
                        if !is_valid(c, *s, p) {
                            return false;
                        }
                    }
                }
                if let Some(s) = k.additional {
                    for (name, p) in m {
                        if !k
                            .properties
                            .iter()
                            .any(|(n, _)| c.bytes(*n) == name.as_bytes())
                            && !is_valid(c, s, p)
                        {
                            return false;
                        }
                    }
                }
            }
        }
        _ => {}
    }
    if !k.all_of.iter().all(|s| is_valid(c, *s, v)) {
        return false;
    }
    if !k.any_of.is_empty() && !k.any_of.iter().any(|s| is_valid(c, *s, v)) {
        return false;
    }
    if !k.one_of.is_empty() && k.one_of.iter().filter(|s| is_valid(c, **s, v)).count() != 1 {
        return false;
    }
    if let Some((s, _)) = &k.not {
        if is_valid(c, *s, v) {
            return false;
        }
    }
    true
}

fn push_segment(path: &mut String, segment: &str) {
    path.push('/');
    for ch in segment.chars() {
        match ch {
            '~' => path.push_str("~0"),
            '/' => path.push_str("~1"),
            c => path.push(c),
        }
    }
}

fn plural(n: u64, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 {
        one
    } else {
        many
    }
}

/// Every violation of node `id` by `v` at `path`, appended to `out`.
pub(super) fn errors(c: &Checker, id: Id, v: &Value, path: &mut String, out: &mut Vec<Found>) {
    match c.nodes[id] {
        Node::True => {}
        Node::False(at) => out.push(Found {
            path: path.clone(),
            message: format!("False schema does not allow {v}"),
            schema_path: parent(c.str(at)),
            allowed: None,
        }),
        Node::Schema(k) => keyword_errors(c, &c.keywords[k], v, path, out),
    }
}

/// A violation of a keyword of `k` (of checker `c`) by the value at `path`.
fn found(c: &Checker, path: &str, k: &Keywords, message: String) -> Found {
    Found {
        path: path.to_owned(),
        message,
        schema_path: c.str(k.at).to_owned(),
        allowed: None,
    }
}

/// The schema object holding a keyword, from the keyword's location.
fn parent(keyword: &str) -> String {
    keyword
        .rfind('/')
        .map_or(String::new(), |i| keyword[..i].to_owned())
}

/// The keywords are looked at in the general engine's order (type, const, enum, numbers,
/// lengths, `required`, `pattern`, `uniqueItems`, properties, `items` before `prefixItems`, the
/// combinators, `$ref` last): the first constant a failed alternative names, in a message
/// of [`none_matched`], is the one the general engine names.
#[allow(clippy::too_many_lines)] // One block per keyword, in the general engine's words.
fn keyword_errors(c: &Checker, k: &Keywords, v: &Value, path: &mut String, out: &mut Vec<Found>) {
    if let Some((bits, single)) = k.types {
        if !type_ok(bits, v) {
            let names: Vec<&str> = (0..TYPES.len())
                .filter(|i| bits & (1 << i) != 0)
                .map(|i| TYPES[i])
                .collect();
            let message = if single {
                format!(r#"{v} is not of type "{}""#, names.join(""))
            } else {
                let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
                format!("{v} is not of types {}", quoted.join(", "))
            };
            out.push(found(c, path, k, message));
        }
    }
    if let Some(expected) = &k.const_ {
        if !equal(expected, v) {
            let mut f = found(c, path, k, format!("{expected} was expected"));
            f.allowed = Some(vec![expected.to_string()]);
            out.push(f);
        }
    }
    if let Some(options) = &k.enum_ {
        let list = options.as_array().map_or(&[][..], Vec::as_slice);
        if !list.iter().any(|o| equal(o, v)) {
            let mut f = found(c, path, k, enum_message(v, list));
            f.allowed = Some(list.iter().map(Value::to_string).collect());
            out.push(f);
        }
    }
    match v {
        Value::Number(n) => {
            let checks: [(&Option<serde_json::Number>, &[Ordering], &str); 4] = [
                (&k.minimum, &[Ordering::Less], "is less than the minimum of"),
                (
                    &k.maximum,
                    &[Ordering::Greater],
                    "is greater than the maximum of",
                ),
                (
                    &k.exclusive_minimum,
                    &[Ordering::Less, Ordering::Equal],
                    "is less than or equal to the minimum of",
                ),
                (
                    &k.exclusive_maximum,
                    &[Ordering::Greater, Ordering::Equal],
                    "is greater than or equal to the maximum of",
                ),
            ];
            for (limit, bad, words) in checks {
                if let Some(l) = limit {
                    if compare(n, l).is_none_or(|o| bad.contains(&o)) {
                        out.push(found(c, path, k, format!("{v} {words} {l}")));
                    }
                }
            }
            if let Some(m) = k.multiple_of {
                if !is_multiple_of(n, m) {
                    out.push(found(c, path, k, format!("{v} is not a multiple of {m}")));
                }
            }
        }
        Value::String(s) => {
            let len = chars(s);
            if let Some(m) = k.min_length.filter(|m| len < *m) {
                let unit = plural(m, "character", "characters");
                out.push(found(c, path, k, format!("{v} is shorter than {m} {unit}")));
            }
            if let Some(m) = k.max_length.filter(|m| len > *m) {
                out.push(found(
                    c,
                    path,
                    k,
                    format!("a string of {len} characters is longer than {m}"),
                ));
            }
            if let Some((re, p)) = &k.pattern {
                if !re.is_match(s) {
                    out.push(found(c, path, k, format!(r#"{v} does not match "{p}""#)));
                }
            }
        }
        Value::Array(a) => {
            let n = a.len() as u64;
            if let Some(m) = k.min_items.filter(|m| n < *m) {
                let unit = plural(m, "item", "items");
                out.push(found(c, path, k, format!("{v} has less than {m} {unit}")));
            }
            if let Some(m) = k.max_items.filter(|m| n > *m) {
                let unit = plural(m, "item", "items");
                out.push(found(c, path, k, format!("{v} has more than {m} {unit}")));
            }
            if k.unique_items && !is_unique(a) {
                out.push(found(c, path, k, format!("{v} has non-unique elements")));
            }
            let len = path.len();
            if let Some(s) = k.items {
                for (i, item) in a.iter().enumerate().skip(k.prefix_items.len()) {
                    push_segment(path, &i.to_string());
                    errors(c, s, item, path, out);
                    path.truncate(len);
                }
            }
            for (i, (item, s)) in a.iter().zip(&k.prefix_items).enumerate() {
                push_segment(path, &i.to_string());
                errors(c, *s, item, path, out);
                path.truncate(len);
            }
        }
        Value::Object(m) => {
            let n = m.len() as u64;
            if let Some(x) = k.min_properties.filter(|x| n < *x) {
                let unit = plural(x, "property", "properties");
                out.push(found(c, path, k, format!("{v} has less than {x} {unit}")));
            }
            if let Some(x) = k.max_properties.filter(|x| n > *x) {
                let unit = plural(x, "property", "properties");
                out.push(found(c, path, k, format!("{v} has more than {x} {unit}")));
            }
            for r in k.required.iter().map(|r| c.str(*r)) {
                if m.contains_key(r) {
                    continue;
                }
                out.push(Found {
                    path: path.clone(),
                    message: format!("{} is a required property", Value::String(r.to_owned())),
                    schema_path: format!("{}/properties/{}", c.str(k.at), escape(r)),
                    allowed: None,
                });
            }
            let len = path.len();
            for (name, s) in &k.properties {
                let name = c.str(*name);
                if let Some(p) = m.get(name) {
                    push_segment(path, name);
                    errors(c, *s, p, path, out);
                    path.truncate(len);
                }
            }
            if let Some(s) = k.additional {
                let extra: Vec<&String> = m
                    .keys()
                    .filter(|name| {
                        !k.properties
                            .iter()
                            .any(|(n, _)| c.bytes(*n) == name.as_bytes())
                    })
                    .collect();
                if matches!(c.nodes[s], Node::False(_)) {
                    // Without `properties` the general engine words it as the `false` schema
                    // refusing the first value (every key is then extra).
                    let message = match extra.first() {
                        None => None,
                        Some(first) if !k.properties_given => {
                            Some(format!("False schema does not allow {}", m[first.as_str()]))
                        }
                        Some(_) => {
                            let quoted: Vec<String> =
                                extra.iter().map(|e| format!("'{e}'")).collect();
                            let verb = if extra.len() == 1 { "was" } else { "were" };
                            Some(format!(
                                "Additional properties are not allowed ({} {verb} unexpected)",
                                quoted.join(", ")
                            ))
                        }
                    };
                    if let Some(message) = message {
                        out.push(found(c, path, k, message));
                    }
                } else {
                    for name in extra {
                        push_segment(path, name);
                        errors(c, s, &m[name.as_str()], path, out);
                        path.truncate(len);
                    }
                }
            }
        }
        _ => {}
    }
    for s in &k.all_of {
        errors(c, *s, v, path, out);
    }
    if !k.any_of.is_empty() && !k.any_of.iter().any(|s| is_valid(c, *s, v)) {
        out.push(found(c, path, k, none_matched(c, &k.any_of, v)));
    }
    if !k.one_of.is_empty() {
        match k.one_of.iter().filter(|s| is_valid(c, **s, v)).count() {
            0 => out.push(found(c, path, k, none_matched(c, &k.one_of, v))),
            1 => {}
            _ => out.push(found(
                c,
                path,
                k,
                format!(
                    "{v} is valid under more than one of the schemas listed in the 'oneOf' keyword"
                ),
            )),
        }
    }
    if let Some((s, schema)) = &k.not {
        if is_valid(c, *s, v) {
            out.push(found(
                c,
                path,
                k,
                format!("{schema} is not allowed for {v}"),
            ));
        }
    }
    if let Some(r) = k.ref_ {
        errors(c, r, v, path, out);
    }
}

/// A value outside a set of alternatives: the allowed values when every alternative failed
/// on a constant or an enum, else that none matched (the combinator is not named).
fn none_matched(c: &Checker, branches: &[Id], v: &Value) -> String {
    let allowed: Option<Vec<String>> = branches
        .iter()
        .map(|b| {
            let mut found = Vec::new();
            errors(c, *b, v, &mut String::new(), &mut found);
            found.into_iter().find_map(|f| f.allowed)
        })
        .collect::<Option<Vec<Vec<String>>>>()
        .map(|lists| lists.concat());
    match allowed {
        Some(values) if !values.is_empty() => {
            format!("{v} is not one of {}", values.join(", "))
        }
        _ => format!("{v} matches none of the allowed alternatives"),
    }
}

/// `"x" is not one of "a", "b" or "c"`, as the general engine says it: at most three options,
/// else two and how many others.
fn enum_message(v: &Value, options: &[Value]) -> String {
    let mut out = format!("{v} is not one of ");
    let total = options.len();
    if total <= 3 {
        for (i, o) in options.iter().enumerate() {
            if i == 0 {
                out.push_str(&o.to_string());
            } else if i == total - 1 {
                out.push_str(&format!(" or {o}"));
            } else {
                out.push_str(&format!(", {o}"));
            }
        }
    } else {
        let shown: Vec<String> = options.iter().take(2).map(Value::to_string).collect();
        out.push_str(&shown.join(", "));
        out.push_str(&format!(" or {} other candidates", total - 2));
    }
    out
}
