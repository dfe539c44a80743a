//! A confined `bash -c true` against a plain spawn, interleaved: each round runs one of each, so
//! load that comes and goes on a shared machine hits both alike; prints the medians and their
//! ratio. `cargo bench -p tool-sandbox --bench spawn_ratio [-- ROUNDS]`.

use std::path::Path;
use std::time::Instant;

use tool_sandbox::{CancellationToken, FsAccess, Launcher, Mode, SandboxPolicy, SandboxedCommand};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
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
    let launcher = Launcher::locate(
        Some(Path::new(env!("CARGO_BIN_EXE_tool-sandbox-exec"))),
        Mode::Required,
    )
    .expect("helper");
    let cancel = CancellationToken::new();
    let cmd = SandboxedCommand::new("bash").args(["-c", "true"]);
    let mut rows = Vec::new();
    for network in [false, true] {
        let policy = SandboxPolicy::new(ws.path(), FsAccess::ReadWrite, network).expect("policy");
        let (confined, plain) = rt.block_on(async {
            for _ in 0..5 {
                let out = cmd.run(&launcher, &policy, &cancel).await.expect("ran");
                assert!(out.success(), "{out:?}");
            }
            let (mut confined, mut plain) = (Vec::new(), Vec::new());
            for _ in 0..rounds {
                let t = Instant::now();
                let out = cmd.run(&launcher, &policy, &cancel).await.expect("ran");
                confined.push(t.elapsed().as_secs_f64() * 1e3);
                assert!(out.success(), "{out:?}");
                let t = Instant::now();
                let out = std::process::Command::new("bash")
                    .args(["-c", "true"])
                    .output()
                    .expect("bash");
                plain.push(t.elapsed().as_secs_f64() * 1e3);
                assert!(out.status.success());
            }
            (median(confined), median(plain))
        });
        rows.push((network, confined, plain));
    }
    for (network, confined, plain) in rows {
        let name = if network {
            "confined_network"
        } else {
            "confined"
        };
        println!(
            "{name:<17} median {confined:.2} ms, plain spawn {plain:.2} ms: {:.2}x ({rounds} rounds)",
            confined / plain
        );
    }
}
