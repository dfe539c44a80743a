//! A raw HTTP/1.1 client over loopback for tests that check the wire itself (status codes,
//! headers, SSE framing), one request per connection (`Connection: close`), and the 2026-07-28
//! MCP POST built on it.

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The protocol revision [`mcp_post`] speaks.
pub const MCP_REVISION: &str = "2026-07-28";

/// A reply read to the end of the connection; a chunked body is already joined.
pub struct RawReply {
    /// The status code of the status line.
    pub status: u16,
    /// The status line and the header lines, as sent.
    pub head: String,
    /// The body, de-chunked when it came `Transfer-Encoding: chunked`.
    pub body: String,
}

impl RawReply {
    /// The value of the header `name` (case-insensitive), if the reply has it.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }

    /// The body as one JSON value, if it is one.
    pub fn json(&self) -> Option<Value> {
        serde_json::from_str(self.body.trim()).ok()
    }

    /// The JSON-RPC message of the reply: the first line of the body (an SSE `data:` line or a
    /// plain one) that is a JSON value with an `id`.
    pub fn rpc(&self) -> Option<Value> {
        self.body
            .lines()
            .map(|l| l.strip_prefix("data:").unwrap_or(l).trim())
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v.get("id").is_some())
    }

    /// The body as JSON if it is, else the JSON-RPC message an event stream carries.
    pub fn message(&self) -> Option<Value> {
        self.json().or_else(|| self.rpc())
    }
}

/// Sends `POST path` with `headers` and `body` to `addr`, reads the reply to the end.
pub async fn post(
    addr: std::net::SocketAddr,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> RawReply {
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    exchange(addr, head.as_bytes(), body.as_bytes()).await
}

/// The per-request `_meta` of a 2026-07-28 client named `name`; `elicitation` says whether it
/// declares it can answer forms.
pub fn client_meta(name: &str, elicitation: bool) -> Value {
    let caps = if elicitation {
        serde_json::json!({"elicitation": {"form": {}}})
    } else {
        serde_json::json!({})
    };
    serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": MCP_REVISION,
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": name, "version": "1"}
    })
}

/// A 2026-07-28 MCP request: `POST /mcp` with the JSON and event-stream `Accept`, the protocol
/// version and `Mcp-Method` headers, then `headers` (`Mcp-Name`, `Authorization`, …).
pub async fn mcp_post(
    addr: std::net::SocketAddr,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> RawReply {
    let mut all = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", MCP_REVISION),
        ("Mcp-Method", method),
    ];
    all.extend_from_slice(headers);
    post(addr, "/mcp", &all, body).await
}

/// Writes `head` and `body` on a fresh connection and reads the reply until the peer closes.
pub async fn exchange(addr: std::net::SocketAddr, head: &[u8], body: &[u8]) -> RawReply {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(head).await.expect("send head");
    stream.write_all(body).await.expect("send body");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.expect("read reply");
    parse_reply(&String::from_utf8_lossy(&raw))
}

/// Splits a whole HTTP/1.1 reply into status, head and (de-chunked) body.
pub fn parse_reply(text: &str) -> RawReply {
    let (head, rest) = text.split_once("\r\n\r\n").unwrap_or((text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {text:?}"));
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_owned()
    };
    RawReply {
        status,
        head: head.to_owned(),
        body,
    }
}

/// Joins a `Transfer-Encoding: chunked` body; stops at the last chunk or at a malformed one.
pub fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].strip_prefix("\r\n").unwrap_or(&rest[n..]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunked_event_stream_yields_its_rpc_message() {
        let text = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\
                    Transfer-Encoding: chunked\r\n\r\n\
                    7\r\nevent: \r\n1c\r\nmessage\ndata: {\"id\":7,\"a\":1}\r\n0\r\n\r\n";
        let r = parse_reply(text);
        assert_eq!(r.status, 200);
        assert_eq!(r.header("content-type"), Some("text/event-stream"));
        assert_eq!(r.body, "event: message\ndata: {\"id\":7,\"a\":1}");
        assert_eq!(r.json(), None);
        assert_eq!(r.rpc(), Some(serde_json::json!({"id": 7, "a": 1})));
        assert_eq!(r.message(), r.rpc());
    }

    #[test]
    fn a_json_body_is_the_message_even_without_an_id() {
        let r = parse_reply("HTTP/1.1 400 Bad Request\r\nX: y\r\n\r\n{\"error\":\"no\"}");
        assert_eq!(r.status, 400);
        assert_eq!(r.header("X"), Some("y"));
        assert_eq!(r.header("Missing"), None);
        assert_eq!(r.rpc(), None);
        assert_eq!(r.message(), Some(serde_json::json!({"error": "no"})));
    }

    #[test]
    fn a_malformed_chunk_ends_the_body() {
        assert_eq!(dechunk("3\r\nabc\r\nzz\r\nmore"), "abc");
        assert_eq!(dechunk("5\r\nab"), "");
    }

    #[tokio::test]
    async fn a_post_reaches_a_loopback_peer_with_its_headers() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("listener");
        let addr = listener.local_addr().expect("address");
        let peer = tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.expect("accept");
            let mut got = vec![0u8; 4096];
            let mut n = 0;
            while !String::from_utf8_lossy(&got[..n]).ends_with("{}") {
                n += s.read(&mut got[n..]).await.expect("read");
            }
            s.write_all(b"HTTP/1.1 202 Accepted\r\n\r\n")
                .await
                .expect("write");
            String::from_utf8_lossy(&got[..n]).into_owned()
        });
        let r = mcp_post(addr, "tools/list", &[("Mcp-Name", "x")], "{}").await;
        assert_eq!(r.status, 202);
        let sent = peer.await.expect("peer");
        assert!(sent.starts_with("POST /mcp HTTP/1.1\r\n"), "{sent}");
        for h in [
            "Mcp-Method: tools/list\r\n",
            "Mcp-Name: x\r\n",
            "MCP-Protocol-Version: 2026-07-28\r\n",
            "Content-Length: 2\r\n",
        ] {
            assert!(sent.contains(h), "{h} missing from {sent}");
        }
    }
}
