//! `dump`: the tool list in a provider's format; with `--from FILE`, the tools of a third-party
//! list converted (see [`crate::schema::export::convert`]), every downgrade reported.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{json, Value};

use super::shared::CliError;
use crate::registry::Registry;
use crate::schema::canonical::canonical_bytes;
use crate::schema::export::convert::{convert, Conversion};
use crate::schema::export::{self, ExportOptions};

/// Arguments of `dump`.
#[derive(Debug, clap::Args)]
pub(super) struct DumpArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Canonical)]
    format: Format,
    /// OpenAI strict mode (structured outputs); only with `--format openai`.
    #[arg(long)]
    strict: bool,
    /// Write to this file instead of stdout.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Convert the tools in this file instead of the registry's: an MCP `tools/list` result
    /// (`{"tools": [{name, description, inputSchema}]}`, or the whole JSON-RPC response), one
    /// input schema, or an array of input schemas. Downgrades are listed on stderr.
    #[arg(long, value_name = "FILE")]
    from: Option<PathBuf>,
    /// With `--from`: also write the downgrade report as JSON to this file.
    #[arg(long, value_name = "FILE", requires = "from")]
    report: Option<PathBuf>,
}

impl DumpArgs {
    /// Whether the command reads the tool registry (not with `--from`).
    pub(super) fn needs_registry(&self) -> bool {
        self.from.is_none()
    }
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Format {
    /// The canonical dump, the bytes that get pinned.
    Canonical,
    /// OpenAI Chat Completions `tools`.
    Openai,
    /// Anthropic Messages API `tools`.
    Anthropic,
    /// Gemini `functionDeclarations`.
    Gemini,
    /// MCP `tools/list` result.
    Mcp,
}

impl From<Format> for export::Format {
    fn from(f: Format) -> Self {
        match f {
            Format::Canonical => export::Format::Canonical,
            Format::Openai => export::Format::OpenAi,
            Format::Anthropic => export::Format::Anthropic,
            Format::Gemini => export::Format::Gemini,
            Format::Mcp => export::Format::Mcp,
        }
    }
}

pub(super) fn run(registry: Option<&Registry>, args: &DumpArgs) -> Result<ExitCode, CliError> {
    let format = export::Format::from(args.format);
    if args.strict && format != export::Format::OpenAi {
        return Err(CliError(format!(
            "--strict applies to --format openai only, not {format}"
        )));
    }
    if let Some(from) = &args.from {
        return run_from(from, format, args);
    }
    let registry =
        registry.ok_or_else(|| CliError("this command needs the tool registry".into()))?;
    let bytes = export::export(
        registry,
        format,
        ExportOptions {
            strict: args.strict,
        },
    )
    .map_err(|e| CliError(format!("[{}] {e}", e.code())))?;
    match &args.out {
        Some(path) => std::fs::write(path, &bytes)
            .map_err(|e| CliError(format!("cannot write {}: {e}", path.display())))?,
        None => std::io::stdout().lock().write_all(&bytes)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Most tools one `--from` file may hold.
const MAX_TOOLS: usize = 10_000;

/// A tool read from a `--from` file.
struct Foreign {
    name: String,
    description: String,
    schema: Value,
}

fn run_from(from: &Path, format: export::Format, args: &DumpArgs) -> Result<ExitCode, CliError> {
    if format == export::Format::Canonical {
        return Err(CliError(
            "--from needs a provider format (--format openai, anthropic, gemini or mcp): \
             the canonical dump is the registry's own"
                .into(),
        ));
    }
    let text = std::fs::read_to_string(from)
        .map_err(|e| CliError(format!("cannot read {}: {e}", from.display())))?;
    let doc: Value = serde_json::from_str(&text)
        .map_err(|e| CliError(format!("{}: not JSON: {e}", from.display())))?;
    let tools = read_tools(doc).map_err(|e| CliError(format!("{}: {e}", from.display())))?;
    let opts = ExportOptions {
        strict: args.strict,
    };
    let mut conversions = Vec::with_capacity(tools.len());
    let mut errors = Vec::new();
    for t in &tools {
        match convert(&t.name, &t.description, &t.schema, format, opts) {
            Ok(c) => conversions.push(c),
            Err(e) => errors.push(format!("[{}] {e}", e.code())),
        }
    }
    if !errors.is_empty() {
        return Err(CliError(format!(
            "{} of {} tools cannot be converted, nothing written:\n  {}",
            errors.len(),
            tools.len(),
            errors.join("\n  ")
        )));
    }
    let mut stderr = std::io::stderr().lock();
    for c in &conversions {
        for d in &c.downgrades {
            writeln!(
                stderr,
                "downgrade: tool `{}`: at `{}` (converted `{}`): {}: {}",
                c.name, d.path, d.out_path, d.kind, d.detail
            )?;
        }
    }
    let listed: Vec<Value> = conversions.iter().map(|c| c.tool.clone()).collect();
    let out = match format {
        export::Format::Gemini => json!({ "functionDeclarations": listed }),
        export::Format::Mcp => json!({ "tools": listed }),
        _ => Value::Array(listed),
    };
    if let Some(path) = &args.report {
        let report = report_value(format, opts, &conversions);
        std::fs::write(path, canonical_bytes(&report))
            .map_err(|e| CliError(format!("cannot write {}: {e}", path.display())))?;
    }
    let bytes = canonical_bytes(&out);
    match &args.out {
        Some(path) => std::fs::write(path, &bytes)
            .map_err(|e| CliError(format!("cannot write {}: {e}", path.display())))?,
        None => std::io::stdout().lock().write_all(&bytes)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The downgrade report: per tool, every downgrade and whether answers need the map back.
fn report_value(format: export::Format, opts: ExportOptions, conversions: &[Conversion]) -> Value {
    let tools: Vec<Value> = conversions
        .iter()
        .map(|c| {
            json!({
                "name": c.name,
                "needs_map_back": c.needs_map_back(),
                "downgrades": c.downgrades,
            })
        })
        .collect();
    json!({"format": format.as_str(), "strict": opts.strict, "tools": tools})
}

/// The tools of a `--from` document (see [`DumpArgs`]).
fn read_tools(doc: Value) -> Result<Vec<Foreign>, String> {
    let doc = match doc {
        Value::Object(mut m) if m.contains_key("jsonrpc") => {
            if let Some(e) = m.get("error") {
                return Err(format!("a JSON-RPC error response, not a tool list: {e}"));
            }
            m.remove("result")
                .ok_or("a JSON-RPC message without `result`")?
        }
        other => other,
    };
    let tools = match doc {
        Value::Object(mut m) if m.contains_key("tools") => {
            let Some(Value::Array(list)) = m.remove("tools") else {
                return Err("`tools` is not an array".into());
            };
            list.into_iter()
                .enumerate()
                .map(|(i, t)| mcp_tool(i, t))
                .collect::<Result<Vec<_>, _>>()?
        }
        Value::Array(list) => list
            .into_iter()
            .enumerate()
            .map(|(i, s)| raw_schema(&format!("schema_{}", i + 1), &format!("/{i}"), s))
            .collect::<Result<Vec<_>, _>>()?,
        schema @ Value::Object(_) => vec![raw_schema("schema", "", schema)?],
        other => {
            return Err(format!(
                "expected a tools/list result, a schema or an array of schemas, not {}",
                kind(&other)
            ))
        }
    };
    if tools.len() > MAX_TOOLS {
        return Err(format!("more than {MAX_TOOLS} tools"));
    }
    let mut seen = BTreeSet::new();
    for t in &tools {
        if !seen.insert(t.name.as_str()) {
            return Err(format!("tool `{}` is listed twice", t.name));
        }
    }
    Ok(tools)
}

fn mcp_tool(i: usize, t: Value) -> Result<Foreign, String> {
    let Value::Object(mut m) = t else {
        return Err(format!(
            "/tools/{i}: a tool is a JSON object, not {}",
            kind(&t)
        ));
    };
    let name = match m.remove("name") {
        Some(Value::String(n)) => n,
        _ => return Err(format!("/tools/{i}/name: missing or not a string")),
    };
    check_name(&name).map_err(|e| format!("/tools/{i}/name: {e}"))?;
    let description = match m.remove("description") {
        Some(Value::String(d)) => d,
        None | Some(Value::Null) => String::new(),
        Some(_) => return Err(format!("/tools/{i}/description: not a string")),
    };
    let schema = match m.remove("inputSchema") {
        Some(s @ Value::Object(_)) => s,
        Some(other) => {
            return Err(format!(
                "/tools/{i}/inputSchema: a schema object is needed, not {}",
                kind(&other)
            ))
        }
        None => return Err(format!("/tools/{i}: tool `{name}` has no `inputSchema`")),
    };
    Ok(Foreign {
        name,
        description,
        schema,
    })
}

fn raw_schema(name: &str, at: &str, schema: Value) -> Result<Foreign, String> {
    if !schema.is_object() {
        return Err(format!(
            "{at}: a schema object is needed, not {}",
            kind(&schema)
        ));
    }
    let description = schema
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    Ok(Foreign {
        name: name.to_owned(),
        description,
        schema,
    })
}

/// Provider tool names: 1 to 64 of `A-Z a-z 0-9 _ - .`.
fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "tool name {name:?} is not 1 to 64 letters, digits, `_`, `-` or `.`"
        ))
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
