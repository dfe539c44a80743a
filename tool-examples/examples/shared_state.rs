//! An application whose tools share its state: a note book held by the application, given to
//! the tools as a `State<Notes>` resource, behind the application's own command line.
//!
//! ```text
//! cargo run -p tool-examples --example shared_state -- list
//! echo '{"tool": "add_note", "args": {"title": "milk", "text": "buy some"}}' \
//!   | cargo run -p tool-examples --example shared_state -- call --workspace . --approve allow
//! ```

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use tool_core::cli::Cli;
use tool_core::{tool, Registry, State};

/// Longest note title, in characters (as the schema's `maxLength` counts).
const MAX_TITLE: usize = 64;
/// Longest note text, in characters.
const MAX_TEXT: usize = 4096;
/// Most notes the book holds.
const MAX_NOTES: usize = 256;

/// The application's note book, shared by every call.
#[derive(Default)]
pub struct Notes {
    book: Mutex<BTreeMap<String, String>>,
}

/// Add a note to the book, or replace the note of that title.
///
/// # Arguments
/// * `notes` - the application's note book
/// * `title` - the note's title
/// * `text` - what the note says
#[tool(risk = "mutation")]
fn add_note(
    notes: State<Arc<Notes>>,
    #[schemars(length(min = 1, max = MAX_TITLE))] title: String,
    #[schemars(length(max = MAX_TEXT))] text: String,
) -> Result<String, String> {
    // The schema refused longer ones already; the book does not rely on it.
    if title.chars().count() > MAX_TITLE || text.chars().count() > MAX_TEXT {
        return Err(format!(
            "a title is at most {MAX_TITLE} characters and a text {MAX_TEXT}"
        ));
    }
    let mut book = notes.book.lock().map_err(|_| "the note book is unusable")?;
    if book.len() >= MAX_NOTES && !book.contains_key(&title) {
        return Err(format!("the book is full ({MAX_NOTES} notes)"));
    }
    book.insert(title.clone(), text);
    Ok(format!("noted `{title}` ({} notes)", book.len()))
}

/// List the titles in the note book.
#[tool(risk = "read_only", concurrency_safe, idempotent)]
async fn list_notes(notes: State<Arc<Notes>>) -> Result<String, String> {
    let book = notes.book.lock().map_err(|_| "the note book is unusable")?;
    Ok(book.keys().cloned().collect::<Vec<_>>().join("\n"))
}

fn main() -> ExitCode {
    if let Some(code) = tool_core::sandbox::dispatch_helper() {
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    let registry = match Registry::builder()
        .with_inventory_where(|module| module == module_path!())
        .build()
    {
        Ok(registry) => registry,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    Cli::new()
        .name("notes")
        .version(env!("CARGO_PKG_VERSION"))
        .about("A note book the model keeps through its tools.")
        .resource(Arc::new(Notes::default()))
        .run_with(&registry, std::env::args_os())
}
