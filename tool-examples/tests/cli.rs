//! The example program's command line, run as a process: commands with and without the registry.

use std::io::Write;
use std::process::{Command, Stdio};

fn run(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tool-examples"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(stdin.as_bytes())
        .expect("stdin accepts the script");
    let out = child.wait_with_output().expect("the binary exits");
    (
        out.status.code().expect("exited normally"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn scan_runs_as_a_process_and_denies_a_root_wipe() {
    let (code, stdout, stderr) = run(&["scan", "--lang", "bash", "-"], "rm -rf /\n");
    assert_eq!(code, 0, "scan exits 0 whatever the decision: {stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("the report is JSON");
    assert_eq!(report["decision"], "deny", "{stdout}");
}

#[test]
fn list_still_reads_the_registry() {
    let (code, stdout, stderr) = run(&["list"], "");
    assert_eq!(code, 0, "{stderr}");
    for tool in ["read_file", "write_file", "run_bash"] {
        assert!(stdout.contains(tool), "`{tool}` missing from:\n{stdout}");
    }
}

#[test]
fn a_usage_error_exits_two() {
    let (code, _, stderr) = run(&["scan", "--lang", "cobol", "-"], "");
    assert_eq!(code, 2, "{stderr}");
}
