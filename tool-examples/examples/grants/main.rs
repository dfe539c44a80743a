//! An application whose tools reach resources outside the workspace, confined: a SQLite
//! database (its directory granted read and write) and an HTTP service (its port granted),
//! through `State<T>` resources registered with their sandbox grants.
//!
//! ```text
//! GRANTS_DB_DIR=/tmp/notes GRANTS_API=127.0.0.1:8080 \
//!   cargo run -p tool-examples --example grants -- doctor
//! echo '{"tool": "db_add_note", "args": {"text": "buy milk"}}' | GRANTS_DB_DIR=/tmp/notes \
//!   cargo run -p tool-examples --example grants -- call --workspace . --approve allow
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use tool_core::cli::Cli;

mod app;

fn main() -> ExitCode {
    if let Some(code) = tool_core::sandbox::dispatch_helper() {
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    let fail = |e: String| {
        eprintln!("error: {e}");
        ExitCode::from(1)
    };
    let dir = std::env::var_os("GRANTS_DB_DIR").map_or_else(std::env::temp_dir, PathBuf::from);
    let db = match app::Db::open(&dir) {
        Ok(db) => db,
        Err(e) => {
            return fail(format!(
                "cannot open the database in {}: {e}",
                dir.display()
            ))
        }
    };
    let api = std::env::var("GRANTS_API").unwrap_or_else(|_| "127.0.0.1:8080".to_owned());
    let Some((host, port)) = api
        .rsplit_once(':')
        .and_then(|(h, p)| Some((h, p.parse().ok()?)))
    else {
        return fail(format!("GRANTS_API `{api}` is not host:port"));
    };
    let api = match app::Api::new(host, port) {
        Ok(api) => api,
        Err(e) => return fail(format!("cannot make the HTTP client: {e}")),
    };
    let registry = match app::registry() {
        Ok(registry) => registry,
        Err(e) => return fail(e.to_string()),
    };
    let (db_grants, api_grants) = (db.grants(), api.grants());
    Cli::new()
        .name("grants")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Notes in a SQLite database and an HTTP service, reached by confined tools.")
        .resource_with_grants(db, db_grants)
        .resource_with_grants(api, api_grants)
        .run_with(&registry, std::env::args_os())
}
