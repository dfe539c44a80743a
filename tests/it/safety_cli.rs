//! `scan` exits 0 whatever the decision and non-zero only for usage errors.

use std::process::ExitCode;

use tool_core::Registry;

fn run(args: &[&str]) -> ExitCode {
    // `scan` needs no tools; the inventory of this binary holds other modules' tools.
    let registry = Registry::builder().build().expect("registry");
    let mut argv = vec!["tool"];
    argv.extend_from_slice(args);
    tool_core::cli::run_with(&registry, argv)
}

fn fixture(p: &str) -> String {
    format!("{}/fixtures/safety/{p}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn scan_exits_zero_for_allow_review_and_deny() {
    for f in [
        "bash/BASH-RM-ROOT/bad.sh",
        "bash/BASH-SUDO/bad.sh",
        "bash/BASH-SUDO/ok.sh",
    ] {
        assert_eq!(
            run(&["scan", "--lang", "bash", &fixture(f)]),
            ExitCode::SUCCESS,
            "{f}"
        );
    }
    assert_eq!(
        run(&[
            "scan",
            "--lang",
            "python",
            "--policy",
            &fixture("policy.toml"),
            &fixture("python/PY-EVAL/bad.py")
        ]),
        ExitCode::SUCCESS
    );
}

#[test]
fn scan_fails_on_usage_errors() {
    assert_ne!(
        run(&["scan", "--lang", "bash", &fixture("no/such/file.sh")]),
        ExitCode::SUCCESS
    );
    assert_ne!(
        run(&["scan", "--lang", "ruby", &fixture("bash/BASH-SUDO/ok.sh")]),
        ExitCode::SUCCESS
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("p.yaml");
    std::fs::write(&bad, "version: v\nunknown: 1\n").expect("write");
    assert_ne!(
        run(&[
            "scan",
            "--lang",
            "bash",
            "--policy",
            bad.to_str().expect("utf-8"),
            &fixture("bash/BASH-SUDO/ok.sh")
        ]),
        ExitCode::SUCCESS
    );
}

#[test]
fn scan_takes_a_workspace_and_a_cwd() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path().to_str().expect("utf-8");
    let script = fixture("bash/BASH-SUDO/ok.sh");
    assert_eq!(
        run(&[
            "scan",
            "--lang",
            "bash",
            "--workspace",
            ws,
            "--cwd",
            "sub",
            &script
        ]),
        ExitCode::SUCCESS
    );
    // A relative cwd needs a workspace; the workspace must exist.
    assert_ne!(
        run(&["scan", "--lang", "bash", "--cwd", "sub", &script]),
        ExitCode::SUCCESS
    );
    let missing = dir.path().join("missing");
    assert_ne!(
        run(&[
            "scan",
            "--lang",
            "bash",
            "--workspace",
            missing.to_str().expect("utf-8"),
            &script
        ]),
        ExitCode::SUCCESS
    );
}

#[test]
fn scan_takes_the_open_world_declaration() {
    let script = fixture("bash/EFFECT-NETWORK/bad.sh");
    assert_eq!(
        run(&["scan", "--lang", "bash", "--open-world", &script]),
        ExitCode::SUCCESS
    );
    assert_ne!(
        run(&["scan", "--lang", "bash", "--open-world=maybe", &script]),
        ExitCode::SUCCESS
    );
}
