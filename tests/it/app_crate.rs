//! An application crate outside this workspace, as a new user writes one: its tools in a library,
//! the CLI in a binary. Pins issue 16's first finding: a binary that never names its tool library
//! lost every tool silently (`list` printed nothing and exited 0); and its `State<T>` tool, which
//! runs only where the application registers the resource, under the application's own name; a
//! parameter with a default, a list returned as structured output, the application's own error
//! type with its code, and an executor of its own with a closure as approver.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use test_support::procs::json_lines;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate sits in the workspace")
        .to_path_buf()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a file in a directory")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

/// The rest of `mytools`: a default, a list, an error type with a code, a tool that asks.
const MORE_TOOLS: &str = r#"
/// Search the index.
///
/// # Arguments
/// * `query` - what to look for
/// * `limit` - how many results
#[tool(risk = "read_only")]
pub fn search(query: String, #[arg(default = 3)] limit: u32) -> Vec<String> {
    (1..=limit).map(|i| format!("{query}{i}")).collect()
}

/// The library's own error type.
#[derive(Debug)]
pub enum StoreError {
    /// No such key.
    Missing(String),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Missing(k) => write!(f, "no key `{k}`"),
        }
    }
}

impl tool_core::outcome::ToolErrorCode for StoreError {
    fn code(&self) -> &str {
        "missing_key"
    }
}

fn load(key: &str) -> Result<String, StoreError> {
    Err(StoreError::Missing(key.to_owned()))
}

/// Fetch a stored value.
///
/// # Arguments
/// * `key` - the key
#[tool(risk = "read_only")]
pub fn fetch(key: String) -> Result<String, tool_core::outcome::ToolError> {
    Ok(load(&key)?)
}

/// One line `find` found. Its schema is derived through tool-core: `mytools` has no `schemars`
/// dependency.
#[derive(serde::Serialize, tool_core::JsonSchema)]
#[schemars(crate = "tool_core::schemars")]
pub struct Hit {
    /// The line number.
    pub line: u32,
    /// The line.
    pub text: String,
}

/// Find a word.
///
/// # Arguments
/// * `word` - what to look for
#[tool(risk = "read_only")]
pub fn find(word: String) -> tool_core::Json<Vec<Hit>> {
    tool_core::Json(vec![Hit { line: 7, text: format!("a line with {word}") }])
}

/// Store a value.
///
/// # Arguments
/// * `key` - the key
/// * `value` - the value
#[tool(risk = "mutation")]
pub fn store(key: String, value: String) -> String {
    format!("stored {key}={value}")
}
"#;

/// An application with an executor of its own: its resource, and a closure as approver that
/// lets `store` write keys starting with `ok` only. One call per stdin line, one JSON line out.
const APP_EXEC: &str = r#"use std::sync::Arc;

use tool_core::approval::{self, ApprovalDecision};
use tool_core::{Executor, ExecutorConfig, Registry};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ws = std::env::args().nth(1).ok_or("the workspace")?;
    let approver = approval::from_fn(|req| {
        match req.args["key"].as_str() {
            Some(k) if k.starts_with("ok") => ApprovalDecision::Approve,
            _ => ApprovalDecision::Deny { reason: format!("`{}` may not write that key", req.tool) },
        }
    });
    let config = ExecutorConfig::new(&ws)
        .resource(Arc::new(mytools::Hits::default()))
        .approver(Arc::new(approver));
    let executor = Executor::new(Arc::new(Registry::from_inventory()?), config)?;
    let session = executor.new_session();
    for line in std::io::stdin().lines() {
        let r = executor.execute_text(&session, &line?).await;
        let out = serde_json::json!({
            "status": r.status.as_str(),
            "code": r.code.map(|c| c.as_str()),
            "error_code": r.error_code,
            "message": r.message,
            "output": r.output,
        });
        println!("{out}");
    }
    Ok(())
}
"#;

/// An application's own command line: its resource, its approver (`store` may write keys
/// starting with `ok` only), an argument filter (`search` sees at most 2 results asked for) and
/// a subcommand of its own (`count`).
const APP_STATE: &str = r#"use std::process::ExitCode;
use std::sync::Arc;

use tool_core::approval::{self, ApprovalDecision};
use tool_core::cli::clap;

fn main() {
    let approver = approval::from_fn(|req| match req.args["key"].as_str() {
        Some(k) if k.starts_with("ok") => ApprovalDecision::Approve,
        _ => ApprovalDecision::Deny { reason: "the application refuses that key".to_owned() },
    });
    tool_core::cli!()
        .resource(Arc::new(mytools::Hits::default()))
        .approver(Arc::new(approver))
        .argument_filter(|decl, args| {
            if decl.name == "search" && args.get("limit").and_then(|l| l.as_u64()) > Some(2) {
                args.insert("limit".to_owned(), 2.into());
            }
            Ok(())
        })
        .subcommand(clap::Command::new("count").about("Count the tools"), |registry, _| {
            println!("{} tools", registry.len());
            Ok(ExitCode::SUCCESS)
        })
        .run()
}
"#;

/// A scratch workspace: `mytools` (one `#[tool]`), `app_without_use` (never names `mytools`) and
/// `app_with_use` (`use mytools as _;`). Built into this workspace's target directory, with its
/// lock file and profile, so the kit's dependencies are not compiled again.
fn build_scratch_workspace(dir: &Path) -> PathBuf {
    let root = workspace_root();
    let core = root.join("tool-core");
    let core = core.to_str().expect("a UTF-8 path");
    write(
        &dir.join("Cargo.toml"),
        "[workspace]\nmembers = [\"mytools\", \"app_without_use\", \"app_with_use\", \"app_state\", \"app_exec\"]\n\
         resolver = \"2\"\n\n[profile.dev.package.\"*\"]\ndebug = false\n",
    );
    let dep = format!("tool-core = {{ path = {core:?}, features = [\"cli\"] }}\n");
    // serde for `Serialize`; no schemars: `JsonSchema` is derived through tool-core.
    write(
        &dir.join("mytools/Cargo.toml"),
        &format!(
            "[package]\nname = \"mytools\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
             [dependencies]\n{dep}serde = {{ version = \"1\", features = [\"derive\"] }}\n"
        ),
    );
    write(
        &dir.join("mytools/src/lib.rs"),
        &["use std::sync::atomic::{AtomicU64, Ordering};\nuse std::sync::Arc;\n\
         use tool_core::{tool, State};\n\n/// Say hello.\n///\n/// # Arguments\n/// * `name` - who to greet\n\
         #[tool(risk = \"read_only\")]\npub fn greet(name: String) -> String {\n    \
         format!(\"hello {name}\")\n}\n\n/// The application's hit counter.\n#[derive(Default)]\n\
         pub struct Hits(pub AtomicU64);\n\n/// Count a hit.\n#[tool(risk = \"safe\")]\n\
         pub fn hit(State(hits): State<Arc<Hits>>) -> String {\n    \
         (hits.0.fetch_add(1, Ordering::SeqCst) + 1).to_string()\n}\n",
            MORE_TOOLS,
        ]
        .concat(),
    );
    for (bin, head) in [
        ("app_without_use", ""),
        ("app_with_use", "use mytools as _;\n\n"),
    ] {
        write(
            &dir.join(format!("{bin}/Cargo.toml")),
            &format!(
                "[package]\nname = \"{bin}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
                 [dependencies]\nmytools = {{ path = \"../mytools\" }}\n{dep}"
            ),
        );
        write(
            &dir.join(format!("{bin}/src/main.rs")),
            &format!("{head}fn main() {{\n    tool_core::cli::run()\n}}\n"),
        );
    }
    // An application with its own command line: named after its crate, with the tools' resource.
    write(
        &dir.join("app_state/Cargo.toml"),
        &format!(
            "[package]\nname = \"app_state\"\nversion = \"2.3.4\"\nedition = \"2021\"\n\n\
             [dependencies]\nmytools = {{ path = \"../mytools\" }}\n{dep}"
        ),
    );
    write(&dir.join("app_state/src/main.rs"), APP_STATE);
    write(
        &dir.join("app_exec/Cargo.toml"),
        &format!(
            "[package]\nname = \"app_exec\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
             [dependencies]\nmytools = {{ path = \"../mytools\" }}\n{dep}\
             serde_json = \"1\"\ntokio = {{ version = \"1\", features = [\"rt-multi-thread\", \"macros\"] }}\n"
        ),
    );
    write(&dir.join("app_exec/src/main.rs"), APP_EXEC);
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).expect("copy Cargo.lock");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let out = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["build", "--offline", "--quiet", "--workspace"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .expect("run cargo");
    assert!(
        out.status.success(),
        "the scratch workspace builds:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    target.join("debug")
}

fn run(bin: &Path, args: &[&str]) -> Output {
    Command::new(bin)
        .args(args)
        .output()
        .expect("run the binary")
}

fn run_with_stdin(bin: &Path, args: &[&str], stdin: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(bin)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run the binary");
    // The program may refuse before reading: a closed pipe is not an error here.
    let _ = child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(stdin.as_bytes());
    child.wait_with_output().expect("the binary exits")
}

#[test]
fn a_binary_that_links_no_tool_is_refused_with_the_fix_and_the_fix_works() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bins = build_scratch_workspace(dir.path());

    for args in [&["list"][..], &["dump"][..]] {
        let out = run(&bins.join("app_without_use"), args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(stderr.contains("no `#[tool]` is linked"), "{stderr}");
        assert!(stderr.contains("linker"), "{stderr}");
        assert!(stderr.contains("use mytools as _;"), "{stderr}");
    }

    let out = run(&bins.join("app_with_use"), &["list"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("greet"));

    // `hit` takes a `State<Arc<Hits>>` that `app_with_use` does not register: `call` refuses to
    // start, naming the tool and the type, before reading a line.
    let ws = tempfile::tempdir().expect("tempdir");
    let ws = ws.path().to_str().expect("a UTF-8 path");
    let calls = "{\"tool\": \"hit\", \"args\": {}}\n{\"tool\": \"hit\", \"args\": {}}\n";
    let out = run_with_stdin(
        &bins.join("app_with_use"),
        &["call", "--workspace", ws],
        calls,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty());
    assert!(
        stderr.contains("tool `hit` takes `State<alloc::sync::Arc<mytools::Hits>>`"),
        "{stderr}"
    );

    // `app_state` registers it, and its command line is its own.
    let out = run_with_stdin(&bins.join("app_state"), &["call", "--workspace", ws], calls);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let outputs: Vec<String> = stdout
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a result line");
            v["output"].to_string()
        })
        .collect();
    assert_eq!(outputs, ["\"1\"", "\"2\""], "{stdout}");
    let out = run(&bins.join("app_state"), &["--version"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "app_state 2.3.4"
    );
    let out = run(&bins.join("app_state"), &["--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        !help.contains("demo") && !help.contains("tool-core"),
        "{help}"
    );
    assert!(help.contains("app_state"), "{help}");

    // The default applies when the call leaves the argument out; the list is structured output;
    // the library's own error type reaches the caller with its code.
    let calls = "{\"tool\": \"search\", \"args\": {\"query\": \"q\"}}\n\
                 {\"tool\": \"search\", \"args\": {\"query\": \"q\", \"limit\": 1}}\n\
                 {\"tool\": \"fetch\", \"args\": {\"key\": \"zz\"}}\n";
    let out = run_with_stdin(&bins.join("app_state"), &["call", "--workspace", ws], calls);
    let lines = json_lines(&out);
    assert_eq!(lines[0]["output"], serde_json::json!(["q1", "q2", "q3"]));
    assert_eq!(lines[1]["output"], serde_json::json!(["q1"]));
    assert_eq!(lines[2]["status"], "failed", "{}", lines[2]);
    assert_eq!(lines[2]["code"], "tool_error");
    assert_eq!(lines[2]["error_code"], "missing_key");
    assert_eq!(lines[2]["message"], "no key `zz`");
    let out = run(&bins.join("app_state"), &["dump", "--format", "canonical"]);
    let dump: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the dump is JSON");
    let search = dump["tools"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == "search"))
        .expect("search is dumped");
    assert_eq!(search["input_schema"]["properties"]["limit"]["default"], 3);
    // A `Vec<String>` return declares its output schema, as `Json<Vec<String>>` does.
    assert_eq!(search["output_schema"]["type"], "array", "{search}");
    assert_eq!(
        search["output_schema"]["items"]["type"], "string",
        "{search}"
    );

    // A `Json<Vec<Hit>>` of the library's own type, its schema derived through tool-core.
    let find = dump["tools"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == "find"))
        .expect("find is dumped");
    assert_eq!(find["output_schema"]["type"], "array", "{find}");
    assert!(
        find["output_schema"].to_string().contains("\"line\""),
        "{find}"
    );

    // The application's approver, argument filter and subcommand.
    let calls = "{\"tool\": \"store\", \"args\": {\"key\": \"ok_b\", \"value\": \"1\"}}\n\
                 {\"tool\": \"store\", \"args\": {\"key\": \"secret\", \"value\": \"2\"}}\n\
                 {\"tool\": \"search\", \"args\": {\"query\": \"q\", \"limit\": 9}}\n\
                 {\"tool\": \"find\", \"args\": {\"word\": \"w\"}}\n";
    let out = run_with_stdin(&bins.join("app_state"), &["call", "--workspace", ws], calls);
    let lines = json_lines(&out);
    assert_eq!(lines[0]["output"], "stored ok_b=1", "{}", lines[0]);
    assert_eq!(lines[1]["code"], "approval_denied", "{}", lines[1]);
    assert_eq!(
        lines[2]["output"],
        serde_json::json!(["q1", "q2"]),
        "{}",
        lines[2]
    );
    assert_eq!(
        lines[3]["output"],
        serde_json::json!([{"line": 7, "text": "a line with w"}]),
        "{}",
        lines[3]
    );
    let out = run(&bins.join("app_state"), &["count"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "6 tools");

    // Its own executor, with a closure as approver.
    let calls = "{\"tool\": \"store\", \"args\": {\"key\": \"ok_a\", \"value\": \"1\"}}\n\
                 {\"tool\": \"store\", \"args\": {\"key\": \"secret\", \"value\": \"2\"}}\n\
                 {\"tool\": \"fetch\", \"args\": {\"key\": \"zz\"}}\n\
                 {\"tool\": \"hit\", \"args\": {}}\n";
    let out = run_with_stdin(&bins.join("app_exec"), &[ws], calls);
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert_eq!(lines[0]["output"], "stored ok_a=1", "{}", lines[0]);
    assert_eq!(lines[1]["code"], "approval_denied", "{}", lines[1]);
    assert_eq!(
        lines[1]["message"], "approval denied: `store` may not write that key",
        "{}",
        lines[1]
    );
    assert_eq!(lines[2]["error_code"], "missing_key", "{}", lines[2]);
    assert_eq!(lines[3]["output"], "1", "{}", lines[3]);
}
