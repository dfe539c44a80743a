//! The confined worker pool: jobs run confined, panics come back as errors, a stuck job exhausts
//! only its own pool.

mod common;

use std::time::Duration;

use common::{errno, kernel_confines_threads, Scene};
use test_support::procs::threads_named;
use tool_sandbox::{thread_slice, ConfinedPool, FsAccess, Mode, PoolConfig, SandboxError};

/// A read-only pool of two workers whose hot worker spins for `spin`.
fn spinning_pool(scene: &Scene, name: &str, queue: usize, spin: Duration) -> ConfinedPool {
    ConfinedPool::new(
        &scene.policy(FsAccess::ReadOnly, false),
        Mode::Required,
        PoolConfig {
            workers: 2,
            queue,
            name: name.to_owned(),
            spin,
            slice: None,
        },
    )
    .expect("pool")
}

fn pool(scene: &Scene, access: FsAccess, workers: usize, queue: usize) -> ConfinedPool {
    ConfinedPool::new(
        &scene.policy(access, false),
        Mode::Required,
        PoolConfig {
            workers,
            queue,
            name: format!("{access:?}"),
            ..PoolConfig::default()
        },
    )
    .expect("pool")
}

#[tokio::test]
async fn pool_job_writing_outside_the_workspace_gets_eacces() {
    if !kernel_confines_threads("pool_job_writing_outside_the_workspace_gets_eacces") {
        return;
    }
    let scene = Scene::new();
    let pool = pool(&scene, FsAccess::ReadWrite, 2, 4);
    assert_eq!(pool.enforcement().label(), "landlock-v7+seccomp");
    let canary = scene.canary();
    let inside = scene.ws().join("ok.txt");
    let (outside, inside) = pool
        .run(move || {
            (
                std::fs::write(&canary, "pwned").map_err(|e| errno(&e)),
                std::fs::write(&inside, "ok").map_err(|e| errno(&e)),
            )
        })
        .await
        .expect("job ran");
    assert_eq!(outside, Err(libc::EACCES));
    assert_eq!(inside, Ok(()));
}

#[tokio::test]
async fn panicking_job_comes_back_as_an_error_and_the_worker_lives_on() {
    if !kernel_confines_threads("panicking_job_comes_back_as_an_error_and_the_worker_lives_on") {
        return;
    }
    let scene = Scene::new();
    let pool = pool(&scene, FsAccess::ReadOnly, 1, 0);
    let err = pool
        .run(|| -> u32 { panic!("boom") })
        .await
        .expect_err("panic");
    assert!(
        matches!(&err, SandboxError::JobPanicked(m) if m == "boom"),
        "{err:?}"
    );
    assert_eq!(err.code(), "sandbox_job_panicked");
    assert_eq!(pool.run(|| 7).await.expect("worker alive"), 7);
}

#[tokio::test]
async fn job_stuck_on_a_fifo_exhausts_only_its_own_pool() {
    if !kernel_confines_threads("job_stuck_on_a_fifo_exhausts_only_its_own_pool") {
        return;
    }
    let scene = Scene::new();
    let fifo = scene.ws().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).expect("mkfifo");
    let stuck = pool(&scene, FsAccess::ReadOnly, 1, 0);
    let other = pool(&scene, FsAccess::ReadWrite, 1, 0);
    let path = fifo.clone();
    let blocked = tokio::spawn({
        let stuck = stuck.clone();
        async move {
            stuck
                .run(move || std::fs::read(&path).map(|b| b.len()))
                .await
        }
    });
    // Wait until the job holds the only slot.
    for _ in 0..200 {
        if stuck.available_slots() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let busy = stuck.try_run(|| ()).await.expect_err("no slot left");
    assert_eq!(busy.code(), "sandbox_pool_busy");
    assert_eq!(other.try_run(|| 1).await.expect("other pool unaffected"), 1);
    // Release the reader: open the write end from outside the sandbox.
    std::fs::write(&fifo, b"done").expect("writer");
    let n = tokio::time::timeout(Duration::from_secs(5), blocked)
        .await
        .expect("released")
        .expect("join")
        .expect("job")
        .expect("read");
    assert_eq!(n, 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spinning_pool_runs_every_job_confined_even_with_its_hot_worker_stuck() {
    if !kernel_confines_threads("spinning_pool_runs_every_job_confined") {
        return;
    }
    let scene = Scene::new();
    let pool = spinning_pool(&scene, "spin", 8, Duration::from_micros(50));
    // Back-to-back short jobs, as the executor sends them: each runs confined.
    let outside = scene.canary();
    for _ in 0..50 {
        let path = outside.clone();
        let denied = pool
            .run(move || std::fs::read(&path).map_err(|e| e.raw_os_error()))
            .await
            .expect("ran");
        assert_eq!(denied, Err(Some(13)), "EACCES");
    }
    // The first job blocks whichever worker takes it; the others still run on the other one.
    let (release, wait) = std::sync::mpsc::channel::<()>();
    let stuck = {
        let pool = pool.clone();
        tokio::spawn(async move {
            pool.run(move || {
                let _ = wait.recv_timeout(Duration::from_secs(10));
            })
            .await
        })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    for i in 0..10 {
        let r = tokio::time::timeout(Duration::from_secs(5), pool.run(move || i * 2))
            .await
            .expect("not stuck behind the blocked worker")
            .expect("ran");
        assert_eq!(r, i * 2);
    }
    let _ = release.send(());
    stuck.await.expect("joined").expect("ran");
}

/// With `spin`, one caller's calls in a row all go to the hot worker (it is marked ready for the
/// next job before the caller gets the result), never to the shared queue, whose workers sleep (a
/// thread wake-up costs tens of microseconds on a small machine).
#[tokio::test]
async fn back_to_back_calls_of_one_caller_all_find_the_hot_worker() {
    if !kernel_confines_threads("back_to_back_calls_of_one_caller_all_find_the_hot_worker") {
        return;
    }
    let scene = Scene::new();
    // Long enough that the hot worker never falls asleep between two calls here.
    let pool = spinning_pool(&scene, "hot", 4, Duration::from_millis(200));
    let mut threads = std::collections::BTreeMap::new();
    for _ in 0..500 {
        let name = pool
            .run(|| std::thread::current().name().map(str::to_owned))
            .await
            .expect("ran");
        *threads.entry(name).or_insert(0) += 1;
    }
    assert_eq!(
        threads,
        std::collections::BTreeMap::from([(Some("hot-0".to_owned()), 500)]),
        "calls fell back to the shared queue"
    );
}

/// Many callers at once on the shared queue (no hot worker): every job runs once, confined, its
/// result goes to its own caller, and each worker takes jobs; once the pool is dropped its
/// workers exit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bursts_on_the_shared_queue_all_run_and_the_workers_exit_with_the_pool() {
    if !kernel_confines_threads("bursts_on_the_shared_queue_all_run") {
        return;
    }
    let scene = Scene::new();
    let pool = ConfinedPool::new(
        &scene.policy(FsAccess::ReadOnly, false),
        Mode::Required,
        PoolConfig {
            workers: 3,
            queue: 64,
            name: "burst".to_owned(),
            spin: Duration::ZERO,
            slice: None,
        },
    )
    .expect("pool");
    let outside = scene.canary();
    let mut threads = std::collections::HashSet::new();
    for round in 0..40 {
        let jobs = (0..16).map(|i| {
            let path = outside.clone();
            pool.run(move || {
                // Long enough that the burst spreads over the workers.
                std::thread::sleep(Duration::from_micros(200));
                let denied = std::fs::read(&path).map_err(|e| e.raw_os_error());
                (round * 100 + i, denied, std::thread::current().id())
            })
        });
        for (i, ran) in futures::future::join_all(jobs)
            .await
            .into_iter()
            .enumerate()
        {
            let (n, denied, thread) = ran.expect("ran");
            assert_eq!(n, round * 100 + i, "a result went to another caller");
            assert_eq!(denied, Err(Some(13)), "EACCES");
            threads.insert(thread);
        }
    }
    assert_eq!(threads.len(), 3, "every worker took jobs: {threads:?}");
    // Dropping the pool ends its idle workers: their threads leave the process.
    assert_eq!(threads_named("burst-").len(), 3);
    drop(pool);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !threads_named("burst-").is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "workers still running after the pool was dropped"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The scheduler slices of this process's threads whose name starts with `prefix`; `None`
/// where the kernel does not show them.
fn slices_of(prefix: &str) -> Option<Vec<Duration>> {
    threads_named(prefix)
        .iter()
        .map(|dir| thread_slice(dir))
        .collect()
}

/// Workers ask for the slice they are configured with, before they confine themselves (their
/// filter might not allow it after); without one they keep the kernel's.
#[tokio::test]
async fn workers_run_with_the_configured_scheduler_slice() {
    if !kernel_confines_threads("workers_run_with_the_configured_scheduler_slice") {
        return;
    }
    if slices_of("").is_none_or(|s| s.is_empty()) {
        eprintln!("SKIPPED: this kernel does not show se.slice in /proc/self/task/*/sched");
        return;
    }
    let scene = Scene::new();
    let short = ConfinedPool::new(
        &scene.policy(FsAccess::ReadOnly, false),
        Mode::Required,
        PoolConfig {
            workers: 2,
            name: "sliced".to_owned(),
            spin: Duration::from_micros(50),
            slice: Some(Duration::from_micros(250)),
            ..PoolConfig::default()
        },
    )
    .expect("pool");
    let plain = ConfinedPool::new(
        &scene.policy(FsAccess::ReadOnly, false),
        Mode::Required,
        PoolConfig {
            workers: 2,
            name: "unsliced".to_owned(),
            ..PoolConfig::default()
        },
    )
    .expect("pool");
    // Both still run jobs.
    assert_eq!(short.run(|| 1).await.expect("ran"), 1);
    assert_eq!(plain.run(|| 2).await.expect("ran"), 2);
    let sliced = slices_of("sliced-").expect("slices");
    let asked = Duration::from_micros(250);
    assert_eq!(sliced, vec![asked, asked], "the hot worker and the other");
    let kernel = slices_of("unsliced-").expect("slices");
    assert_eq!(kernel.len(), 2);
    assert!(kernel.iter().all(|&s| s != asked), "{kernel:?}");
}
