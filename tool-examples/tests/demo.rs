//! The README's first command: `tool-examples demo` runs the scripted session end to end.

use std::process::Command;

#[test]
fn demo_runs_every_step_and_writes_the_audit_log() {
    let out = Command::new(env!("CARGO_BIN_EXE_tool-examples"))
        .arg("demo")
        .env("NO_COLOR", "1")
        .output()
        .expect("the demo binary starts");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "demo failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!stdout.contains("\x1b["), "piped output must be plain text");
    for expected in [
        "path_outside_workspace",
        "unknown_tool",
        "invalid_arguments",
        "approval_denied",
        "safety_denied",
        "approval asked: `write_file`",
        "approval=session_grant",
        "memory/deadline",
    ] {
        assert!(
            stdout.contains(expected),
            "missing `{expected}` in:\n{stdout}"
        );
    }
    let audit = stdout
        .lines()
        .find_map(|l| l.strip_prefix("audit log: "))
        .and_then(|rest| rest.split(" (").next())
        .expect("the demo ends by printing the audit log path");
    let log = std::fs::read_to_string(audit).expect("the audit log exists");
    let events: Vec<serde_json::Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).expect("every audit line is JSON"))
        .collect();
    assert_eq!(events.len(), 17, "one audit event per call");
    assert!(
        !log.contains("look around"),
        "audit lines never hold argument values"
    );
    if let Some(root) = std::path::Path::new(audit).parent() {
        let _ = std::fs::remove_dir_all(root);
    }
}
