//! Regression tests for the file-system attacks on the example tools, through the executor with
//! every approval granted (only the guards and the workspace handle stand in the way). Canaries
//! live in a directory next to the workspace, never inside it.
#![cfg(unix)]

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use test_support::site::{snapshot, Site, CANARY};
use tool_core::approval::FixedApprover;
use tool_core::call::ToolCall;
use tool_core::{CallOptions, CallStatus, Executor, ExecutorConfig};

/// The example tools over `ws`; `approve` grants every approval, otherwise none is configured
/// (what needs approval is refused). No error budget: the attacks fail often on purpose.
fn executor(ws: &Path, approve: bool) -> Arc<Executor> {
    let registry = Arc::new(tool_examples::registry().expect("example registry"));
    let mut config = ExecutorConfig::new(ws).error_budget(0);
    if approve {
        config = config.approver(Arc::new(FixedApprover::allow()));
    }
    Arc::new(Executor::new(registry, config).expect("executor"))
}

fn call(name: &str, args: Value) -> ToolCall {
    let Value::Object(map) = args else {
        panic!("arguments must be an object")
    };
    ToolCall::new(name, map)
}

/// Atomically point the symlink `link` at `target` (a new link renamed over the old one).
fn repoint(link: &Path, target: &Path) {
    let tmp = link.with_extension("next");
    let _ = std::fs::remove_file(&tmp);
    symlink(target, &tmp).expect("symlink");
    std::fs::rename(&tmp, link).expect("rename over the link");
}

/// A thread that flips `link` between two targets until told to stop, counting its flips.
struct Flipper {
    stop: Arc<AtomicBool>,
    flips: Arc<AtomicU64>,
    thread: std::thread::JoinHandle<()>,
}

impl Flipper {
    fn start(link: PathBuf, a: PathBuf, b: PathBuf) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flips = Arc::new(AtomicU64::new(0));
        let (flag, count) = (Arc::clone(&stop), Arc::clone(&flips));
        let thread = std::thread::spawn(move || {
            let mut n = 0u64;
            while !flag.load(Ordering::Relaxed) {
                repoint(&link, if n % 2 == 0 { &b } else { &a });
                n += 1;
                count.store(n, Ordering::Relaxed);
            }
            repoint(&link, &a);
        });
        Flipper {
            stop,
            flips,
            thread,
        }
    }

    /// `true` while the calls should go on: fewer than `calls` made, or the link has not yet
    /// flipped `flips` times (on a busy machine the thread may start late), within a deadline.
    fn keep_going(&self, made: usize, calls: usize, flips: u64, started: Instant) -> bool {
        (made < calls || self.flips.load(Ordering::Relaxed) < flips)
            && started.elapsed() < Duration::from_secs(60)
    }

    fn stop(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().expect("flipper");
        self.flips.load(Ordering::Relaxed)
    }
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

#[tokio::test]
async fn write_file_with_a_call_id_that_climbs_out_neither_moves_nor_deletes_the_outside_file() {
    let f = Site::new();
    let exec = executor(&f.ws, true);
    let session = exec.new_session();
    // The directory the old temporary name `.t.txt.tmp-{call_id}` would have climbed out of.
    let prep = exec
        .execute(
            &session,
            call(
                "write_file",
                json!({"path": ".t.txt.tmp-../keep", "content": "k"}),
            ),
            CallOptions::default(),
        )
        .await;
    assert_eq!(prep.status, CallStatus::Ok, "{prep:?}");
    let before = snapshot(&f.outside);

    let attack = call("write_file", json!({"path": "t.txt", "content": "mine"}))
        .with_id("../../../outside/secret.txt");
    let r = exec.execute(&session, attack, CallOptions::default()).await;
    assert_eq!(r.status, CallStatus::Ok, "{r:?}");
    assert_eq!(r.call_id, "../../../outside/secret.txt");

    assert_eq!(
        snapshot(&f.outside),
        before,
        "the outside file is untouched"
    );
    assert_eq!(
        std::fs::read_to_string(f.ws.join("t.txt")).expect("written"),
        "mine"
    );
    let mut names: Vec<String> = std::fs::read_dir(&f.ws)
        .expect("ls")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, [".t.txt.tmp-..", "t.txt"], "no temporary file left");
}

#[tokio::test]
async fn a_hard_link_to_an_outside_file_is_not_read_by_read_file() {
    let f = Site::new();
    std::fs::hard_link(f.outside.join("secret.txt"), f.ws.join("notes.txt")).expect("hard link");
    std::fs::write(f.ws.join("plain.txt"), "plain").expect("plain");
    // No approver: read_only runs without approval, so only the read itself can refuse.
    let exec = executor(&f.ws, false);
    let session = exec.new_session();

    let ok = exec
        .execute(
            &session,
            call("read_file", json!({"path": "plain.txt", "max_bytes": 100})),
            CallOptions::default(),
        )
        .await;
    assert_eq!(ok.output, Some(json!("plain")), "{ok:?}");

    let r = exec
        .execute(
            &session,
            call("read_file", json!({"path": "notes.txt", "max_bytes": 100})),
            CallOptions::default(),
        )
        .await;
    assert_eq!(r.status, CallStatus::Failed, "{r:?}");
    let message = r.message.clone().unwrap_or_default();
    assert!(message.contains("hard link"), "{message}");
    assert_eq!(r.error_code.as_deref(), Some("hard_linked"), "{r:?}");
    assert!(r.output.is_none());
    assert!(!format!("{r:?}").contains(CANARY), "{r:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_symlink_swapped_between_check_and_open_never_leaks_the_outside_file() {
    let f = Site::new();
    std::fs::write(f.ws.join("inside.txt"), "inside").expect("inside");
    let link = f.ws.join("flip");
    symlink("inside.txt", &link).expect("link");
    let exec = executor(&f.ws, false);
    let flipper = Arc::new(Flipper::start(
        link,
        PathBuf::from("inside.txt"),
        PathBuf::from("../outside/secret.txt"),
    ));
    let started = Instant::now();

    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..4 {
        let exec = Arc::clone(&exec);
        let flipper = Arc::clone(&flipper);
        tasks.spawn(async move {
            let session = exec.new_session();
            let (mut inside, mut leaked, mut refused) = (0, 0, 0);
            while flipper.keep_going(inside + leaked + refused, 160, 640, started) {
                let r = exec
                    .execute(
                        &session,
                        call("read_file", json!({"path": "flip", "max_bytes": 100})),
                        CallOptions::default(),
                    )
                    .await;
                if format!("{r:?}").contains(CANARY) {
                    leaked += 1;
                } else if r.output == Some(json!("inside")) {
                    inside += 1;
                } else {
                    refused += 1;
                }
            }
            (inside, leaked, refused)
        });
    }
    let (mut inside, mut leaked, mut refused) = (0, 0, 0);
    while let Some(counts) = tasks.join_next().await {
        let (i, l, r) = counts.expect("reader task");
        inside += i;
        leaked += l;
        refused += r;
    }
    let flips = Arc::into_inner(flipper).expect("readers done").stop();
    let total = inside + leaked + refused;

    assert!(total >= 640 && flips >= 640, "{total} reads, {flips} flips");
    assert_eq!(
        leaked, 0,
        "{leaked} of {total} reads returned the outside file ({flips} flips)"
    );
    assert!(
        inside > 0,
        "some reads ran while the link pointed inside ({refused} refused)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_file_on_a_fifo_returns_at_once_and_many_do_not_exhaust_the_blocking_pool() {
    let f = Site::new();
    mkfifo(&f.ws.join("pipe"));
    std::fs::write(f.ws.join("plain.txt"), "plain").expect("plain");
    let exec = executor(&f.ws, false);
    let session = exec.new_session();

    let one = tokio::time::timeout(
        Duration::from_secs(10),
        exec.execute(
            &session,
            call("read_file", json!({"path": "pipe", "max_bytes": 100})),
            CallOptions::default(),
        ),
    )
    .await
    .expect("a FIFO read returns at once");
    assert_eq!(one.status, CallStatus::Failed, "{one:?}");
    let message = one.message.clone().unwrap_or_default();
    assert!(
        message.contains("FIFO") && message.contains("not a regular file"),
        "{message}"
    );
    // The refusal has a code of its own, which reaches the model with the message.
    assert_eq!(
        one.error_code.as_deref(),
        Some("not_a_regular_file"),
        "{one:?}"
    );

    // More FIFO reads at once than tokio's blocking pool has threads (512).
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..600 {
        let exec = Arc::clone(&exec);
        tasks.spawn(async move {
            let session = exec.new_session();
            exec.execute(
                &session,
                call("read_file", json!({"path": "pipe", "max_bytes": 100})),
                CallOptions::default(),
            )
            .await
        });
    }
    let all = tokio::time::timeout(Duration::from_secs(60), async {
        let mut failed = 0;
        while let Some(r) = tasks.join_next().await {
            let r = r.expect("task");
            assert!(r.message.as_deref().unwrap_or("").contains("FIFO"), "{r:?}");
            failed += 1;
        }
        failed
    })
    .await
    .expect("600 FIFO reads all return");
    assert_eq!(all, 600);

    let later = tokio::time::timeout(
        Duration::from_secs(10),
        exec.execute(
            &session,
            call("read_file", json!({"path": "plain.txt", "max_bytes": 100})),
            CallOptions::default(),
        ),
    )
    .await
    .expect("a later call still runs");
    assert_eq!(later.output, Some(json!("plain")), "{later:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn list_write_and_delete_through_a_directory_link_swapped_to_outside_stay_inside() {
    let f = Site::new();
    std::fs::write(f.outside.join("victim.txt"), CANARY).expect("outside victim");
    let inside = f.ws.join("inside_dir");
    std::fs::create_dir_all(&inside).expect("inside dir");
    std::fs::write(inside.join("only_inside.txt"), "x").expect("inside file");
    let link = f.ws.join("d");
    symlink("inside_dir", &link).expect("link");
    let before = snapshot(&f.outside);
    let exec = executor(&f.ws, true);
    let flipper = Arc::new(Flipper::start(
        link,
        PathBuf::from("inside_dir"),
        PathBuf::from("../outside"),
    ));
    let started = Instant::now();

    let mut tasks = tokio::task::JoinSet::new();
    for worker in 0..3 {
        let exec = Arc::clone(&exec);
        let inside = inside.clone();
        let flipper = Arc::clone(&flipper);
        tasks.spawn(async move {
            let session = exec.new_session();
            let mut listed_outside = Vec::new();
            let mut outcomes = BTreeMap::<String, usize>::new();
            let mut i = 0;
            // The writer also goes on until one of its writes went through the link while it
            // pointed inside (on a loaded machine the flips may land so that none did yet), so
            // that the last assertion below checks the writes really ran.
            let landed = |outcomes: &BTreeMap<String, usize>| outcomes.contains_key("ok");
            while flipper.keep_going(i, 200, 600, started)
                || (worker == 1
                    && !landed(&outcomes)
                    && started.elapsed() < Duration::from_secs(60))
            {
                i += 1;
                let c = match worker {
                    0 => call("list_dir", json!({"path": "d"})),
                    1 => call(
                        "write_file",
                        json!({"path": format!("d/new-{i}.txt"), "content": "pwned"}),
                    ),
                    _ => {
                        let _ = std::fs::write(inside.join("victim.txt"), "inside victim");
                        call("delete_file", json!({"path": "d/victim.txt"}))
                    }
                };
                let r = exec.execute(&session, c, CallOptions::default()).await;
                let text = format!("{r:?}");
                if text.contains("secret.txt") || text.contains(CANARY) {
                    listed_outside.push(text);
                }
                if worker == 1 {
                    let code = r
                        .error_code
                        .clone()
                        .or_else(|| r.code.map(|c| c.as_str().to_owned()));
                    *outcomes
                        .entry(code.unwrap_or_else(|| "ok".to_owned()))
                        .or_insert(0) += 1;
                }
            }
            (listed_outside, outcomes)
        });
    }
    let mut seen = Vec::new();
    let mut writes = BTreeMap::new();
    while let Some(found) = tasks.join_next().await {
        let (listed, outcomes) = found.expect("worker");
        seen.extend(listed);
        for (code, n) in outcomes {
            *writes.entry(code).or_insert(0) += n;
        }
    }
    let flips = Arc::into_inner(flipper).expect("workers done").stop();
    assert!(flips >= 600, "{flips} flips");

    assert!(
        seen.is_empty(),
        "outside entries reached the model: {seen:?}"
    );
    assert_eq!(
        snapshot(&f.outside),
        before,
        "nothing outside was created, changed or deleted ({flips} flips)"
    );
    assert!(
        std::fs::read_dir(&inside).expect("ls").any(|e| e
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .starts_with("new-")),
        "some writes landed inside (the writes' outcomes by code: {writes:?}, {flips} flips)"
    );
}
