//! An application crate outside this workspace, as a new user writes one: its tools in a library,
//! the CLI in a binary. Pins issue 16's first finding: a binary that never names its tool library
//! lost every tool silently (`list` printed nothing and exited 0).

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
        "[workspace]\nmembers = [\"mytools\", \"app_without_use\", \"app_with_use\"]\n\
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
        "use tool_core::tool;\n\n/// Say hello.\n///\n/// # Arguments\n/// * `name` - who to greet\n\
         #[tool(risk = \"read_only\")]\npub fn greet(name: String) -> String {\n    \
         format!(\"hello {name}\")\n}\n",
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
}
