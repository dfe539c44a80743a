//! The stdio transport with the checks of [`super::http_guard`] applied to every incoming line:
//! a line that is not JSON gets the parse error `-32700`, a message with a duplicate key or a
//! `tools/call` with non-object `arguments` gets `-32602`, written to the output between the
//! server's own lines, and never reaches the server. Other lines pass unchanged.

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

use super::http_guard::inspect_with;

/// Size of the in-memory pipes between the guard and the server.
const PIPE_BYTES: usize = 64 * 1024;

/// The server's ends of the guarded transport over `input` and `output` (stdin and stdout),
/// and the task that writes the server's lines to `output`: it ends once the server's end is
/// dropped and everything is written and flushed, so await it before the process exits or the
/// last replies are lost.
pub(super) fn guarded<R, W>(
    input: R,
    output: W,
) -> (DuplexStream, DuplexStream, tokio::task::JoinHandle<()>)
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (server_in, mut to_server) = tokio::io::duplex(PIPE_BYTES);
    let (server_out, from_server) = tokio::io::duplex(PIPE_BYTES);
    let (refusals, mut refused) = mpsc::unbounded_channel::<Vec<u8>>();

    tokio::spawn(async move {
        let mut input = BufReader::new(input);
        let mut line = Vec::new();
        loop {
            line.clear();
            match input.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let body = line.trim_ascii();
            let refusal = if body.is_empty() {
                None
            } else {
                inspect_with(body, true)
            };
            match refusal {
                Some(r) if r.is_for_notification() => {}
                Some(r) => {
                    let mut reply = r.to_message().to_string().into_bytes();
                    reply.push(b'\n');
                    if refusals.send(reply).is_err() {
                        break;
                    }
                }
                None => {
                    if to_server.write_all(&line).await.is_err() {
                        break;
                    }
                }
            }
        }
        // End of input: the server sees its input close.
        let _ = to_server.shutdown().await;
    });

    let writer = tokio::spawn(async move {
        let mut output = output;
        let mut from_server = BufReader::new(from_server);
        let mut line = Vec::new();
        let mut server_open = true;
        let mut refusals_open = true;
        loop {
            tokio::select! {
                read = from_server.read_until(b'\n', &mut line), if server_open => {
                    match read {
                        Ok(0) | Err(_) => server_open = false,
                        Ok(_) => {
                            if output.write_all(&line).await.is_err() {
                                break;
                            }
                            line.clear();
                        }
                    }
                }
                reply = refused.recv(), if refusals_open => match reply {
                    Some(reply) if output.write_all(&reply).await.is_err() => break,
                    Some(_) => {}
                    None => refusals_open = false,
                },
                else => break,
            }
            if output.flush().await.is_err() {
                break;
            }
        }
    });

    (server_in, server_out, writer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn refused_lines_are_answered_and_the_rest_pass() {
        let (client_in, guard_in) = tokio::io::duplex(4096);
        let (guard_out, mut client_out) = tokio::io::duplex(4096);
        let (mut server_in, mut server_out, writer) = guarded(guard_in, guard_out);
        let mut client_in = client_in;
        client_in
            .write_all(
                b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n\
                  {\"jsonrpc\":\"2.0\",\"id\":2,\"id\":3,\"method\":\"ping\"}\n\
                  not json\n",
            )
            .await
            .expect("write");
        drop(client_in);
        let mut passed = String::new();
        server_in
            .read_to_string(&mut passed)
            .await
            .expect("server input");
        assert_eq!(
            passed,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"
        );
        server_out
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n")
            .await
            .expect("server output");
        drop(server_out);
        drop(server_in);
        writer
            .await
            .expect("the writer ends once the server's end is dropped");
        let mut out = String::new();
        client_out.read_to_string(&mut out).await.expect("output");
        let lines: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).expect("JSON lines"))
            .collect();
        assert_eq!(lines.len(), 3, "{out}");
        let codes: Vec<_> = lines
            .iter()
            .filter_map(|l| l["error"]["code"].as_i64())
            .collect();
        assert!(codes.contains(&-32602) && codes.contains(&-32700), "{out}");
        assert!(lines
            .iter()
            .any(|l| l["id"] == 1 && l.get("result").is_some()));
    }
}
