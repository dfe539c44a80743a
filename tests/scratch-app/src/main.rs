//! A notes application with six tools: a SQLite database outside the workspace, shared through
//! `State<Db>` and declared with `Grants`; a sync and an async tool; a workspace path tool; a
//! mutation that needs approval; a default with an integer range; a bash tool. Its command line
//! is tool-core's `Cli`, under `#[tokio::main]`, with the default sandbox (required).
//!
//! The database lives in the directory `SCRATCH_APP_DATA` names (created if missing), which must
//! lie outside the workspace.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tool_core::guard::workspace::WorkspaceFsError;
use tool_core::sandbox::Grants;
use tool_core::{tool, State, ToolContext, WorkspacePath};

/// The application's database: one connection shared by every call.
#[derive(Clone)]
struct Db {
    conn: Arc<Mutex<rusqlite::Connection>>,
}

impl Db {
    fn open(dir: &Path) -> rusqlite::Result<Db> {
        let conn = rusqlite::Connection::open(dir.join("notes.db"))?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)",
        )?;
        Ok(Db {
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, rusqlite::Connection>, String> {
        self.conn
            .lock()
            .map_err(|_| "the database lock is poisoned".to_owned())
    }
}

/// Add a note to the notes database.
///
/// # Arguments
/// * `text` - the note
#[tool(risk = "mutation")]
fn note_add(
    db: State<Db>,
    #[schemars(length(min = 1, max = 200))] text: String,
) -> Result<String, String> {
    let conn = db.lock()?;
    conn.execute("INSERT INTO notes (text) VALUES (?1)", [&text])
        .map_err(|e| e.to_string())?;
    Ok(format!("note {} added", conn.last_insert_rowid()))
}

/// Count the notes in the database.
#[tool(risk = "read_only")]
async fn note_count(db: State<Db>) -> Result<u64, String> {
    let conn = db.lock()?;
    conn.query_row("SELECT COUNT(*) FROM notes", [], |row| row.get(0))
        .map_err(|e| e.to_string())
}

/// The latest notes, newest first.
///
/// # Arguments
/// * `limit` - how many notes
#[tool(risk = "read_only")]
fn note_recent(
    db: State<Db>,
    #[arg(default = 3)]
    #[schemars(range(min = 1, max = 20))]
    limit: u32,
) -> Result<Vec<String>, String> {
    let conn = db.lock()?;
    let mut stmt = conn
        .prepare("SELECT text FROM notes ORDER BY id DESC LIMIT ?1")
        .map_err(|e| e.to_string())?;
    let rows = stmt
        .query_map([limit], |row| row.get(0))
        .map_err(|e| e.to_string())?;
    rows.collect::<Result<Vec<String>, _>>()
        .map_err(|e| e.to_string())
}

/// Count the words of a text file in the workspace.
///
/// # Arguments
/// * `path` - the file, relative to the workspace
#[tool(risk = "read_only", path_args = ["path"])]
fn word_count(path: WorkspacePath) -> Result<usize, WorkspaceFsError> {
    Ok(path.read_to_string(1 << 20)?.split_whitespace().count())
}

/// Write a text file in the workspace.
///
/// # Arguments
/// * `path` - the file, relative to the workspace
/// * `text` - what it will hold
#[tool(risk = "mutation", path_args = ["path"])]
fn save_text(path: WorkspacePath, text: String) -> Result<String, WorkspaceFsError> {
    path.write_atomic(text.as_bytes())?;
    Ok(format!("{} bytes written", text.len()))
}

/// Run a bash command in the workspace and return its output.
///
/// # Arguments
/// * `command` - the bash command
#[tool(risk = "dangerous", script_args = ["command"], script_lang = "bash", timeout = "30s")]
async fn run_bash(ctx: &ToolContext, command: String) -> Result<String, String> {
    let out = ctx
        .command("bash")
        .args(["-c", &command])
        .timeout(Duration::from_secs(20))
        .output()
        .await?;
    if out.success() {
        Ok(out.report())
    } else {
        Err(format!("exit status {}\n{}", out.exit_code, out.report()))
    }
}

#[tokio::main]
async fn main() {
    let Some(data) = std::env::var_os("SCRATCH_APP_DATA").map(PathBuf::from) else {
        eprintln!("error: set SCRATCH_APP_DATA to the directory of the notes database");
        std::process::exit(2);
    };
    let db = std::fs::create_dir_all(&data)
        .map_err(|e| e.to_string())
        .and_then(|()| Db::open(&data).map_err(|e| e.to_string()))
        .unwrap_or_else(|e| {
            eprintln!("error: the notes database in {}: {e}", data.display());
            std::process::exit(1);
        });
    // SQLite writes `notes.db-journal` beside the database: grant the directory.
    let grants = Grants::new().read_write(&data);
    tool_core::cli!().resource_with_grants(db, grants).run()
}
