//! Example tools: file access inside the workspace, scripts, an offline weather demo and a memory
//! tool that changes the session context.
//!
//! Their names, parameters and risks are a contract: the demo, the pinned schema and the tests rely
//! on them.

use serde::{Deserialize, Serialize};
use tool_core::guard::workspace::{FileKind, WorkspaceFsError};
use tool_core::outcome::ToolError;
use tool_core::registry::RegistryError;
use tool_core::{tool, ContextModifier, Modified, Registry, ToolContext, WorkspacePath};

pub mod agent_loop;
pub mod demo;
mod limits;
pub mod media;

pub use limits::{ByteLimit, FileContent, MAX_FILE_BYTES, MAX_FILE_CHARS};

/// Every Rust block of the README, compiled (and, unless `no_run`, run) as a doctest so it
/// stays true. Here rather than in `tool-core`: this crate has every feature of `tool-core` on
/// and the example tools the README names.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// Longest value `remember` keeps, in characters: the session state is sent back to the model
/// and copied into every later call's context, so it stays small.
pub const MAX_MEMORY_CHARS: usize = 4096;

/// The registry of the example tools (and only them).
pub fn registry() -> Result<Registry, RegistryError> {
    Registry::builder()
        .with_inventory_where(|module| {
            module == "tool_examples" || module.starts_with("tool_examples::")
        })
        .build()
}

/// List the entries of a directory in the workspace.
///
/// Directories end with `/`; entries are sorted by name.
///
/// # Arguments
/// * `path` - the directory, relative to the workspace
#[tool(risk = "read_only", path_args = ["path"], concurrency_safe, idempotent)]
pub fn list_dir(path: WorkspacePath) -> Result<String, ToolError> {
    let mut names: Vec<String> = path
        .read_dir()?
        .iter()
        .map(|entry| {
            let mut name = entry.name().to_string_lossy().into_owned();
            if entry.kind() == FileKind::Dir {
                name.push('/');
            }
            name
        })
        .collect();
    names.sort();
    Ok(names.join("\n"))
}

/// Read a text file from the workspace.
///
/// Invalid UTF-8 is replaced; at most `max_bytes` bytes are read.
///
/// # Arguments
/// * `path` - the file, relative to the workspace
/// * `max_bytes` - read at most this many bytes (1 to 65536)
#[tool(risk = "read_only", path_args = ["path"], concurrency_safe, idempotent)]
pub fn read_file(path: WorkspacePath, max_bytes: ByteLimit) -> Result<String, ToolError> {
    // Regular files with one link only: FIFOs, devices and hard links are refused unread.
    let bytes = path.read(max_bytes.get() as usize)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// What a write left behind, recorded in the session's file history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    /// Bytes written.
    pub bytes: usize,
    /// The operation: `write`, `move` or `delete`.
    pub op: String,
}

fn history_key(path: &WorkspacePath) -> String {
    format!("file_history/{}", path.relative().display())
}

/// Write a text file in the workspace, replacing it if it exists.
///
/// Parent directories are created. The file is written to a temporary name and renamed, so a
/// failed write never leaves a half-written file.
///
/// # Arguments
/// * `path` - the file, relative to the workspace
/// * `content` - the text to write (at most 65536 characters)
#[tool(risk = "mutation", path_args = ["path"])]
pub fn write_file(
    path: WorkspacePath,
    content: FileContent,
) -> Result<Modified<String>, ToolError> {
    let content = content.into_string();
    path.create_parent_dirs()?;
    // The temporary file is made by the workspace handle under a name nobody chooses.
    path.write_atomic(content.as_bytes())?;
    let record = FileRecord {
        bytes: content.len(),
        op: "write".into(),
    };
    let modifier = ContextModifier::new().with(history_key(&path), &record);
    Ok(Modified::new(
        format!("wrote {} bytes", content.len()),
        modifier,
    ))
}

/// Move a file inside the workspace. Refuses to overwrite an existing destination.
///
/// The source is never lost: if the move fails, it stays where it was.
///
/// # Arguments
/// * `source` - the file to move, relative to the workspace
/// * `destination` - where to move it, relative to the workspace
#[tool(risk = "mutation", path_args = ["source", "destination"])]
pub fn move_file(
    source: WorkspacePath,
    destination: WorkspacePath,
) -> Result<Modified<String>, String> {
    let from = source.relative().display().to_string();
    let to = destination.relative().display().to_string();
    match source.metadata() {
        Ok(m) if m.kind() == FileKind::File => {}
        Ok(_) => return Err(format!("source is not a file: {from}")),
        Err(e) => return Err(e.to_string()),
    }
    destination
        .create_parent_dirs()
        .map_err(|e| e.to_string())?;
    // One step: the move itself refuses an existing destination, so nothing is overwritten.
    source.rename_to(&destination).map_err(|e| match e {
        WorkspaceFsError::AlreadyExists { .. } => {
            format!("destination exists, not overwriting: {to}")
        }
        e => format!("move failed: {e}"),
    })?;
    let bytes = destination
        .metadata()
        .map(|m| m.len() as usize)
        .unwrap_or(0);
    let modifier = ContextModifier::new()
        .with(
            history_key(&source),
            FileRecord {
                bytes: 0,
                op: "move".into(),
            },
        )
        .with(
            history_key(&destination),
            FileRecord {
                bytes,
                op: "write".into(),
            },
        );
    Ok(Modified::new(format!("moved {from} to {to}"), modifier))
}

/// Delete one file from the workspace (never a directory).
///
/// # Arguments
/// * `path` - the file, relative to the workspace
#[tool(risk = "destructive", path_args = ["path"])]
pub fn delete_file(path: WorkspacePath) -> Result<Modified<String>, String> {
    let name = path.relative().display().to_string();
    match path.symlink_metadata() {
        Ok(m) if m.kind() == FileKind::Dir => return Err(format!("not a file: {name}")),
        Ok(_) => {}
        Err(e) => return Err(e.to_string()),
    }
    path.remove_file().map_err(|e| e.to_string())?;
    let modifier = ContextModifier::new().with(
        history_key(&path),
        FileRecord {
            bytes: 0,
            op: "delete".into(),
        },
    );
    Ok(Modified::new(format!("deleted {name}"), modifier))
}

/// Run a bash command in the workspace and return its output.
///
/// The command is scanned before it runs; stdout and stderr are returned, cut at 64 KiB each.
///
/// # Arguments
/// * `command` - the bash command or script
/// * `cwd` - the working directory, relative to the workspace (default: the workspace)
/// * `timeout_secs` - stop the command after this many seconds (default 30, at most 120)
#[tool(
    risk = "dangerous",
    script_args = ["command"],
    script_lang = "bash",
    path_args = ["cwd"],
    cwd_arg = "cwd",
    timeout_arg = "timeout_secs",
    timeout = "125s"
)]
pub async fn run_bash(
    ctx: &ToolContext,
    command: String,
    cwd: Option<WorkspacePath>,
    #[schemars(range(min = 1, max = 120))] timeout_secs: Option<u64>,
) -> Result<String, String> {
    let mut cmd = ctx.command("bash").args(["-c", &command]);
    if let Some(dir) = &cwd {
        cmd = cmd.cwd(dir);
    }
    run_script(cmd, timeout_secs).await
}

/// Run a Python 3 program in the workspace and return its output.
///
/// The code is scanned before it runs; stdout and stderr are returned, cut at 64 KiB each.
///
/// # Arguments
/// * `code` - the Python source
/// * `timeout_secs` - stop the program after this many seconds (default 30, at most 120)
#[tool(
    risk = "dangerous",
    script_args = ["code"],
    script_lang = "python",
    timeout_arg = "timeout_secs",
    timeout = "125s"
)]
pub async fn run_python(
    ctx: &ToolContext,
    code: String,
    #[schemars(range(min = 1, max = 120))] timeout_secs: Option<u64>,
) -> Result<String, String> {
    let cmd = ctx.command("python3").args(["-I", "-"]).stdin(code);
    run_script(cmd, timeout_secs).await
}

const DEFAULT_TIMEOUT_SECS: u64 = 30;
const MAX_TIMEOUT_SECS: u64 = 120;

/// Run a script tool's program confined (see `tool_core::process`): its report, or an error with
/// the exit status. A timeout or cancellation fails the call with `timeout` / `cancelled`.
async fn run_script(
    cmd: tool_core::process::Command,
    timeout_secs: Option<u64>,
) -> Result<String, String> {
    let secs = timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS);
    if secs == 0 || secs > MAX_TIMEOUT_SECS {
        return Err(format!(
            "timeout_secs must be between 1 and {MAX_TIMEOUT_SECS}"
        ));
    }
    let out = cmd
        .timeout(std::time::Duration::from_secs(secs))
        .output()
        .await?;
    if out.success() {
        Ok(out.report())
    } else {
        Err(format!("exit status {}\n{}", out.exit_code, out.report()))
    }
}

/// A temperature unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TempUnit {
    /// Degrees Celsius.
    Celsius,
    /// Degrees Fahrenheit.
    Fahrenheit,
}

/// Get today's weather for a city (offline demo data, deterministic per city).
///
/// This is a demonstration tool: it does not contact any service; the same city always gives the
/// same answer.
///
/// # Arguments
/// * `city` - the city name, e.g. "Lisbon"
/// * `unit` - the temperature unit
#[tool(risk = "safe", open_world, concurrency_safe, idempotent)]
pub fn get_weather(city: String, unit: TempUnit) -> Result<String, String> {
    let city = city.trim();
    if city.is_empty() || city.len() > 100 {
        return Err("city must be 1 to 100 bytes".into());
    }
    // FNV-1a: a stable hash, so the demo data never changes between runs or platforms.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in city.to_lowercase().bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let celsius = (h % 40) as i64 - 5;
    const SKIES: [&str; 4] = ["sunny", "cloudy", "rain", "windy"];
    let sky = SKIES[((h >> 8) % 4) as usize];
    let (t, u) = match unit {
        TempUnit::Celsius => (celsius, "°C"),
        TempUnit::Fahrenheit => (celsius * 9 / 5 + 32, "°F"),
    };
    Ok(format!("{city}: {sky}, {t}{u} (demo data)"))
}

/// Remember a value for the rest of the session under a key.
///
/// The value is stored in the session context as `memory/<key>`; later calls see it.
///
/// # Arguments
/// * `key` - a short name, letters, digits, `_` and `-` only
/// * `value` - the text to remember
#[tool(risk = "mutation", idempotent)]
pub fn remember(
    key: String,
    #[schemars(length(max = MAX_MEMORY_CHARS))] value: String,
) -> Result<(String, ContextModifier), String> {
    if key.is_empty()
        || key.len() > 64
        || !key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err("key must be 1 to 64 letters, digits, `_` or `-`".into());
    }
    // The schema refused longer values already (it counts characters, as this does).
    if value.chars().count() > MAX_MEMORY_CHARS {
        return Err(format!(
            "value must be at most {MAX_MEMORY_CHARS} characters"
        ));
    }
    let modifier = ContextModifier::new().with(format!("memory/{key}"), &value);
    Ok((format!("remembered `{key}`"), modifier))
}
