//! An application crate outside this workspace, as a new user writes one: its tools in a library,
//! the CLI in a binary. Pins issue 16's first finding: a binary that never names its tool library
//! lost every tool silently (`list` printed nothing and exited 0); and its `State<T>` tool, which
//! runs only where the application registers the resource, under the application's own name.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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

/// A scratch workspace: `mytools` (one `#[tool]`), `app_without_use` (never names `mytools`) and
/// `app_with_use` (`use mytools as _;`). Built into this workspace's target directory, with its
/// lock file and profile, so the kit's dependencies are not compiled again.
fn build_scratch_workspace(dir: &Path) -> PathBuf {
    let root = workspace_root();
    let core = root.join("tool-core");
    let core = core.to_str().expect("a UTF-8 path");
    write(
        &dir.join("Cargo.toml"),
        "[workspace]\nmembers = [\"mytools\", \"app_without_use\", \"app_with_use\", \"app_state\"]\n\
         resolver = \"2\"\n\n[profile.dev.package.\"*\"]\ndebug = false\n",
    );
    let dep = format!("tool-core = {{ path = {core:?}, features = [\"cli\"] }}\n");
    write(
        &dir.join("mytools/Cargo.toml"),
        &format!(
            "[package]\nname = \"mytools\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
             [dependencies]\n{dep}"
        ),
    );
    write(
        &dir.join("mytools/src/lib.rs"),
        "use std::sync::atomic::{AtomicU64, Ordering};\nuse std::sync::Arc;\n\
         use tool_core::{tool, State};\n\n/// Say hello.\n///\n/// # Arguments\n/// * `name` - who to greet\n\
         #[tool(risk = \"read_only\")]\npub fn greet(name: String) -> String {\n    \
         format!(\"hello {name}\")\n}\n\n/// The application's hit counter.\n#[derive(Default)]\n\
         pub struct Hits(pub AtomicU64);\n\n/// Count a hit.\n#[tool(risk = \"safe\")]\n\
         pub fn hit(State(hits): State<Arc<Hits>>) -> String {\n    \
         (hits.0.fetch_add(1, Ordering::SeqCst) + 1).to_string()\n}\n",
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
    write(
        &dir.join("app_state/src/main.rs"),
        "use std::sync::Arc;\n\nfn main() {\n    \
         tool_core::cli!().resource(Arc::new(mytools::Hits::default())).run()\n}\n",
    );
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
}
