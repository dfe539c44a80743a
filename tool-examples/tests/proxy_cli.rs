//! The example program's `proxy` in front of the conformance fixture server (`mcp_fixture_server
//! --stdio`), spoken to over stdio as JSON lines, the way any MCP client speaks to it: by a
//! 2026-07-28 client (every request self-contained, no `initialize`) and by a 2025-11-25 session.
//! The proxy's risk decides approval, not the child's declarations; refusals carry their code as
//! data; duplicate keys never reach the child.

mod common;

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};
use test_support::stdio::StdioPeer;

use common::BIN;

const FIXTURE: &str = env!("CARGO_BIN_EXE_mcp_fixture_server");

/// A client of `proxy` over its stdin/stdout; it approves what it is asked when `peer.approve`.
struct Proxy {
    peer: StdioPeer,
    next_id: u64,
}

impl Proxy {
    fn start(ws: &Path, extra: &[&str]) -> Proxy {
        let mut command = Command::new(BIN);
        command
            .args(["proxy", "--workspace"])
            .arg(ws)
            .args([
                "--risk",
                "count_words=safe",
                "--risk",
                "test_image_content=safe",
            ])
            .args(extra)
            .arg("--")
            .arg(FIXTURE)
            .args(["--stdio", "--workspace"])
            .arg(ws);
        Proxy {
            peer: StdioPeer::start(&mut command, "proxy"),
            next_id: 1,
        }
    }

    /// Send a request (a raw line with this id) and answer the proxy's own requests until the
    /// response arrives.
    fn exchange(&mut self, id: u64, line: &str) -> Value {
        self.peer.exchange(id, line, &id.to_string())
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.exchange(id, &line.to_string())
    }

    /// A 2026-07-28 request: `params` plus the per-request `_meta`.
    fn stateless(&mut self, method: &str, mut params: Value, elicitation: bool) -> Value {
        params["_meta"] = meta(elicitation);
        self.request(method, params)
    }
}

fn meta(elicitation: bool) -> Value {
    let caps = if elicitation {
        json!({"elicitation": {"form": {}}})
    } else {
        json!({})
    };
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": "proxy-cli-test", "version": "1"}
    })
}

fn result(msg: &Value) -> &Value {
    msg.get("result")
        .unwrap_or_else(|| panic!("an error instead of a result: {msg}"))
}

#[test]
fn proxy_serves_the_child_to_a_2026_07_28_client_under_its_own_risk() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut p = Proxy::start(dir.path(), &[]);

    let listed = p.stateless("tools/list", json!({}), false);
    let tools = result(&listed)["tools"].as_array().expect("tools").clone();
    let tool = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} listed: {tools:?}"))
            .clone()
    };
    assert_eq!(tool("count_words")["annotations"]["readOnlyHint"], true);
    // The child's `read_note` is read-only by its own word; to the proxy it is a mutation.
    assert_eq!(tool("read_note")["annotations"]["readOnlyHint"], false);

    let r = p.stateless(
        "tools/call",
        json!({"name": "count_words", "arguments": {"text": "a b c"}}),
        false,
    );
    assert_eq!(result(&r)["structuredContent"]["words"], 3, "{r}");
    let r = p.stateless(
        "tools/call",
        json!({"name": "test_image_content", "arguments": {}}),
        false,
    );
    assert_eq!(result(&r)["content"][0]["type"], "image", "{r}");

    std::fs::write(dir.path().join("n.txt"), "note").expect("a note");
    // Unlisted, so a mutation: a client that cannot be asked is denied, with the code as data.
    let r = p.stateless(
        "tools/call",
        json!({"name": "read_note", "arguments": {"path": "n.txt"}}),
        false,
    );
    let res = result(&r);
    assert_eq!(res["isError"], true, "{r}");
    assert_eq!(
        res["structuredContent"]["reason_code"], "approval_denied",
        "{r}"
    );
    // A client that can answer gets the approval question as an input-required result.
    let r = p.stateless(
        "tools/call",
        json!({"name": "read_note", "arguments": {"path": "n.txt"}}),
        true,
    );
    let res = result(&r);
    assert_eq!(res["resultType"], "input_required", "{r}");
    assert!(res["requestState"].is_string(), "{r}");
    let mut answered = json!({"name": "read_note", "arguments": {"path": "n.txt"},
        "inputResponses": {"approval": {"action": "accept", "content": {"approve": true}}},
        "requestState": res["requestState"].clone()});
    answered["_meta"] = meta(true);
    let r = p.request("tools/call", answered);
    assert_eq!(result(&r)["isError"], false, "{r}");
    assert_eq!(result(&r)["content"][0]["text"], "note", "{r}");

    let m = meta(false);
    let dup = format!(
        r#"{{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{{"name":"count_words","arguments":{{"text":"a","text":"b"}},"_meta":{m}}}}}"#
    );
    let r = p.exchange(99, &dup);
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["data"]["reason_code"], "malformed_call", "{r}");
}

#[test]
fn proxy_serves_a_2025_11_25_session_and_asks_it_for_approval() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("n.txt"), "note").expect("a note");
    let mut p = Proxy::start(dir.path(), &["--child-revision", "2025-11-25"]);
    p.peer.approve = true;
    let init = p.request(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}}},
               "clientInfo": {"name": "proxy-cli-test", "version": "1"}}),
    );
    assert_eq!(result(&init)["protocolVersion"], "2025-11-25", "{init}");
    p.peer
        .send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    let r = p.request(
        "tools/call",
        json!({"name": "count_words", "arguments": {"text": "a b"}}),
    );
    assert_eq!(result(&r)["structuredContent"]["words"], 2, "{r}");
    assert_eq!(p.peer.elicitations, 0, "a safe tool is not approved");
    let r = p.request(
        "tools/call",
        json!({"name": "read_note", "arguments": {"path": "n.txt"}}),
    );
    assert_eq!(
        p.peer.elicitations, 1,
        "the proxy asks for the child's read-only tool"
    );
    assert_eq!(result(&r)["content"][0]["text"], "note", "{r}");
}
