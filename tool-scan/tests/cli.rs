//! `tool-scan` as a process: the arguments and output of `scan`, nothing else.

use test_support::procs::run_with_stdin;

fn run(args: &[&str], stdin: &str) -> (i32, String, String) {
    run_with_stdin(env!("CARGO_BIN_EXE_tool-scan"), args, stdin)
}

#[test]
fn tool_scan_is_the_scan_command_alone() {
    let (code, stdout, stderr) = run(&["--lang", "bash", "-"], "rm -rf /\n");
    assert_eq!(code, 0, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("JSON report");
    assert_eq!(report["decision"], "deny");
    let (code, _, stderr) = run(&["list"], "");
    assert_eq!(code, 2, "only scan's arguments are accepted: {stderr}");
}

#[test]
fn several_files_give_one_json_line_each_and_an_unreadable_one_prints_nothing() {
    let dir = std::env::temp_dir().join(format!("tool-scan-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let bad = dir.join("bad.py");
    std::fs::write(&bad, "import os\nos.system('rm -rf /')\n").expect("write");
    let bad = bad.to_str().expect("utf-8");
    let (code, stdout, stderr) = run(&["--lang", "python", bad, "-"], "x = 1\n");
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert_eq!(lines[0]["file"], bad);
    assert_eq!(lines[0]["report"]["decision"], "deny");
    assert_eq!(lines[1]["file"], "-");
    assert_eq!(lines[1]["report"]["decision"], "allow");
    let missing = dir.join("missing.py");
    let (code, stdout, stderr) = run(
        &["--lang", "python", bad, missing.to_str().expect("utf-8")],
        "",
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(stdout.is_empty(), "no partial output: {stdout}");
    assert!(stderr.starts_with("error: cannot read"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn version_and_help_name_the_program() {
    let (code, stdout, stderr) = run(&["--version"], "");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout.trim(),
        format!("tool-scan {}", env!("CARGO_PKG_VERSION"))
    );
    let (code, stdout, stderr) = run(&["--help"], "");
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.starts_with(env!("CARGO_PKG_DESCRIPTION")),
        "{stdout}"
    );
    for option in [
        "--lang",
        "--policy",
        "--tool",
        "--workspace",
        "--cwd",
        "--open-world",
    ] {
        assert!(stdout.contains(option), "{option}: {stdout}");
    }
}
