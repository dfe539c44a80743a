//! Overhead of confinement: a trivial job through the confined pool vs `spawn_blocking` and vs an
//! async call; what the kernel's checks add to file operations in a confined thread; a confined
//! `bash -c true` vs a plain spawn.

use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion};
use tool_sandbox::{
    CancellationToken, ConfinedPool, FsAccess, Launcher, Mode, PoolConfig, Rlimits, SandboxPolicy,
    SandboxedCommand,
};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

fn pool_vs_spawn_blocking(c: &mut Criterion) {
    let rt = runtime();
    let ws = tempfile::tempdir().expect("ws");
    let policy = SandboxPolicy::new(ws.path(), FsAccess::ReadOnly, false).expect("policy");
    let pool = ConfinedPool::new(&policy, Mode::Required, PoolConfig::default()).expect("pool");
    // As the executor configures its pools (`ExecutorConfig::sandbox_spin`).
    let spinning = ConfinedPool::new(
        &policy,
        Mode::Required,
        PoolConfig {
            spin: std::time::Duration::from_micros(50),
            ..PoolConfig::default()
        },
    )
    .expect("pool");
    let mut g = c.benchmark_group("trivial_job");
    g.bench_function("async_call", |b| {
        b.to_async(&rt)
            .iter(|| async { black_box(async { 1 + 1 }.await) })
    });
    g.bench_function("spawn_blocking", |b| {
        b.to_async(&rt)
            .iter(|| async { black_box(tokio::task::spawn_blocking(|| 1 + 1).await) })
    });
    g.bench_function("confined_pool", |b| {
        b.to_async(&rt)
            .iter(|| async { black_box(pool.run(|| 1 + 1).await) })
    });
    g.bench_function("confined_pool_spin", |b| {
        b.to_async(&rt)
            .iter(|| async { black_box(spinning.run(|| 1 + 1).await) })
    });
    g.finish();

    // Many callers at once, as a server's concurrent requests: the shared workers take turns.
    let mut g = c.benchmark_group(format!("burst_of_{BURST}"));
    g.bench_function("spawn_blocking", |b| {
        b.to_async(&rt).iter(|| async {
            let jobs = (0..BURST).map(|_| tokio::task::spawn_blocking(|| 1 + 1));
            black_box(futures::future::join_all(jobs).await)
        })
    });
    for (name, pool) in [("confined_pool", &pool), ("confined_pool_spin", &spinning)] {
        g.bench_function(name, |b| {
            b.to_async(&rt).iter(|| async {
                let jobs = (0..BURST).map(|_| pool.run(|| 1 + 1));
                black_box(futures::future::join_all(jobs).await)
            })
        });
    }
    g.finish();
}

/// Jobs submitted at once in a `burst_of_*` iteration.
const BURST: usize = 8;

/// How many file operations one job makes: the hand-off to the worker is paid once per job, so
/// the time per job divided by this is the operation's own cost.
const OPS_PER_JOB: usize = 64;

/// One job of `OPS_PER_JOB` `lstat`s or `open` + `read` + `close`s of a small file in the
/// workspace, on tokio's blocking pool (unconfined) and on a confined worker: both pay one
/// hand-off per job (`trivial_job` measures it), the rest is what the confined thread's kernel
/// checks add to the operations.
fn file_ops(c: &mut Criterion) {
    let rt = runtime();
    let ws = tempfile::tempdir().expect("ws");
    std::fs::create_dir_all(ws.path().join("docs")).expect("dir");
    let file = ws.path().join("docs/notes.txt");
    std::fs::write(&file, "x".repeat(512)).expect("file");
    let policy = SandboxPolicy::new(ws.path(), FsAccess::ReadOnly, false).expect("policy");
    let pool = ConfinedPool::new(&policy, Mode::Required, PoolConfig::default()).expect("pool");
    let mut g = c.benchmark_group(format!("file_ops_x{OPS_PER_JOB}"));
    for op in [FileOp::Lstat, FileOp::OpenRead] {
        g.bench_function(format!("{}/unconfined", op.name()), |b| {
            b.to_async(&rt).iter(|| async {
                tokio::task::spawn_blocking(op.job(&file))
                    .await
                    .expect("job")
            })
        });
        g.bench_function(format!("{}/confined", op.name()), |b| {
            b.to_async(&rt)
                .iter(|| async { pool.run(op.job(&file)).await.expect("confined job") })
        });
    }
    g.finish();
}

#[derive(Clone, Copy)]
enum FileOp {
    Lstat,
    OpenRead,
}

impl FileOp {
    fn name(self) -> &'static str {
        match self {
            FileOp::Lstat => "lstat",
            FileOp::OpenRead => "open_read",
        }
    }

    /// `OPS_PER_JOB` of this operation on `file`, as an owned job (the pool takes `'static`
    /// closures).
    fn job(self, file: &Path) -> impl FnOnce() + Send + 'static {
        use std::io::Read;

        let file = file.to_path_buf();
        move || {
            let mut buf = [0u8; 64];
            for _ in 0..OPS_PER_JOB {
                match self {
                    FileOp::Lstat => {
                        black_box(std::fs::symlink_metadata(&file).expect("lstat"));
                    }
                    FileOp::OpenRead => {
                        let mut f = std::fs::File::open(&file).expect("open");
                        black_box(f.read(&mut buf).expect("read"));
                    }
                }
            }
        }
    }
}

fn confined_vs_plain_spawn(c: &mut Criterion) {
    let rt = runtime();
    let ws = tempfile::tempdir().expect("ws");
    let launcher = Launcher::locate(
        Some(Path::new(env!("CARGO_BIN_EXE_tool-sandbox-exec"))),
        Mode::Required,
    )
    .expect("helper");
    let cancel = CancellationToken::new();
    let mut g = c.benchmark_group("bash_true");
    g.sample_size(30);
    g.bench_function("plain_std_command", |b| {
        b.iter(|| {
            black_box(
                std::process::Command::new("bash")
                    .args(["-c", "true"])
                    .output()
                    .expect("bash"),
            )
        })
    });
    let no_pids_cgroup = Rlimits {
        processes: None,
        ..Rlimits::default()
    };
    for (name, network, limits) in [
        ("confined", false, Rlimits::default()),
        ("confined_network", true, Rlimits::default()),
        ("confined_without_pids_cgroup", false, no_pids_cgroup),
    ] {
        let policy = SandboxPolicy::new(ws.path(), FsAccess::ReadWrite, network).expect("policy");
        let cmd = SandboxedCommand::new("bash")
            .args(["-c", "true"])
            .limits(limits);
        g.bench_function(name, |b| {
            b.to_async(&rt).iter(|| async {
                let out = cmd.run(&launcher, &policy, &cancel).await.expect("ran");
                assert!(out.success());
                black_box(out)
            })
        });
    }
    g.finish();
}

criterion_group!(
    benches,
    pool_vs_spawn_blocking,
    file_ops,
    confined_vs_plain_spawn
);
criterion_main!(benches);
