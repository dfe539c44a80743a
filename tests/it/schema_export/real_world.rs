//! Third-party tool schemas (`tests/fixtures/export/real_world/schemas.jsonl`, shaped like what
//! public MCP servers and function-calling tools declare) converted to OpenAI strict and Gemini:
//! how many convert, whether every output obeys the dialect's rules, and whether answers valid
//! under the converted schema map back to answers valid under the original.
//!
//! Run with `--nocapture` to see the figures (they go to BENCHMARKS.md).

use std::collections::BTreeMap;

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use serde_json::{json, Map, Value};
use tool_core::schema::export::convert::{convert, Conversion};
use tool_core::schema::export::{gemini, openai, Downgrade, DowngradeKind, ExportOptions, Format};

use super::rules::{gemini_violations, nullable_as_json_schema, openai_strict_violations};
use super::{LOOSE, STRICT};

const CORPUS: &str = include_str!("../../fixtures/export/real_world/schemas.jsonl");

/// Answers generated per converted schema.
const SAMPLES: usize = 12;

struct Entry {
    id: String,
    hard: bool,
    name: String,
    description: String,
    schema: Value,
}

fn corpus() -> Vec<Entry> {
    CORPUS
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("corpus line is JSON");
            let class = v["class"].as_str().expect("class");
            assert!(class == "simple" || class == "hard", "{l}");
            Entry {
                id: v["id"].as_str().expect("id").to_owned(),
                hard: class == "hard",
                name: v["name"].as_str().expect("name").to_owned(),
                description: v["description"].as_str().expect("description").to_owned(),
                schema: v["inputSchema"].clone(),
            }
        })
        .collect()
}

// ---------------------------------------------------------------- answer generator

/// A small deterministic generator of JSON values for a schema.
struct Gen {
    state: u64,
    runner: TestRunner,
}

impl Gen {
    fn new(seed: u64) -> Self {
        Gen {
            state: seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407),
            runner: TestRunner::deterministic(),
        }
    }

    fn next(&mut self) -> u64 {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        self.state
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn regex(&mut self, pattern: &str) -> Option<String> {
        // Anchors are implied: a string matching the whole expression matches it.
        let mut p = String::new();
        let mut prev = ' ';
        let mut in_class = false;
        for c in pattern.chars() {
            let escaped = prev == '\\';
            match c {
                '[' if !escaped => in_class = true,
                ']' if !escaped => in_class = false,
                _ => {}
            }
            let anchor = !escaped && !in_class && (c == '^' || c == '$');
            // Printable ASCII for the wide classes, as ECMA-262 and the regex crate agree there.
            if escaped && matches!(c, 'S' | 's' | 'w' | 'd') {
                p.pop();
                p.push_str(match c {
                    'S' => "[!-~]",
                    's' => " ",
                    'w' => "[A-Za-z0-9_]",
                    _ => "[0-9]",
                });
            } else if !escaped && !in_class && c == '.' {
                p.push_str("[ -~]");
            } else if !anchor {
                p.push(c);
            }
            if !escaped && prev == '[' && c == '^' {
                p.push_str("\\x00-\\x1f\\x7f-\\x{10FFFF}");
            }
            prev = if escaped { ' ' } else { c };
        }
        let strategy = proptest::string::string_regex(&p).ok()?;
        let mut tree = strategy.new_tree(&mut self.runner).ok()?;
        for _ in 0..self.below(4) {
            tree.simplify();
        }
        Some(tree.current())
    }
}

/// Where the generator is: converted schemas know their downgrades; original ones do not.
struct Schema<'a> {
    root: &'a Value,
    downgrades: Option<&'a BTreeMap<String, Vec<Downgrade>>>,
    /// Original schema of a JSON-string downgrade, generated from in its own root.
    original_root: &'a Value,
}

fn format_value(f: &str, g: &mut Gen) -> Option<Value> {
    let n = g.below(9);
    Some(json!(match f {
        "date-time" => format!("2024-0{}-1{}T12:3{}:00Z", 1 + n % 9, n, n),
        "date" => format!("2024-0{}-1{}", 1 + n % 9, n),
        "time" => format!("12:3{n}:00Z"),
        "email" => format!("user{n}@example.com"),
        "uri" | "url" => format!("https://example.com/p/{n}"),
        "uuid" => format!("123e4567-e89b-42d3-a456-42661417400{n}"),
        "hostname" => format!("host{n}.example.com"),
        "ipv4" => format!("192.0.2.{n}"),
        "ipv6" => format!("2001:db8::{n}"),
        "duration" => format!("P{}D", n + 1),
        _ => return None,
    }))
}

impl Schema<'_> {
    fn gen(&self, node: &Value, path: &str, g: &mut Gen, depth: usize) -> Value {
        let downgrades: Vec<&Downgrade> = self
            .downgrades
            .and_then(|d| d.get(path))
            .map(|d| d.iter().collect())
            .unwrap_or_default();
        let kind = |k: DowngradeKind| downgrades.iter().find(|d| d.kind == k).copied();
        if let Some(d) = kind(DowngradeKind::JsonString) {
            // What the description asks for: the JSON text of a value of the original schema.
            let original = Schema {
                root: self.original_root,
                downgrades: None,
                original_root: self.original_root,
            };
            let value = original.gen(d.original.as_ref().expect("original"), "", g, depth + 1);
            return Value::String(value.to_string());
        }
        let mut node = node.clone();
        if let Some(d) = kind(DowngradeKind::NotedInDescription) {
            // The constraints the description states.
            if let (Value::Object(n), Some(Value::Object(moved))) = (&mut node, &d.original) {
                for (k, v) in moved {
                    n.insert(k.clone(), v.clone());
                }
            }
        }
        let v = self.gen_node(&node, path, g, depth);
        if kind(DowngradeKind::MapEntries).is_some() {
            // Each key at most once, as the description says.
            if let Value::Array(entries) = v {
                let mut seen = Vec::new();
                return Value::Array(
                    entries
                        .into_iter()
                        .filter(|e| {
                            let k = e["key"].clone();
                            let fresh = !seen.contains(&k);
                            seen.push(k);
                            fresh
                        })
                        .collect(),
                );
            }
        }
        v
    }

    fn gen_node(&self, node: &Value, path: &str, g: &mut Gen, depth: usize) -> Value {
        let Value::Object(m) = node else {
            return any_json(g);
        };
        if depth > 12 {
            return Value::Null;
        }
        if let Some(r) = m.get("$ref").and_then(Value::as_str) {
            let pointer = r.trim_start_matches('#');
            let target = self.root.pointer(pointer).expect("ref resolves");
            let mut merged = target.clone();
            if let Value::Object(t) = &mut merged {
                for (k, v) in m {
                    if k != "$ref" {
                        t.insert(k.clone(), v.clone());
                    }
                }
            }
            return self.gen(&merged, pointer, g, depth + 1);
        }
        if let Some(c) = m.get("const") {
            return c.clone();
        }
        if let Some(Value::Array(e)) = m.get("enum") {
            let forbidden = m.get("not").and_then(|n| n.get("enum"));
            return e[g.below(e.len())].clone().pipe(|v| {
                if forbidden.is_some_and(|f| f.as_array().is_some_and(|f| f.contains(&v))) {
                    e[0].clone()
                } else {
                    v
                }
            });
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(alts)) = m.get(key) {
                let i = g.below(alts.len());
                let constraint_only = alts[i].as_object().is_some_and(|a| {
                    !a.is_empty()
                        && a.keys().all(|k| {
                            [
                                "required",
                                "not",
                                "minProperties",
                                "maxProperties",
                                "description",
                            ]
                            .contains(&k.as_str())
                        })
                });
                if constraint_only {
                    // `anyOf: [{"required": [...]}, ...]` (noted in the description): the node
                    // itself, with one alternative's names required too.
                    let mut node = m.clone();
                    node.remove(key);
                    let mut required: Vec<Value> = node
                        .get("required")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default();
                    for n in alts[i]
                        .get("required")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        if !required.contains(n) {
                            required.push(n.clone());
                        }
                    }
                    node.insert("required".to_owned(), Value::Array(required));
                    return self.gen_node(&Value::Object(node), path, g, depth + 1);
                }
                let mut alt = alts[i].clone();
                if let Value::Object(a) = &mut alt {
                    for (k, v) in m {
                        if !["anyOf", "oneOf", "description", "title"].contains(&k.as_str())
                            && !a.contains_key(k)
                        {
                            a.insert(k.clone(), v.clone());
                        }
                    }
                }
                return self.gen(&alt, &format!("{path}/{key}/{i}"), g, depth + 1);
            }
        }
        if let Some(Value::Array(all)) = m.get("allOf") {
            let mut merged = m.clone();
            merged.remove("allOf");
            for item in all {
                let item = match item.get("$ref").and_then(Value::as_str) {
                    Some(r) => self
                        .root
                        .pointer(r.trim_start_matches('#'))
                        .cloned()
                        .unwrap_or_default(),
                    None => item.clone(),
                };
                for (k, v) in item.as_object().into_iter().flatten() {
                    match (merged.get_mut(k), v) {
                        (Some(Value::Object(a)), Value::Object(b)) => {
                            for (bk, bv) in b {
                                a.entry(bk.clone()).or_insert(bv.clone());
                            }
                        }
                        (Some(Value::Array(a)), Value::Array(b)) if k == "required" => {
                            a.extend(b.iter().cloned());
                        }
                        (Some(_), _) => {}
                        (None, _) => {
                            merged.insert(k.clone(), v.clone());
                        }
                    }
                }
            }
            return self.gen_node(&Value::Object(merged), path, g, depth + 1);
        }
        let types: Vec<String> = match m.get("type") {
            Some(Value::String(t)) => vec![t.clone()],
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => {
                let implied = if m.contains_key("properties")
                    || m.contains_key("additionalProperties")
                    || m.contains_key("patternProperties")
                {
                    "object"
                } else if m.contains_key("items") || m.contains_key("prefixItems") {
                    "array"
                } else if m.contains_key("pattern") || m.contains_key("format") {
                    "string"
                } else if m.contains_key("minimum") || m.contains_key("maximum") {
                    "number"
                } else {
                    return any_json(g);
                };
                vec![implied.to_owned()]
            }
        };
        let nullable = m.get("nullable") == Some(&json!(true));
        let mut t = types[g.below(types.len())].as_str();
        if types.len() > 1 && t == "null" && g.chance(50) {
            t = types
                .iter()
                .find(|t| *t != "null")
                .map(String::as_str)
                .unwrap_or("null");
        }
        if nullable && g.chance(25) {
            return Value::Null;
        }
        match t {
            "null" => Value::Null,
            "boolean" => json!(g.chance(50)),
            "integer" | "number" => number(m, t == "integer", g),
            "string" => self.string(m, g),
            "array" => {
                let min = m.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
                let max = m
                    .get("maxItems")
                    .and_then(Value::as_u64)
                    .map_or(min + 3, |x| x as usize);
                // Deep down, only what is required: recursive schemas end.
                let spread = if depth > 6 {
                    0
                } else {
                    max.saturating_sub(min).min(3)
                };
                let len = min + g.below(spread + 1);
                let mut items = Vec::new();
                if let Some(Value::Array(prefix)) = m.get("prefixItems") {
                    for (i, p) in prefix.iter().enumerate() {
                        items.push(self.gen(p, &format!("{path}/prefixItems/{i}"), g, depth + 1));
                    }
                    return Value::Array(items);
                }
                for _ in 0..len {
                    items.push(match m.get("items") {
                        Some(item) => self.gen(item, &format!("{path}/items"), g, depth + 1),
                        None => any_json(g),
                    });
                }
                if m.get("uniqueItems") == Some(&json!(true)) {
                    let mut seen = Vec::new();
                    items.retain(|v| {
                        let fresh = !seen.contains(v);
                        seen.push(v.clone());
                        fresh
                    });
                }
                Value::Array(items)
            }
            _ => self.object(m, path, g, depth),
        }
    }

    fn string(&self, m: &Map<String, Value>, g: &mut Gen) -> Value {
        if let Some(f) = m.get("format").and_then(Value::as_str) {
            if let Some(v) = format_value(f, g) {
                return v;
            }
        }
        if let Some(p) = m.get("pattern").and_then(Value::as_str) {
            if let Some(s) = g.regex(p) {
                return json!(s);
            }
        }
        let min = m.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
        let max = m
            .get("maxLength")
            .and_then(Value::as_u64)
            .map_or(min + 12, |x| x as usize);
        let len = min + g.below(max.saturating_sub(min).min(12) + 1);
        json!((0..len)
            .map(|i| (b'a' + ((i + g.below(26)) % 26) as u8) as char)
            .collect::<String>())
    }

    fn object(&self, m: &Map<String, Value>, path: &str, g: &mut Gen, depth: usize) -> Value {
        let mut out = Map::new();
        let required: Vec<&str> = m
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if let Some(Value::Object(props)) = m.get("properties") {
            for (name, p) in props {
                // Converted (strict) schemas list every property as required; original ones
                // get their optional properties half of the time.
                if required.contains(&name.as_str()) || (depth <= 6 && g.chance(50)) {
                    let v = self.gen(p, &format!("{path}/properties/{name}"), g, depth + 1);
                    out.insert(name.clone(), v);
                }
            }
        }
        for name in required {
            if !out.contains_key(name) {
                out.insert(name.to_owned(), any_json(g));
            }
        }
        if self.downgrades.is_some() {
            return Value::Object(out);
        }
        if let Some(Value::Object(patterns)) = m.get("patternProperties") {
            for (pattern, p) in patterns {
                for _ in 0..g.below(if depth > 6 { 0 } else { 3 }) {
                    if let Some(k) = g.regex(pattern) {
                        let v = self.gen(p, "", g, depth + 1);
                        out.insert(k, v);
                    }
                }
            }
        } else {
            match m.get("additionalProperties") {
                Some(Value::Bool(false)) => {}
                Some(extra @ Value::Object(_)) => {
                    for i in 0..g.below(if depth > 6 { 0 } else { 3 }) {
                        let v = self.gen(extra, "", g, depth + 1);
                        out.insert(format!("key{i}"), v);
                    }
                }
                _ if !m.contains_key("properties") => {
                    for i in 0..g.below(3) {
                        out.insert(format!("field{i}"), any_json(g));
                    }
                }
                _ => {}
            }
        }
        Value::Object(out)
    }
}

trait Pipe: Sized {
    fn pipe<T>(self, f: impl FnOnce(Self) -> T) -> T {
        f(self)
    }
}
impl Pipe for Value {}

fn number(m: &Map<String, Value>, integer: bool, g: &mut Gen) -> Value {
    let f = |k: &str| m.get(k).and_then(Value::as_f64);
    let mut lo = f("minimum").unwrap_or(-50.0);
    let mut hi = f("maximum").unwrap_or(lo.max(0.0) + 100.0);
    if let Some(x) = f("exclusiveMinimum") {
        lo = lo.max(x + 1.0);
    }
    if let Some(x) = f("exclusiveMaximum") {
        hi = hi.min(x - 1.0);
    }
    let lo_i = lo.ceil() as i64;
    let hi_i = (hi.floor() as i64).max(lo_i);
    let span = (hi_i - lo_i) as u64 + 1;
    let n = lo_i + (g.next() % span) as i64;
    if integer || g.chance(50) {
        json!(n)
    } else {
        let x = n as f64 + 0.5;
        if x <= hi {
            json!(x)
        } else {
            json!(n)
        }
    }
}

fn any_json(g: &mut Gen) -> Value {
    match g.below(7) {
        0 => json!(42),
        1 => json!("text"),
        2 => json!(true),
        3 => Value::Null,
        4 => json!({"k": "v", "n": [1, 2]}),
        5 => json!([1, "two", {"three": 3}]),
        _ => json!(-1.5),
    }
}

// ---------------------------------------------------------------- the measurement

#[derive(Default)]
struct Tally {
    simple: (usize, usize),
    hard: (usize, usize),
    hard_without_downgrades: usize,
    outputs: usize,
    rule_breaking: usize,
    samples: usize,
    converted_invalid: usize,
    sound: usize,
    downgrades: BTreeMap<DowngradeKind, usize>,
    failures: Vec<String>,
}

fn measure(format: Format, opts: ExportOptions) -> Tally {
    let mut t = Tally::default();
    for (n, e) in corpus().iter().enumerate() {
        let original_validator = tool_core::schema::compile(&e.schema)
            .unwrap_or_else(|err| panic!("{}: the original schema does not compile: {err}", e.id));
        if e.hard {
            // The registry's own export, which downgrades nothing, for comparison.
            let without = tool_core::ToolDef::builder(&e.name)
                .description(&e.description)
                .input_schema(e.schema.clone())
                .handler(|_, _| async { "ok" })
                .build()
                .ok()
                .and_then(|d| match format {
                    Format::Gemini => gemini::parameters(d.decl()).ok(),
                    _ => openai::strict_schema(d.decl()).ok(),
                });
            if without.is_some() {
                t.hard_without_downgrades += 1;
            }
        }
        let class = if e.hard { &mut t.hard } else { &mut t.simple };
        class.0 += 1;
        let conv = match convert(&e.name, &e.description, &e.schema, format, opts) {
            Ok(c) => c,
            Err(err) => {
                assert_eq!(err.code(), "schema_not_expressible");
                assert!(!err.reason.is_empty());
                // The error names a place of the original schema.
                let at = err.path.rsplit_once('/').map_or("", |(p, _)| p);
                assert!(
                    e.schema.pointer(&err.path).is_some() || e.schema.pointer(at).is_some(),
                    "{}: error path `{}` is not in the schema: {err}",
                    e.id,
                    err.path
                );
                t.failures.push(format!("{}: {err}", e.id));
                continue;
            }
        };
        class.1 += 1;
        for d in &conv.downgrades {
            *t.downgrades.entry(d.kind).or_default() += 1;
        }
        t.outputs += 1;
        let rules = match format {
            Format::Gemini => gemini_violations(&conv.parameters),
            _ => openai_strict_violations(&conv.parameters),
        };
        if !rules.is_empty() {
            t.rule_breaking += 1;
            t.failures
                .push(format!("{}: dialect rules: {rules:?}", e.id));
        }
        let as_json_schema = match format {
            Format::Gemini => nullable_as_json_schema(&conv.parameters),
            _ => conv.parameters.clone(),
        };
        let converted_validator = tool_core::schema::compile(&as_json_schema)
            .unwrap_or_else(|err| panic!("{}: converted schema does not compile: {err}", e.id));
        let original_ok = |v: &Value| original_validator.is_valid(v);
        let converted_ok = |v: &Value| converted_validator.is_valid(v);
        let why = |v: &Value| {
            tool_core::schema::violations(&original_validator, v)
                .into_iter()
                .take(3)
                .map(|x| format!("{}: {}", x.path, x.message))
                .collect::<Vec<_>>()
        };
        sample_answers(e, &conv, &original_ok, &converted_ok, &why, n, &mut t);
    }
    t
}

fn sample_answers(
    e: &Entry,
    conv: &Conversion,
    original: &dyn Fn(&Value) -> bool,
    converted: &dyn Fn(&Value) -> bool,
    why: &dyn Fn(&Value) -> Vec<String>,
    n: usize,
    t: &mut Tally,
) {
    let mut by_path: BTreeMap<String, Vec<Downgrade>> = BTreeMap::new();
    for d in &conv.downgrades {
        by_path
            .entry(d.out_path.clone())
            .or_default()
            .push(d.clone());
    }
    let schema = Schema {
        root: &conv.parameters,
        downgrades: Some(&by_path),
        original_root: &conv.original,
    };
    let mut g = Gen::new(n as u64 + 1);
    for i in 0..SAMPLES {
        let answer = schema.gen(&conv.parameters, "", &mut g, 0);
        t.samples += 1;
        if !converted(&answer) {
            // The generator's own mistake, not the conversion's: counted apart.
            t.converted_invalid += 1;
            t.failures.push(format!(
                "{} sample {i}: generated answer invalid under the converted schema: {answer}",
                e.id
            ));
            continue;
        }
        let back = conv.map_back(&answer);
        if original(&back) {
            t.sound += 1;
        } else {
            let errs = why(&back);
            t.failures.push(format!(
                "{} sample {i}: mapped back answer invalid under the original: {back} ({errs:?})",
                e.id
            ));
        }
    }
}

fn pct(a: usize, b: usize) -> f64 {
    if b == 0 {
        100.0
    } else {
        100.0 * a as f64 / b as f64
    }
}

fn report(name: &str, t: &Tally) {
    eprintln!(
        "{name}: simple {}/{} ({:.1}%), hard {}/{} ({:.1}%) convert ({} without downgrades); \
         {} of {} outputs obey the \
         dialect rules ({:.1}%); {} of {} sampled answers map back valid ({:.1}%), {} generated \
         answers invalid under the converted schema; downgrades {:?}",
        t.simple.1,
        t.simple.0,
        pct(t.simple.1, t.simple.0),
        t.hard.1,
        t.hard.0,
        pct(t.hard.1, t.hard.0),
        t.hard_without_downgrades,
        t.outputs - t.rule_breaking,
        t.outputs,
        pct(t.outputs - t.rule_breaking, t.outputs),
        t.sound,
        t.samples - t.converted_invalid,
        pct(t.sound, t.samples - t.converted_invalid),
        t.converted_invalid,
        t.downgrades,
    );
    for f in &t.failures {
        eprintln!("  {f}");
    }
}

fn assert_targets(name: &str, t: &Tally) {
    report(name, t);
    assert!(t.simple.0 >= 80 && t.hard.0 >= 60, "corpus too small");
    assert_eq!(
        t.simple.1, t.simple.0,
        "{name}: every simple schema converts"
    );
    assert!(
        pct(t.hard.1, t.hard.0) >= 90.0,
        "{name}: < 90% of hard schemas convert"
    );
    assert!(
        pct(t.outputs - t.rule_breaking, t.outputs) >= 99.0,
        "{name}: < 99% of outputs obey the dialect rules"
    );
    assert!(
        pct(t.samples - t.converted_invalid, t.samples) >= 95.0,
        "{name}: the generator misses the converted schemas too often"
    );
    assert!(
        pct(t.sound, t.samples - t.converted_invalid) >= 99.0,
        "{name}: < 99% of mapped-back answers are valid under the original schema"
    );
}

#[test]
fn real_world_schemas_convert_to_openai_strict_soundly() {
    assert_targets("openai strict", &measure(Format::OpenAi, STRICT));
}

#[test]
fn real_world_schemas_convert_to_gemini_soundly() {
    assert_targets("gemini", &measure(Format::Gemini, LOOSE));
}
