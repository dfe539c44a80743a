//! The tools of the `grants` example, and the resources they take: a SQLite database and an
//! HTTP service, both outside the workspace, reached from confined handlers through the grants
//! their resources declare. Shared with the integration tests, which run them confined.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tool_core::sandbox::Grants;
use tool_core::{tool, ExecutorConfig, Registry, State};

/// Longest note, in characters (as the schema's `maxLength` counts).
const MAX_NOTE: usize = 1024;

/// The application's database: one connection, opened by the application before any tool runs
/// (as a pool would be), used by confined handlers. SQLite creates its `-journal` beside the
/// database file at each write, so the grant is the database's directory, read and write.
#[derive(Clone)]
pub struct Db {
    conn: Arc<Mutex<rusqlite::Connection>>,
    dir: PathBuf,
}

impl Db {
    /// Opens (or creates) `notes.db` in `dir`.
    pub fn open(dir: &Path) -> rusqlite::Result<Db> {
        let conn = rusqlite::Connection::open(dir.join("notes.db"))?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)",
        )?;
        Ok(Db {
            conn: Arc::new(Mutex::new(conn)),
            dir: dir.to_path_buf(),
        })
    }

    /// What the tools that take the database need from the sandbox: its directory.
    pub fn grants(&self) -> Grants {
        Grants::new().read_write(&self.dir)
    }
}

/// An HTTP service the application talks to, on one host and port.
#[derive(Clone)]
pub struct Api {
    client: reqwest::Client,
    host: String,
    port: u16,
}

impl Api {
    /// The service at `http://{host}:{port}` (no proxy: the connection goes to it directly).
    pub fn new(host: &str, port: u16) -> reqwest::Result<Api> {
        Ok(Api {
            client: reqwest::Client::builder().no_proxy().build()?,
            host: host.to_owned(),
            port,
        })
    }

    /// What the tools that take the service need from the sandbox: a TCP connection to it (the
    /// kernel enforces the port; the host is recorded).
    pub fn grants(&self) -> Grants {
        Grants::new().connect(&self.host, self.port)
    }
}

/// An error and every error beneath it, as one line.
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}

/// Add a note to the application's database.
///
/// # Arguments
/// * `text` - what the note says
#[tool(risk = "mutation")]
fn db_add_note(
    State(db): State<Db>,
    #[schemars(length(min = 1, max = MAX_NOTE))] text: String,
) -> Result<String, String> {
    let conn = db.conn.lock().map_err(|_| "the database is unusable")?;
    conn.execute("INSERT INTO notes (text) VALUES (?1)", [&text])
        .map_err(|e| chain(&e))?;
    let count: i64 = conn
        .query_row("SELECT count(*) FROM notes", [], |row| row.get(0))
        .map_err(|e| chain(&e))?;
    Ok(format!("noted ({count} notes)"))
}

/// List the notes of the application's database, oldest first.
#[tool(risk = "read_only", concurrency_safe, idempotent)]
fn db_list_notes(State(db): State<Db>) -> Result<Vec<String>, String> {
    let conn = db.conn.lock().map_err(|_| "the database is unusable")?;
    let mut stmt = conn
        .prepare("SELECT text FROM notes ORDER BY id")
        .map_err(|e| chain(&e))?;
    let rows = stmt
        .query_map([], |row| row.get::<_, String>(0))
        .map_err(|e| chain(&e))?;
    rows.collect::<Result<Vec<_>, _>>().map_err(|e| chain(&e))
}

/// Fetch a path of the application's HTTP service and return the body.
///
/// # Arguments
/// * `route` - the route to fetch, e.g. `/status`
#[tool(risk = "safe", idempotent)]
async fn api_get(
    State(api): State<Api>,
    #[schemars(regex(pattern = r"^/[A-Za-z0-9/_.-]{0,200}$"))] route: String,
) -> Result<String, String> {
    let url = format!("http://{}:{}{route}", api.host, api.port);
    let response = api.client.get(&url).send().await.map_err(|e| chain(&e))?;
    let status = response.status();
    let body = response.text().await.map_err(|e| chain(&e))?;
    if !status.is_success() {
        return Err(format!("{url}: {status}"));
    }
    Ok(body)
}

/// The registry of these tools (and only them).
pub fn registry() -> Result<Registry, tool_core::registry::RegistryError> {
    Registry::builder()
        .with_inventory_where(|module| module == module_path!())
        .build()
}

/// An executor configuration for `workspace` with the database and the service registered,
/// each with its grants.
#[allow(dead_code)] // Used by the tests; the example runs the command line.
pub fn config(workspace: &Path, db: Db, api: Api) -> ExecutorConfig {
    let (db_grants, api_grants) = (db.grants(), api.grants());
    ExecutorConfig::new(workspace)
        .resource_with_grants(db, db_grants)
        .resource_with_grants(api, api_grants)
}
