//! The example program's command line, run as a process: commands with and without the registry.

use test_support::procs::run_with_stdin;

fn run(args: &[&str], stdin: &str) -> (i32, String, String) {
    run_with_stdin(env!("CARGO_BIN_EXE_tool-examples"), args, stdin)
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

#[test]
fn scan_of_several_files_prints_one_json_line_each_in_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.py");
    let good = dir.path().join("good.py");
    std::fs::write(&bad, "import os\nos.system('rm -rf /')\n").expect("write");
    std::fs::write(&good, "print('hello')\n").expect("write");
    let (bad, good) = (bad.to_str().expect("utf-8"), good.to_str().expect("utf-8"));
    let (code, stdout, stderr) = run(&["scan", "--lang", "python", bad, good, "-"], "x = 1\n");
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert_eq!(lines[0]["file"], bad);
    assert_eq!(lines[0]["report"]["decision"], "deny");
    assert_eq!(lines[1]["file"], good);
    assert_eq!(lines[1]["report"]["decision"], "allow");
    assert_eq!(lines[2]["file"], "-");
    assert_eq!(lines[2]["report"]["decision"], "allow");
}

#[test]
fn scan_reads_every_file_before_printing_anything() {
    let dir = tempfile::tempdir().expect("tempdir");
    let good = dir.path().join("good.sh");
    std::fs::write(&good, "ls\n").expect("write");
    let missing = dir.path().join("missing.sh");
    let (code, stdout, stderr) = run(
        &[
            "scan",
            "--lang",
            "bash",
            good.to_str().expect("utf-8"),
            missing.to_str().expect("utf-8"),
        ],
        "",
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(stdout.is_empty(), "no partial output: {stdout}");
    assert!(stderr.contains("cannot read"), "{stderr}");
    let (code, _, stderr) = run(&["scan", "--lang", "bash", "-", "-"], "");
    assert_eq!(code, 1, "{stderr}");
}

#[test]
fn help_and_version_name_the_application() {
    let (code, stdout, stderr) = run(&["--version"], "");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout.trim(),
        format!("tool-examples {}", env!("CARGO_PKG_VERSION"))
    );
    let (code, stdout, stderr) = run(&["--help"], "");
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.starts_with(env!("CARGO_PKG_DESCRIPTION")),
        "{stdout}"
    );
    assert!(!stdout.contains("tool-core"), "{stdout}");
    // This program registers a demo, so it has the command.
    assert!(stdout.contains("demo"), "{stdout}");
}

#[test]
fn mcp_server_info_names_the_application() {
    let ws = tempfile::tempdir().expect("tempdir");
    let ws = ws.path().to_str().expect("a UTF-8 path");
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"0"}}}"#;
    let (code, stdout, stderr) = run(
        &["serve", "--stdio", "--workspace", ws],
        &format!("{init}\n"),
    );
    assert_eq!(code, 0, "{stderr}");
    let reply: serde_json::Value =
        serde_json::from_str(stdout.lines().next().expect("the initialize reply"))
            .expect("JSON-RPC");
    assert_eq!(
        reply["result"]["serverInfo"],
        serde_json::json!({"name": "tool-examples", "version": env!("CARGO_PKG_VERSION")}),
        "{reply}"
    );
}

/// The first line the server writes to stderr, within a minute (`None` if it closed stderr first).
fn first_stderr_line(child: &mut std::process::Child) -> Option<String> {
    use std::io::BufRead;
    let stderr = child.stderr.take().expect("piped stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let read = std::io::BufReader::new(stderr).read_line(&mut line);
        let _ = tx.send(read.ok().filter(|n| *n > 0).map(|_| line));
    });
    rx.recv_timeout(std::time::Duration::from_secs(60))
        .expect("the server wrote to stderr within a minute")
}

fn serve_http(addr: &str, ws: &std::path::Path) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_tool-examples"))
        .args(["serve", "--http", addr, "--workspace"])
        .arg(ws)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the server starts")
}

/// With port 0 the server says the port the system gave it, and listens there.
#[test]
fn an_http_server_on_port_zero_names_the_port_it_got() {
    let ws = tempfile::tempdir().expect("tempdir");
    let mut child = serve_http("127.0.0.1:0", ws.path());
    let line = first_stderr_line(&mut child).expect("a line");
    let addr = line
        .trim()
        .strip_prefix("serving 9 tools at http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("{line}"));
    let addr: std::net::SocketAddr = addr.parse().expect("an address");
    assert_ne!(addr.port(), 0, "{line}");
    let connected = std::net::TcpStream::connect(addr);
    let _ = child.kill();
    let _ = child.wait();
    connected.expect("the server listens where it said");
}

/// A taken port: the server exits with an error naming the address, and never says it serves.
#[test]
fn an_http_server_on_a_taken_port_says_so_and_exits() {
    let ws = tempfile::tempdir().expect("tempdir");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let addr = taken.local_addr().expect("its address").to_string();
    let mut child = serve_http(&addr, ws.path());
    let line = first_stderr_line(&mut child).unwrap_or_default();
    let status = child.wait().expect("the server exits");
    assert!(!status.success(), "{line}");
    assert!(
        line.starts_with(&format!("error: mcp transport: cannot listen on {addr}: ")),
        "{line}"
    );
}
