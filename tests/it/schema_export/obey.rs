//! Every export obeys its dialect: each provider's documented rules ([`super::rules`]) checked on
//! every export of the registries' tools (the stress set, the set shaped like the example tools,
//! `tool-examples`' own registry) and on every conversion of the real-world corpus
//! (`dump --from`). A refused conversion (an error naming the place) is counted apart; of what is
//! produced, every output must obey.
//!
//! Run with `--nocapture` to see the figures per dialect (they go to BENCHMARKS.md).

use serde_json::Value;
use tool_core::decl::ToolDecl;
use tool_core::schema::export::convert::convert;
use tool_core::schema::export::{self, gemini, mcp, openai, ExportOptions, Format};
use tool_core::Registry;

use super::rules::{gemini_violations, object_root_violations, openai_strict_violations};
use super::{examples, stress};

const CORPUS: &str = include_str!("../../fixtures/export/real_world/schemas.jsonl");

/// The dialects with a rule checker, as (name, format, options).
const DIALECTS: [(&str, Format, bool); 4] = [
    ("openai-strict", Format::OpenAi, true),
    ("gemini", Format::Gemini, false),
    ("anthropic", Format::Anthropic, false),
    ("mcp", Format::Mcp, false),
];

#[derive(Default, Debug)]
struct Tally {
    inputs: usize,
    refused: usize,
    outputs: usize,
    obeying: usize,
    broken: Vec<String>,
}

impl Tally {
    fn add(&mut self, id: &str, produced: Option<Vec<String>>) {
        self.inputs += 1;
        match produced {
            None => self.refused += 1,
            Some(v) => {
                self.outputs += 1;
                if v.is_empty() {
                    self.obeying += 1;
                } else {
                    self.broken.push(format!("{id}: {v:?}"));
                }
            }
        }
    }

    fn report(&self, what: &str, dialect: &str) {
        println!(
            "{what} {dialect}: {} inputs, {} refused with an error, {}/{} outputs obey the rules",
            self.inputs, self.refused, self.obeying, self.outputs
        );
        for b in self.broken.iter().take(5) {
            println!("  {b}");
        }
    }
}

fn check(format: Format, params: &Value) -> Vec<String> {
    match format {
        Format::OpenAi => openai_strict_violations(params),
        Format::Gemini => gemini_violations(params),
        _ => object_root_violations(params),
    }
}

/// The parameters schema of one tool exported in `format` by the registry's own export; `None`
/// when the export refuses it.
fn registry_export(decl: &ToolDecl, format: Format) -> Option<Value> {
    match format {
        Format::OpenAi => openai::tool(decl, ExportOptions { strict: true })
            .ok()
            .map(|t| t["function"]["parameters"].clone()),
        Format::Gemini => gemini::declaration(decl).ok().map(|d| {
            // A tool without arguments has no `parameters`, as the API asks.
            d.get("parameters")
                .cloned()
                .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}}))
        }),
        Format::Anthropic => Some(export::anthropic_tool(decl)["input_schema"].clone()),
        _ => Some(mcp::tool(decl)["inputSchema"].clone()),
    }
}

#[test]
fn every_registry_export_obeys_its_dialect() {
    let example_tools = tool_examples::registry().expect("the example registry");
    let registries: [(&str, Registry); 3] = [
        ("stress", stress()),
        ("example-shaped", examples()),
        ("tool-examples", example_tools),
    ];
    for (dialect, format, _) in DIALECTS {
        let mut t = Tally::default();
        for (set, registry) in &registries {
            for tool in registry.iter() {
                let decl = tool.decl();
                let out = registry_export(decl, format).map(|p| check(format, &p));
                t.add(&format!("{set}/{}", decl.name), out);
            }
        }
        t.report("registry exports", dialect);
        assert!(t.broken.is_empty(), "{dialect}: {:#?}", t.broken);
    }
}

#[test]
fn every_corpus_conversion_obeys_its_dialect() {
    for (dialect, format, strict) in DIALECTS {
        let mut t = Tally::default();
        for line in CORPUS.lines().filter(|l| !l.trim().is_empty()) {
            let e: Value = serde_json::from_str(line).expect("corpus line is JSON");
            let id = e["id"].as_str().expect("id");
            let conv = convert(
                e["name"].as_str().expect("name"),
                e["description"].as_str().expect("description"),
                &e["inputSchema"],
                format,
                ExportOptions { strict },
            );
            t.add(id, conv.ok().map(|c| check(format, &c.parameters)));
        }
        t.report("corpus conversions", dialect);
        // At least 99% of what is produced obeys; every refusal is an error naming the place.
        assert!(
            t.obeying * 100 >= t.outputs * 99,
            "{dialect}: {:#?}",
            t.broken
        );
    }
}
