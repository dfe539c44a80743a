//! The `#[tool]` attribute. Use it through `tool_core::tool`; the runtime documents the keys.
//!
//! Stages: `attr` reads the keys, `model` reads the function, `check` applies the declaration
//! rules, `expand` generates code. Errors are collected in a `ctxt::Ctxt` and reported together.

use proc_macro::TokenStream;

mod attr;
mod check;
mod ctxt;
mod expand;
mod main_attr;
mod model;

/// Declare a function as an agent tool.
///
/// ```text
/// use tool_core::{tool, WorkspacePath};
///
/// /// Read a manifest from this agent's workspace.
/// ///
/// /// # Arguments
/// /// * `manifest_path` - the manifest, relative to the workspace
/// /// * `max_bytes` - read at most this many bytes
/// #[tool(risk = "read_only", concurrency_safe)]
/// fn inspect_manifest(manifest_path: WorkspacePath, max_bytes: Option<u32>) -> Result<String, std::io::Error> { .. }
/// ```
///
/// The function stays callable as written. Next to it, the attribute generates an argument
/// struct (its JSON Schema is what the model sees and its deserializer is what the executor uses),
/// the declaration, a handler adapter and an inventory registration, so
/// `Registry::from_inventory()` finds the tool.
///
/// **Description**: the doc comment up to its first heading (`description = ".."` overrides it);
/// a tool without one does not compile. Lines `* \`name\` - text` (or `- name: text`) under
/// `# Arguments` become the properties' descriptions.
///
/// **Keys** (all optional):
/// - `name = ".."`: the tool name (default: the function name), `^[a-zA-Z0-9_-]{1,64}$`.
/// - `risk = ".."`: `safe`, `read_only`, `mutation`, `destructive` or `dangerous`; absent means
///   `mutation`. `safe`/`read_only` tools may not return a context modifier or take `&mut`.
/// - `path_args = [..]`: parameters the workspace guard checks (`WorkspacePath`, `PathBuf` or
///   `String`, or an `Option` of one). `WorkspacePath` parameters are path arguments without being
///   listed. The handler receives the guarded absolute path, never the raw string. A `String` or
///   `PathBuf` parameter named like a path (`path`, `file`, `dir`, `source`, `destination`, `cwd`,
///   `*_path`, `*_file`, `*_dir`) must be listed, or opted out with `not_paths = [..]`.
/// - `script_args = [..]` with `script_lang = "bash" | "python"`: `String` parameters the safety
///   scanner reads.
/// - `concurrency_safe`, `idempotent`, `open_world`: flags (`key` or `key = true`), default false.
/// - `timeout = "30s"`: digits then `ms`, `s`, `m` or `h`; nonzero.
/// - `unix_sockets = ["/run/postgresql/.s.PGSQL.5432"]`: pathname UNIX sockets on the host the
///   tool may connect to (absolute, no `.` or `..`). Every other UNIX socket outside the
///   workspace is out of reach of its programs, and its handler may create no UNIX socket at all
///   unless it declares one.
/// - `check_permissions = path::to::check`: a `fn(&serde_json::Value) -> Result<(), String>` run
///   on the final arguments before the call.
/// - `input_schema = "schemas/tool.json"` or `input_schema = path::to::schema_fn`: a hand-written
///   input schema instead of the generated one (JSON Schema 2020-12: `allOf`/`anyOf`/`oneOf`,
///   `if`/`then`/`else`, `$defs` with `$anchor`, ...), from a JSON file relative to the crate's
///   `Cargo.toml` (read and checked at compile time) or from a `fn() -> serde_json::Value`. The
///   executor enforces it as written and every export serves it as written. The function then
///   takes the whole arguments object as its one parameter (a `serde_json::Value` or any
///   `Deserialize` type; or no parameter), after the executor validated it. Anything that
///   would describe the arguments a second time is a compile error: more parameters,
///   `#[arg]`/`#[schemars]` on the parameter, `# Arguments` docs, `path_args`, `not_paths`,
///   `script_args`, a `WorkspacePath` parameter (guarded paths need typed parameters).
/// - `crate = path`: where `tool_core` is, when it is renamed.
///
/// **Parameters**: owned types implementing `Deserialize` and `JsonSchema`; `Option<T>` is
/// optional, everything else required. `#[schemars(..)]` on a parameter (e.g.
/// `#[schemars(range(min = 1, max = 65536))] max_bytes: u32`) is moved to the schema property. One `&ToolContext` or `ToolContext` parameter may receive
/// the call's context; it is not part of the schema. No `self`, generics or patterns.
///
/// **Return**: anything implementing `IntoToolOutcome`: `ToolOutcome`, `String`, `()`, numbers,
/// `serde_json::Value`, `Json<T>` (adds an output schema; every output is checked against it
/// before it leaves), `Vec<String>` (structured, as `Json<Vec<String>>`), content blocks (`Image`, `Audio`, `EmbeddedResource`, `ResourceLink`,
/// `Content`, `Vec<Content>`: see `tool_core::content`), `Modified<T>` or
/// `(T, ContextModifier)`, and `Result<T, E: Display>` of those. Sync functions run on the
/// executor's own worker threads (confined per capability class by the sandbox); async
/// functions are awaited.
///
/// Every mistake in a declaration is reported in one compile, on the offending token.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    let item = proc_macro2::TokenStream::from(item);
    match expand::tool(args.into(), item.clone()) {
        Ok(out) => out.into(),
        Err(err) => {
            // Keep the function so one mistake does not cascade into "cannot find function".
            let mut out = expand::original(item);
            out.extend(err.to_compile_error());
            out.into()
        }
    }
}

/// Marks the program's `main` so that kernel confinement works whatever it is: its first act is
/// `tool_core::sandbox::dispatch_helper()` (the program is then its own sandbox helper), before
/// any runtime or thread starts. On an `async fn main` it replaces `#[tokio::main]`: the body
/// runs on a multi-threaded tokio runtime built after the dispatch.
///
/// ```ignore
/// #[tool_core::main]
/// async fn main() {
///     // build the registry and the executor, serve, ...
/// }
/// ```
#[proc_macro_attribute]
pub fn main(args: TokenStream, item: TokenStream) -> TokenStream {
    match main_attr::expand(args.into(), item.into()) {
        Ok(out) => out.into(),
        Err(err) => err.to_compile_error().into(),
    }
}
