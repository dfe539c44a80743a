//! Running a child process for the script tools: bounded time, bounded output, killed on cancel.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use tool_core::ToolContext;

const DEFAULT_TIMEOUT_SECS: u64 = 30;
const MAX_TIMEOUT_SECS: u64 = 120;
const MAX_STREAM_BYTES: usize = 64 * 1024;

/// Run `program args` in `dir`, feeding `stdin`, and return a report of its output. A non-zero exit
/// is an error outcome.
pub(crate) async fn run(
    ctx: &ToolContext,
    program: &str,
    args: &[&str],
    stdin: Option<Vec<u8>>,
    dir: &Path,
    timeout_secs: Option<u64>,
) -> Result<String, String> {
    let secs = timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS);
    if secs == 0 || secs > MAX_TIMEOUT_SECS {
        return Err(format!(
            "timeout_secs must be between 1 and {MAX_TIMEOUT_SECS}"
        ));
    }
    let mut child = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", dir)
        .env("LANG", "C.UTF-8")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(&input)
            .await
            .map_err(|e| format!("cannot write to {program}: {e}"))?;
        drop(pipe);
    }
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let read_all = async {
        let (out, err) = tokio::join!(read_capped(stdout.as_mut()), read_capped(stderr.as_mut()));
        let status = child.wait().await;
        (out, err, status)
    };
    let (out, err, status) = tokio::select! {
        r = read_all => r,
        _ = tokio::time::sleep(Duration::from_secs(secs)) => {
            return Err(format!("{program} timed out after {secs}s and was killed"));
        }
        _ = ctx.cancellation().cancelled() => {
            return Err(format!("{program} was cancelled and killed"));
        }
    };
    let status = status.map_err(|e| format!("{program} failed: {e}"))?;
    let mut text = String::new();
    text.push_str(&out);
    if !err.is_empty() {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("[stderr]\n");
        text.push_str(&err);
    }
    if status.success() {
        Ok(text)
    } else {
        let code = status
            .code()
            .map_or_else(|| "a signal".to_owned(), |c| c.to_string());
        Err(format!("exit status {code}\n{text}"))
    }
}

async fn read_capped<R: tokio::io::AsyncRead + Unpin>(pipe: Option<&mut R>) -> String {
    let Some(pipe) = pipe else {
        return String::new();
    };
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let mut cut = false;
    loop {
        match pipe.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = MAX_STREAM_BYTES.saturating_sub(buf.len());
                buf.extend_from_slice(&chunk[..n.min(room)]);
                // Keep draining so the child never blocks on a full pipe.
                cut |= n > room;
            }
        }
    }
    let mut s = String::from_utf8_lossy(&buf).into_owned();
    if cut {
        s.push_str("\n[output cut at 64 KiB]");
    }
    s
}
