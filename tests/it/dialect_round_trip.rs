//! What we export, we accept: for every example tool and every dialect we export, arguments valid
//! against the exported dialect schema (strict OpenAI's `null` for each optional argument left
//! out, Gemini's, Anthropic's and MCP's as they are) are mapped back by the executor, accepted, and
//! reach the handler as the same values as the canonical form of the call.
//!
//! The tools are the `tool-examples` registry's declarations, each with a handler that answers
//! the arguments it sees, so the comparison is of exactly what a handler receives.

use std::sync::Arc;

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use tool_core::decl::ToolDecl;
use tool_core::executor::{CallOptions, CallStatus, Executor, ExecutorConfig};
use tool_core::schema::export::{gemini, openai, Dialect};
use tool_core::{Registry, Risk, ToolDef};

use crate::schema_export::rules::nullable_as_json_schema;

/// Cases per dialect and tool (each case one call through two executors).
const CASES: u32 = 24;

fn echo_registry() -> (Arc<Registry>, Vec<ToolDecl>) {
    let examples = tool_examples::registry().expect("the example registry");
    let decls: Vec<ToolDecl> = examples.iter().map(|t| t.decl().clone()).collect();
    let mut b = Registry::builder();
    for d in &decls {
        let def = ToolDef::builder(&d.name)
            .description(&d.description)
            .input_schema(d.input_schema.value().clone())
            .risk(Risk::Safe)
            .handler(|_, args: Value| async move { args })
            .build()
            .expect("an echo tool of the example's schema");
        b = b.tool(def);
    }
    (Arc::new(b.build().expect("echo registry")), decls)
}

/// A small generator of values valid under a canonical schema, driven by proptest's seed.
struct Gen<'a> {
    root: &'a Value,
    state: u64,
}

impl<'a> Gen<'a> {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn resolve<'s>(&self, node: &'s Value) -> &'s Value
    where
        'a: 's,
    {
        match node.get("$ref").and_then(Value::as_str) {
            Some(r) => self
                .root
                .pointer(r.trim_start_matches('#'))
                .expect("local $ref resolves"),
            None => node,
        }
    }

    fn value(&mut self, node: &Value, name: &str, depth: usize) -> Value {
        let node = self.resolve(node);
        if let Some(Value::Array(alts)) = node.get("anyOf").or_else(|| node.get("oneOf")) {
            let pick = &alts[self.below(alts.len() as u64) as usize];
            return self.value(pick, name, depth);
        }
        if let Some(Value::Array(e)) = node.get("enum") {
            return e[self.below(e.len() as u64) as usize].clone();
        }
        if let Some(c) = node.get("const") {
            return c.clone();
        }
        let ty = match node.get("type") {
            Some(Value::Array(ts)) => ts[self.below(ts.len() as u64) as usize].clone(),
            Some(t) => t.clone(),
            None => json!("string"),
        };
        let num = |k: &str| node.get(k).and_then(Value::as_f64);
        match ty.as_str().unwrap_or("string") {
            "null" => Value::Null,
            "boolean" => json!(self.below(2) == 1),
            "integer" => {
                let lo = num("minimum").unwrap_or(0.0) as i64;
                let hi = num("maximum")
                    .map_or(lo + 1000, |h| h as i64)
                    .min(lo + 1000);
                json!(lo + self.below((hi - lo + 1) as u64) as i64)
            }
            "number" => json!(self.below(10_000) as f64 / 8.0),
            "array" if depth < 4 => {
                let items = node.get("items").cloned().unwrap_or(json!({}));
                let n = self.below(4);
                json!((0..n)
                    .map(|_| self.value(&items, name, depth + 1))
                    .collect::<Vec<_>>())
            }
            "object" if depth < 4 => self.object(node, depth + 1),
            "array" => json!([]),
            "object" => json!({}),
            _ if name.contains("path") || name == "source" || name == "destination" => {
                json!(format!("dir{}/file{}.txt", self.below(3), self.below(10)))
            }
            _ => {
                let len = 1 + self.below(8) as usize;
                let s: String = (0..len)
                    .map(|_| (b'a' + self.below(26) as u8) as char)
                    .collect();
                json!(s)
            }
        }
    }

    /// Required properties always, optional ones half the time.
    fn object(&mut self, node: &Value, depth: usize) -> Value {
        let required: Vec<&str> = node
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut out = Map::new();
        if let Some(Value::Object(props)) = node.get("properties") {
            for (name, p) in props {
                if required.contains(&name.as_str()) || self.below(2) == 1 {
                    out.insert(name.clone(), self.value(p, name, depth));
                }
            }
        }
        Value::Object(out)
    }
}

/// The strict OpenAI form of canonical arguments: every property the canonical schema lists and
/// the call leaves out is sent as `null`, at every level (strict mode requires them all).
pub(crate) fn with_strict_nulls(root: &Value, node: &Value, value: &mut Value) {
    let node = match node.get("$ref").and_then(Value::as_str) {
        Some(r) => root.pointer(r.trim_start_matches('#')).unwrap_or(node),
        None => node,
    };
    if let Some(Value::Array(alts)) = node.get("anyOf").or_else(|| node.get("oneOf")) {
        if value.is_object() {
            if let Some(alt) = alts.iter().find(|a| {
                let a = match a.get("$ref").and_then(Value::as_str) {
                    Some(r) => root.pointer(r.trim_start_matches('#')).unwrap_or(a),
                    None => a,
                };
                a.get("properties").is_some()
            }) {
                with_strict_nulls(root, alt, value);
            }
        }
        return;
    }
    match value {
        Value::Object(m) => {
            if let Some(Value::Object(props)) = node.get("properties") {
                for (name, p) in props {
                    match m.get_mut(name) {
                        Some(v) => with_strict_nulls(root, p, v),
                        None => {
                            m.insert(name.clone(), Value::Null);
                        }
                    }
                }
            }
        }
        Value::Array(a) => {
            if let Some(items) = node.get("items") {
                a.iter_mut().for_each(|v| with_strict_nulls(root, items, v));
            }
        }
        _ => {}
    }
}

/// What a typed handler (`Option<T>` fields) sees of the arguments: an optional property without
/// a `default` that is `null` is the same as one left out. Strict mode cannot tell the two apart
/// for a property that may be `null` (the model sends `null` for both), so the comparison is of
/// this view.
pub(crate) fn as_handler_sees(root: &Value, node: &Value, value: &mut Value) {
    let node = match node.get("$ref").and_then(Value::as_str) {
        Some(r) => root.pointer(r.trim_start_matches('#')).unwrap_or(node),
        None => node,
    };
    let Value::Object(m) = value else { return };
    let required: Vec<&str> = node
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(Value::Object(props)) = node.get("properties") {
        for (name, p) in props {
            let optional = !required.contains(&name.as_str()) && p.get("default").is_none();
            if optional && m.get(name).is_some_and(Value::is_null) {
                m.remove(name);
            } else if let Some(v) = m.get_mut(name) {
                as_handler_sees(root, p, v);
            }
        }
    }
}

pub(crate) async fn run(exec: &Executor, tool: &str, args: &Value) -> Result<Value, String> {
    let session = exec.new_session();
    let text = json!({"tool": tool, "args": args}).to_string();
    let r = exec.execute(&session, &text, CallOptions::default()).await;
    match (r.status, r.output) {
        (CallStatus::Ok, Some(out)) => Ok(out),
        (status, _) => Err(format!("{status:?}: {:?} {:?}", r.code, r.message)),
    }
}

/// The dialect's exported schema of a tool (as JSON Schema), or why the dialect refuses it.
pub(crate) fn export(dialect: Dialect, decl: &ToolDecl) -> Result<Value, String> {
    match dialect {
        Dialect::OpenAiStrict => openai::strict_schema(decl).map_err(|e| e.to_string()),
        Dialect::Gemini => gemini::parameters(decl)
            .map(|s| nullable_as_json_schema(&s))
            .map_err(|e| e.to_string()),
        _ => {
            let mut schema = decl.input_schema.value().clone();
            if let Value::Object(m) = &mut schema {
                m.remove("$schema");
            }
            Ok(schema)
        }
    }
}

/// The dialect's form of canonical arguments: strict OpenAI sends `null` for what is left out.
pub(crate) fn dialect_args(dialect: Dialect, decl: &ToolDecl, canonical: &Value) -> Value {
    let mut args = canonical.clone();
    if dialect == Dialect::OpenAiStrict {
        with_strict_nulls(&decl.input_schema, &decl.input_schema, &mut args);
    }
    args
}

/// The dialect's form of canonical arguments, and the dialect's exported schema.
fn dialect_form(dialect: Dialect, decl: &ToolDecl, canonical: &Value) -> (Value, Value) {
    let exported = export(dialect, decl).unwrap_or_else(|e| panic!("{}: {e}", decl.name));
    (dialect_args(dialect, decl, canonical), exported)
}

#[test]
fn dialect_shaped_arguments_reach_the_handler_as_their_canonical_form() {
    let (registry, decls) = echo_registry();
    let ws = tempfile::tempdir().expect("tempdir");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let canonical_exec =
        Executor::new(registry.clone(), ExecutorConfig::new(ws.path())).expect("executor");
    let dialects = [
        Dialect::OpenAiStrict,
        Dialect::Gemini,
        Dialect::Anthropic,
        Dialect::Mcp,
    ];
    let mut checked = 0usize;
    for dialect in dialects {
        let exec = Executor::new(
            registry.clone(),
            ExecutorConfig::new(ws.path()).dialect(dialect),
        )
        .expect("executor");
        for decl in &decls {
            let (_, exported) = dialect_form(dialect, decl, &json!({}));
            let validator = tool_core::schema::compile(&exported).expect("the export compiles");
            let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
                cases: CASES,
                failure_persistence: None,
                ..ProptestConfig::default()
            });
            runner
                .run(&any::<u64>(), |seed| {
                    let mut g = Gen {
                        root: &decl.input_schema,
                        state: seed | 1,
                    };
                    let canonical = g.object(&decl.input_schema, 0);
                    let (args, _) = dialect_form(dialect, decl, &canonical);
                    prop_assert!(
                        validator.is_valid(&args),
                        "{} {}: {args} is not valid under the export {exported}",
                        dialect.as_str(),
                        decl.name
                    );
                    let root = &decl.input_schema;
                    let seen = |r: Result<Value, String>| {
                        r.map(|mut v| {
                            as_handler_sees(root, root, &mut v);
                            v
                        })
                    };
                    let want = seen(rt.block_on(run(&canonical_exec, &decl.name, &canonical)));
                    let got = seen(rt.block_on(run(&exec, &decl.name, &args)));
                    prop_assert!(
                        want.is_ok(),
                        "{}: canonical {canonical}: {want:?}",
                        decl.name
                    );
                    prop_assert_eq!(
                        got,
                        want,
                        "{} {}: {} against {}",
                        dialect.as_str(),
                        decl.name,
                        args,
                        canonical
                    );
                    Ok(())
                })
                .unwrap_or_else(|e| panic!("{e}"));
            checked += 1;
        }
    }
    assert_eq!(checked, 4 * decls.len());
}
