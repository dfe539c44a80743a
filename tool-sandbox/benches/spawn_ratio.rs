//! A confined `bash -c true` against a plain spawn, interleaved: each round runs one of each, so
//! load that comes and goes on a shared machine hits all alike; prints the medians and their
//! ratios. `cargo bench -p tool-sandbox --bench spawn_ratio [-- ROUNDS]`.
//!
//! Per round, for programs without and then with network:
//! - `confined`: [`SandboxedCommand::run`] under `Mode::Required` (Landlock, seccomp, namespaces,
//!   pids cgroup);
//! - `helper_only`: the same through a `Mode::Off` launcher: the helper's hand-offs without any
//!   confinement, to tell what the helper costs from what confinement costs;
//! - `plain`: `std::process::Command::output()`, the target's baseline;
//! - `tokio_piped`: `tokio::process::Command` with a cleared environment and piped output, as the
//!   script tools spawned their programs before confinement.

use std::path::Path;
use std::process::Stdio;
use std::time::Instant;

use tool_sandbox::{CancellationToken, FsAccess, Launcher, Mode, SandboxPolicy, SandboxedCommand};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn main() {
    let rounds: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(200);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let ws = tempfile::tempdir().expect("workspace");
    let helper = Path::new(env!("CARGO_BIN_EXE_tool-sandbox-exec"));
    let confined = Launcher::locate(Some(helper), Mode::Required).expect("helper");
    let helper_only = Launcher::locate(Some(helper), Mode::Off).expect("helper");
    let cancel = CancellationToken::new();
    let cmd = SandboxedCommand::new("bash").args(["-c", "true"]);
    let mut rows = Vec::new();
    for network in [false, true] {
        let policy = SandboxPolicy::new(ws.path(), FsAccess::ReadWrite, network).expect("policy");
        // On a worker thread, where the executor runs tool calls (a future driven by `block_on`
        // would add a wake-up of the blocked thread after every I/O event).
        let (confined, helper_only, cmd, cancel, ws) = (
            confined.clone(),
            helper_only.clone(),
            cmd.clone(),
            cancel.clone(),
            ws.path().to_owned(),
        );
        let times = rt
            .block_on(rt.spawn(async move {
                let (confined, helper_only) = (&confined, &helper_only);
                let run = |launcher| {
                    let (cmd, policy, cancel) = (&cmd, &policy, &cancel);
                    async move {
                        let t = Instant::now();
                        let out = cmd.run(launcher, policy, cancel).await.expect("ran");
                        assert!(out.success(), "{out:?}");
                        ms(t)
                    }
                };
                for _ in 0..5 {
                    run(confined).await;
                    run(helper_only).await;
                }
                let mut times: [Vec<f64>; 4] = Default::default();
                for _ in 0..rounds {
                    times[0].push(run(confined).await);
                    times[1].push(run(helper_only).await);
                    let t = Instant::now();
                    let out = std::process::Command::new("bash")
                        .args(["-c", "true"])
                        .output()
                        .expect("bash");
                    times[2].push(ms(t));
                    assert!(out.status.success());
                    let t = Instant::now();
                    let out = tokio::process::Command::new("bash")
                        .args(["-c", "true"])
                        .current_dir(&ws)
                        .env_clear()
                        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
                        .env("HOME", &ws)
                        .env("LANG", "C.UTF-8")
                        .stdin(Stdio::null())
                        .stdout(Stdio::piped())
                        .stderr(Stdio::piped())
                        .kill_on_drop(true)
                        .output()
                        .await
                        .expect("bash");
                    times[3].push(ms(t));
                    assert!(out.status.success());
                }
                times.map(median)
            }))
            .expect("bench task");
        rows.push((network, times));
    }
    println!("bash -c true, medians of {rounds} interleaved rounds:");
    for (network, [confined, helper_only, plain, tokio_piped]) in rows {
        let class = if network {
            "with network"
        } else {
            "without network"
        };
        println!(
            "{class:<16} confined {confined:.2} ms: {:.2}x plain ({plain:.2} ms), {:.2}x \
             tokio_piped ({tokio_piped:.2} ms); helper_only {helper_only:.2} ms ({:.2}x plain)",
            confined / plain,
            confined / tokio_piped,
            helper_only / plain,
        );
    }
}
