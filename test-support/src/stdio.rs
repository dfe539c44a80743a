//! A JSON-RPC peer over a child's stdin/stdout, one JSON value a line, the way an MCP client
//! speaks to a server started with `--stdio`: it answers the server's own requests (approving
//! elicitations when told to) while it waits for the response to its request.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// Longest wait for one answer; a hang fails the test instead of blocking it.
pub const ANSWER_WITHIN: Duration = Duration::from_secs(90);

/// The child and its lines; killed when dropped.
pub struct StdioPeer {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    /// Whether an `elicitation/create` is accepted with `{"approve": true}` (else refused as
    /// not offered, like any other request of the server's).
    pub approve: bool,
    /// How many elicitations were approved.
    pub elicitations: usize,
}

impl StdioPeer {
    /// Starts `command` with piped stdin/stdout (stderr dropped); `what` names it in failures.
    pub fn start(command: &mut Command, what: &str) -> StdioPeer {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{what} starts: {e}"));
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        StdioPeer {
            child,
            stdin,
            lines,
            approve: false,
            elicitations: 0,
        }
    }

    /// Writes one line.
    pub fn send_line(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").expect("write to the child");
        self.stdin.flush().expect("flush");
    }

    /// Sends `line` (a request with this `id`) and answers the child's own requests until the
    /// response arrives; `what` names the request in failures.
    pub fn exchange(&mut self, id: u64, line: &str, what: &str) -> Value {
        self.send_line(line);
        let start = Instant::now();
        loop {
            let left = ANSWER_WITHIN.saturating_sub(start.elapsed());
            let line = match self.lines.recv_timeout(left) {
                Ok(l) => l,
                Err(RecvTimeoutError::Timeout) => panic!("no answer to {what} within the limit"),
                Err(RecvTimeoutError::Disconnected) => panic!("the child closed during {what}"),
            };
            let msg: Value = serde_json::from_str(&line).expect("the child writes JSON lines");
            match (msg.get("method").and_then(Value::as_str), msg.get("id")) {
                (Some("elicitation/create"), Some(sid)) if self.approve => {
                    self.elicitations += 1;
                    let answer = json!({"jsonrpc": "2.0", "id": sid, "result": {
                        "action": "accept", "content": {"approve": true}
                    }});
                    self.send_line(&answer.to_string());
                }
                (Some(other), Some(sid)) => {
                    let answer = json!({"jsonrpc": "2.0", "id": sid, "error": {
                        "code": -32601, "message": format!("{other} not offered by this client")
                    }});
                    self.send_line(&answer.to_string());
                }
                (None, Some(rid)) if rid == &json!(id) => return msg,
                _ => {} // a notification, or an answer to another request
            }
        }
    }
}

impl Drop for StdioPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
