//! The example program's `serve --stdio` as an attacker's MCP client drives it: the client
//! approves every elicitation (a human says yes to everything), so only the guards and the kernel
//! stand in the way. A small JSON-RPC client speaks the wire protocol itself, so what is tested is
//! what any MCP client gets. Canaries lie outside the workspace; each test is named after the
//! attack.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};
use test_support::procs::{per_run, wait_until_gone, Sentinel};
use test_support::stdio::StdioPeer;

use common::{intact, kernel_ready, site, BIN, CANARY};

/// An MCP client over the server's stdin/stdout that approves every elicitation.
struct Client {
    peer: StdioPeer,
    next_id: u64,
}

impl Client {
    fn start(ws: &Path) -> Client {
        Client::start_with(ws, &[])
    }

    fn start_with(ws: &Path, extra: &[&str]) -> Client {
        let mut command = Command::new(BIN);
        command
            .args(["serve", "--stdio", "--workspace"])
            .arg(ws)
            .args(extra);
        let mut peer = StdioPeer::start(&mut command, "serve");
        peer.approve = true;
        let mut client = Client { peer, next_id: 1 };
        let init = client.request(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"elicitation": {"form": {}}},
                "clientInfo": {"name": "attacker", "version": "0"}
            }),
        );
        assert!(init.get("result").is_some(), "initialize: {init}");
        client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        client
    }

    fn send(&mut self, msg: &Value) {
        self.peer.send_line(&msg.to_string());
    }

    /// Sends a request and answers the server's own requests until the response arrives.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.peer.exchange(id, &line.to_string(), method)
    }

    /// `tools/call`; returns the call result (`content`, `isError`, ...).
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let msg = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        msg.get("result")
            .cloned()
            .unwrap_or_else(|| panic!("tools/call {tool} answered with an error: {msg}"))
    }

    fn bash(&mut self, command: &str) -> Value {
        self.call("run_bash", json!({"command": command}))
    }
}

fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

fn failed(result: &Value) -> bool {
    result["isError"] == json!(true)
}

/// Every attack on the canary fails and leaks nothing; returns how many of them the kernel stopped
/// (`Permission denied`, `No such file or directory`, `Read-only file system`), as opposed to the
/// static scan.
fn canary_attacks(extra: &[&str]) -> usize {
    let s = site();
    let mut client = Client::start_with(&s.ws, extra);
    let c = s.canary.display();
    let mut reached_kernel = 0;
    for attack in [
        format!("cat {c}"),
        format!("echo gone > {c}"),
        // Not `rm -f`: the canary is not in the program's root at all, and `-f` ignores that.
        format!("rm {c}"),
        format!("cp {c} ./copy"),
        format!("python3 -c 'print(open(\"{c}\").read())'"),
    ] {
        let r = client.bash(&attack);
        assert!(failed(&r), "{attack}: {r}");
        assert!(!r.to_string().contains(CANARY), "{attack} leaked: {r}");
        // Landlock says EACCES; outside the program's minimal root a path is not there
        // (ENOENT), and its read-only mounts say EROFS.
        let t = text(&r);
        reached_kernel += usize::from(
            [
                "Permission denied",
                "No such file or directory",
                "Read-only file system",
            ]
            .iter()
            .any(|m| t.contains(m)),
        );
        // A success between attacks, so the session's error budget never runs out.
        let ok = client.bash("true");
        assert!(!failed(&ok), "{ok}");
    }
    assert!(intact(&s.canary), "the canary was changed over MCP");
    assert!(!s.ws.join("copy").exists());
    let ok = client.bash("echo inside > inside.txt && cat inside.txt");
    assert!(!failed(&ok), "{ok}");
    assert!(text(&ok).contains("inside"), "{ok}");
    assert!(
        client.peer.elicitations >= 6,
        "run_bash calls are approved through elicitation ({} asked)",
        client.peer.elicitations
    );
    reached_kernel
}

#[test]
fn run_bash_over_mcp_cannot_read_write_copy_or_delete_a_canary_outside() {
    if !kernel_ready("mcp canary") {
        return;
    }
    let reached_kernel = canary_attacks(&[]);
    assert!(
        reached_kernel >= 3,
        "most attacks must have been approved and stopped by the kernel ({reached_kernel} were)"
    );
}

#[test]
fn run_bash_over_mcp_with_scan_off_is_stopped_by_the_kernel_alone() {
    if !kernel_ready("mcp canary, scan off") {
        return;
    }
    assert_eq!(
        canary_attacks(&["--scan", "off"]),
        5,
        "every attack reached the kernel"
    );
}

#[test]
fn read_file_over_mcp_of_a_fifo_returns_at_once_and_the_server_goes_on() {
    if !kernel_ready("mcp fifo") {
        return;
    }
    let s = site();
    let fifo = s.ws.join("pipe");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let mut client = Client::start(&s.ws);
    for _ in 0..3 {
        let r = client.call("read_file", json!({"path": "pipe", "max_bytes": 10}));
        assert!(failed(&r), "{r}");
        assert!(text(&r).contains("regular file"), "a clear refusal: {r}");
    }
    std::fs::write(s.ws.join("note.txt"), "still serving").expect("note");
    let r = client.call("read_file", json!({"path": "note.txt", "max_bytes": 100}));
    assert!(text(&r).contains("still serving"), "{r}");
}

#[test]
fn run_python_over_mcp_cannot_read_shadow_or_connect_to_a_local_port() {
    if !kernel_ready("mcp shadow and tcp") {
        return;
    }
    let s = site();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listener");
    let port = listener.local_addr().expect("addr").port();
    let mut client = Client::start(&s.ws);
    let shadow = client.call(
        "run_python",
        json!({"code": "print(open('/etc/shadow').read())"}),
    );
    assert!(failed(&shadow), "{shadow}");
    assert!(!text(&shadow).contains("root:"), "{shadow}");
    let connect = client.call(
        "run_python",
        json!({"code": format!(
            "import socket\ns = socket.create_connection(('127.0.0.1', {port}), timeout=2)\nprint('connected')"
        )}),
    );
    assert!(!text(&connect).contains("connected\n"), "{connect}");
    listener
        .set_nonblocking(true)
        .expect("nonblocking listener");
    assert!(
        listener.accept().is_err(),
        "a non-open_world script reached a local port over MCP"
    );
}

#[test]
fn read_file_over_mcp_refuses_a_hard_link_to_an_outside_file() {
    if !kernel_ready("mcp hard link") {
        return;
    }
    let s = site();
    std::fs::hard_link(&s.canary, s.ws.join("notes.txt")).expect("hard link");
    let mut client = Client::start(&s.ws);
    let r = client.call("read_file", json!({"path": "notes.txt", "max_bytes": 1000}));
    assert!(failed(&r), "{r}");
    assert!(
        !r.to_string().contains(CANARY),
        "leaked through a hard link: {r}"
    );
}

#[test]
fn run_bash_over_mcp_cannot_kill_a_sentinel_or_leave_children_behind() {
    if !kernel_ready("mcp kill and children") {
        return;
    }
    let s = site();
    let mut sentinel = Sentinel::start("300");
    let pid = sentinel.pid();
    let mut client = Client::start(&s.ws);
    let kill = client.bash(&format!("kill -9 {pid}; true"));
    assert!(!failed(&kill), "{kill}");
    let left = client.bash(&per_run(
        "(sleep 3291 &) ; setsid sleep 3291 & nohup sleep 3291 >/dev/null 2>&1 & echo started",
    ));
    assert!(!failed(&left), "{left}");
    let timeout = client.call(
        "run_bash",
        json!({"command": per_run("sleep 3292"), "timeout_secs": 1}),
    );
    assert!(failed(&timeout), "{timeout}");
    assert!(text(&timeout).starts_with("timeout"), "{timeout}");
    std::thread::sleep(Duration::from_millis(200));
    let alive = sentinel.alive();
    drop(sentinel);
    assert!(alive, "the sentinel was killed from inside the sandbox");
    // The server is still running: the children must be gone anyway.
    let left = wait_until_gone("sleep 329", Duration::from_secs(3));
    assert!(left.is_empty(), "children outlived their calls: {left:?}");
}
