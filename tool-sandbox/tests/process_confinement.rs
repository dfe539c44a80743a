//! Confined processes, tried as an attacker's script would: canaries outside the workspace, a
//! local TCP listener and a sentinel process outside, children that try to outlive the call.

mod common;

use std::net::TcpListener;
use std::path::Path;
use std::time::Duration;

use common::{kernel_confines_processes, launcher, marker, processes_with_marker, Scene};
use test_support::procs::Sentinel;
use tool_sandbox::{
    CancellationToken, FsAccess, Launcher, Mode, Outcome, ProcessOutput, Rlimits, SandboxError,
    SandboxPolicy, SandboxedCommand,
};

async fn bash(policy: &SandboxPolicy, script: &str) -> ProcessOutput {
    bash_with(&launcher(), policy, script).await
}

/// Waits briefly for processes carrying `marker` to vanish; returns those still alive.
async fn survivors(marker: &str) -> Vec<u32> {
    for _ in 0..20 {
        let left = processes_with_marker(marker);
        if left.is_empty() {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    processes_with_marker(marker)
}

#[tokio::test]
async fn script_reports_what_enforced_it() {
    if !kernel_confines_processes("script_reports_what_enforced_it") {
        return;
    }
    let scene = Scene::new();
    let out = bash(&scene.policy(FsAccess::ReadWrite, false), "echo hi").await;
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdout_text(), "hi\n");
    assert_eq!(
        out.stderr_text(),
        "",
        "the status line is not part of stderr"
    );
    // A cgroup's part of the label, where this machine offers a writable hierarchy for it.
    let part = |available: bool, name: &str| {
        if available {
            format!("+{name}")
        } else {
            eprintln!(
                "NOTE script_reports_what_enforced_it: no writable {name} cgroup hierarchy here, \
                 so the label has no +{name}"
            );
            String::new()
        }
    };
    let pids = part(tool_sandbox::cgroup::available(), "pids");
    let mem = part(tool_sandbox::cgroup::memory_available(), "mem");
    assert_eq!(
        out.enforcement.label(),
        format!("landlock-v7+seccomp+pidns+netns+mntns{pids}{mem}")
    );
}

/// A fork bomb that keeps what it forked alive: the process cap must hold it, also when the
/// executor (and so the script) runs as root, which `RLIMIT_NPROC` does not bind.
#[tokio::test]
async fn the_process_cap_holds_a_fork_bomb_even_as_root() {
    if !kernel_confines_processes("the_process_cap_holds_a_fork_bomb_even_as_root") {
        return;
    }
    let root = nix::unistd::geteuid().is_root();
    if root && !tool_sandbox::cgroup::available() {
        eprintln!(
            "SKIP the_process_cap_holds_a_fork_bomb_even_as_root: running as root without a \
             writable pids cgroup hierarchy, so nothing here can cap root's processes"
        );
        return;
    }
    let scene = Scene::new();
    let limits = Rlimits {
        processes: Some(20),
        ..Rlimits::default()
    };
    // Forks children that sleep until killed, counting the forks that succeeded; stops at 200
    // (well above the cap), so an uncapped run ends by itself too.
    let script = r#"
import os, time
n = 0
for _ in range(200):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    n += 1
print(n, flush=True)
"#;
    let out = SandboxedCommand::new("python3")
        .arg("-c")
        .arg(script)
        .limits(limits)
        .timeout(Duration::from_secs(30))
        .run(
            &launcher(),
            &scene.policy(FsAccess::ReadWrite, false),
            &CancellationToken::new(),
        )
        .await
        .expect("ran");
    assert!(out.success(), "{out:?}");
    let forked: u32 = out.stdout_text().trim().parse().expect("a count");
    assert!(
        forked < 20,
        "{forked} processes forked past a cap of 20 (root: {root}); label {}",
        out.enforcement.label()
    );
    assert!(forked > 5, "the cap is far below what was asked: {forked}");
}

#[tokio::test]
async fn read_only_script_writing_in_workspace_gets_erofs() {
    if !kernel_confines_processes("read_only_script_writing_in_workspace_gets_erofs") {
        return;
    }
    let scene = Scene::new();
    let out = bash(
        &scene.policy(FsAccess::ReadOnly, false),
        "cat inside.txt; echo x > new.txt",
    )
    .await;
    assert_eq!(out.stdout_text(), "inside");
    assert_eq!(out.outcome, Outcome::Exited(1));
    // The workspace is a read-only mount in the program's root (Landlock would say EACCES).
    assert!(
        out.stderr_text().contains("Read-only file system"),
        "{out:?}"
    );
    assert!(!scene.ws().join("new.txt").exists());
}

#[tokio::test]
async fn script_cannot_read_write_move_or_delete_a_canary_outside() {
    if !kernel_confines_processes("script_cannot_read_write_move_or_delete_a_canary_outside") {
        return;
    }
    let scene = Scene::new();
    let c = scene.canary();
    let c = c.display();
    let out = bash(
        &scene.policy(FsAccess::ReadWrite, false),
        &format!(
            "cat {c}; echo pwned > {c}; mv {c} stolen.txt; rm -f {c}; ln {c} link.txt; \
             cp {c} copy.txt; echo done"
        ),
    )
    .await;
    assert_eq!(out.stdout_text(), "done\n", "{out:?}");
    assert_eq!(
        std::fs::read_to_string(scene.canary()).expect("canary"),
        "canary"
    );
    for f in ["stolen.txt", "link.txt", "copy.txt"] {
        assert!(!scene.ws().join(f).exists(), "{f} was made");
    }
}

#[tokio::test]
async fn script_cannot_cat_etc_shadow_ls_root_or_write_the_hosts_tmp() {
    if !kernel_confines_processes("script_cannot_cat_etc_shadow_ls_root_or_write_the_hosts_tmp") {
        return;
    }
    let scene = Scene::new();
    let tmp_target = format!("/tmp/x-{}", marker("tmp"));
    let out = bash(
        &scene.policy(FsAccess::ReadWrite, true),
        &format!(
            "cat /etc/shadow; echo rc=$?; ls /root; echo rc=$?; echo x > {tmp_target}; echo rc=$?"
        ),
    )
    .await;
    // Neither is in the program's root; its /tmp is an empty directory it may not write.
    assert_eq!(out.stdout_text(), "rc=1\nrc=2\nrc=1\n", "{out:?}");
    assert_eq!(
        out.stderr_text()
            .matches("No such file or directory")
            .count(),
        2,
        "{out:?}"
    );
    assert!(
        out.stderr_text().contains("Read-only file system"),
        "{out:?}"
    );
    assert!(!Path::new(&tmp_target).exists(), "reached the host's /tmp");
}

#[tokio::test]
async fn non_network_script_cannot_connect_to_a_local_tcp_listener() {
    if !kernel_confines_processes("non_network_script_cannot_connect_to_a_local_tcp_listener") {
        return;
    }
    let scene = Scene::new();
    let listener = TcpListener::bind("127.0.0.1:0").expect("listener");
    let port = listener.local_addr().expect("addr").port();
    let out = bash(
        &scene.policy(FsAccess::ReadWrite, false),
        &format!("echo hi > /dev/tcp/127.0.0.1/{port} && echo connected"),
    )
    .await;
    assert_eq!(out.stdout_text(), "", "{out:?}");
    listener.set_nonblocking(true).expect("nonblocking");
    assert!(listener.accept().is_err(), "the listener got a connection");
}

#[tokio::test]
async fn network_script_still_connects_to_a_local_tcp_listener() {
    if !kernel_confines_processes("network_script_still_connects_to_a_local_tcp_listener") {
        return;
    }
    let scene = Scene::new();
    let listener = TcpListener::bind("127.0.0.1:0").expect("listener");
    let port = listener.local_addr().expect("addr").port();
    let out = bash(
        &scene.policy(FsAccess::ReadOnly, true),
        &format!("echo hi > /dev/tcp/127.0.0.1/{port} && echo connected"),
    )
    .await;
    assert_eq!(out.stdout_text(), "connected\n", "{out:?}");
    assert!(listener.accept().is_ok());
}

#[tokio::test]
async fn script_kill_9_of_a_sentinel_leaves_the_sentinel_alive() {
    if !kernel_confines_processes("script_kill_9_of_a_sentinel_leaves_the_sentinel_alive") {
        return;
    }
    let scene = Scene::new();
    let mut sentinel = Sentinel::start("30");
    let pid = sentinel.pid();
    let out = bash(
        &scene.policy(FsAccess::ReadWrite, true),
        &format!("kill -9 {pid}; echo rc=$?; kill -9 -1; echo done"),
    )
    .await;
    assert!(out.stdout_text().contains("done"), "{out:?}");
    assert!(sentinel.alive(), "the sentinel died: {out:?}");
}

/// A caller that drops the run (an aborted task, a dropped future) kills the helper with
/// `SIGKILL`, which it cannot handle: the tree must die with it, the program itself included.
#[tokio::test]
async fn dropping_the_run_kills_the_whole_tree_the_program_included() {
    if !kernel_confines_processes("dropping_the_run_kills_the_whole_tree_the_program_included") {
        return;
    }
    let scene = Scene::new();
    let m = marker("dropped");
    // `exec -a` makes the program itself carry the marker, as well as its background child.
    let script = format!("(exec -a {m} sleep 300 &); exec -a {m} sleep 300");
    let policy = scene.policy(FsAccess::ReadWrite, false);
    let task = tokio::spawn(async move {
        SandboxedCommand::new("bash")
            .arg("-c")
            .arg(script)
            .run(&launcher(), &policy, &CancellationToken::new())
            .await
    });
    let start = std::time::Instant::now();
    while named(&m).len() < 2 && start.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(named(&m).len(), 2, "the program and its child run");
    task.abort();
    let _ = task.await;
    let start = std::time::Instant::now();
    while !named(&m).is_empty() && start.elapsed() < Duration::from_secs(3) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        named(&m),
        Vec::<u32>::new(),
        "the tree outlived its dropped run"
    );
}

/// Live processes whose `argv[0]` is `name` (set by `exec -a`), not those that only carry it in
/// their arguments, like the helper.
fn named(name: &str) -> Vec<u32> {
    processes_with_marker(name)
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.split(|&b| b == 0).next() == Some(name.as_bytes()))
        })
        .collect()
}

#[tokio::test]
async fn background_setsid_and_nohup_children_do_not_outlive_the_call() {
    if !kernel_confines_processes("background_setsid_and_nohup_children_do_not_outlive_the_call") {
        return;
    }
    let scene = Scene::new();
    let m = marker("escape");
    let script = format!(
        "(touch a; exec -a {m} sleep 300 &); \
         setsid bash -c 'touch b; exec -a {m} sleep 300' & \
         nohup bash -c 'touch c; exec -a {m} sleep 300' >/dev/null 2>&1 & \
         sleep 0.3; echo started"
    );
    let out = bash(&scene.policy(FsAccess::ReadWrite, false), &script).await;
    assert_eq!(out.stdout_text(), "started\n", "{out:?}");
    for f in ["a", "b", "c"] {
        assert!(scene.ws().join(f).exists(), "child {f} never ran: {out:?}");
    }
    assert_eq!(
        survivors(&m).await,
        Vec::<u32>::new(),
        "children outlived the call"
    );
}

#[tokio::test]
async fn timeout_kills_the_whole_tree_and_reports_timeout() {
    if !kernel_confines_processes("timeout_kills_the_whole_tree_and_reports_timeout") {
        return;
    }
    let scene = Scene::new();
    let m = marker("timeout");
    let out = SandboxedCommand::new("bash")
        .arg("-c")
        .arg(format!(
            "(exec -a {m} sleep 300 &); setsid bash -c 'exec -a {m} sleep 300' & echo started; sleep 300"
        ))
        .timeout(Duration::from_millis(700))
        .run(
            &launcher(),
            &scene.policy(FsAccess::ReadWrite, false),
            &CancellationToken::new(),
        )
        .await
        .expect("ran");
    assert_eq!(out.outcome, Outcome::Timeout);
    assert_eq!(out.stdout_text(), "started\n", "partial output is kept");
    assert!(out.elapsed < Duration::from_secs(5), "{:?}", out.elapsed);
    assert_eq!(
        survivors(&m).await,
        Vec::<u32>::new(),
        "the tree survived the timeout"
    );
}

#[tokio::test]
async fn cancellation_kills_the_whole_tree_and_reports_cancelled() {
    if !kernel_confines_processes("cancellation_kills_the_whole_tree_and_reports_cancelled") {
        return;
    }
    let scene = Scene::new();
    let m = marker("cancel");
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        trigger.cancel();
    });
    let out = SandboxedCommand::new("bash")
        .arg("-c")
        .arg(format!("nohup bash -c 'exec -a {m} sleep 300' & sleep 300"))
        .run(
            &launcher(),
            &scene.policy(FsAccess::ReadWrite, false),
            &cancel,
        )
        .await
        .expect("ran");
    assert_eq!(out.outcome, Outcome::Cancelled);
    assert_eq!(
        survivors(&m).await,
        Vec::<u32>::new(),
        "the tree survived cancellation"
    );
}

#[tokio::test]
async fn rlimits_apply_to_the_script() {
    if !kernel_confines_processes("rlimits_apply_to_the_script") {
        return;
    }
    let scene = Scene::new();
    let limits = Rlimits {
        cpu_secs: Some(7),
        address_space_bytes: Some(1 << 30),
        processes: Some(64),
        file_size_bytes: Some(1 << 20),
        open_files: Some(100),
        memory_bytes: None,
    };
    let out = SandboxedCommand::new("bash")
        .arg("-c")
        .arg(
            "echo $(ulimit -t) $(ulimit -v) $(ulimit -n) $(ulimit -f); \
             head -c 3000000 /dev/zero > big; echo rc=$?",
        )
        .limits(limits)
        .run(
            &launcher(),
            &scene.policy(FsAccess::ReadWrite, false),
            &CancellationToken::new(),
        )
        .await
        .expect("ran");
    // ulimit -v and -f count KiB and 1024-byte blocks.
    assert!(
        out.stdout_text().starts_with("7 1048576 100 1024\n"),
        "{out:?}"
    );
    assert!(!out.stdout_text().contains("rc=0"), "{out:?}");
    let size = std::fs::metadata(scene.ws().join("big"))
        .expect("big")
        .len();
    assert!(size <= 1 << 20, "file grew to {size} bytes");
}

#[tokio::test]
async fn environment_is_cleared_to_the_allow_list() {
    if !kernel_confines_processes("environment_is_cleared_to_the_allow_list") {
        return;
    }
    let scene = Scene::new();
    let policy = scene.policy(FsAccess::ReadWrite, false);
    let out = SandboxedCommand::new("env")
        .env("EXTRA", "1")
        .env("TMPDIR", "/tmp")
        .run(&launcher(), &policy, &CancellationToken::new())
        .await
        .expect("ran");
    let mut keys: Vec<String> = out
        .stdout_text()
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, _)| k.to_owned()))
        .collect();
    keys.sort();
    assert_eq!(keys, ["EXTRA", "HOME", "LANG", "PATH", "TMPDIR"], "{out:?}");
    let ws = policy.workspace.display().to_string();
    assert!(
        out.stdout_text().contains(&format!("TMPDIR={ws}\n")),
        "{out:?}"
    );
    assert!(
        out.stdout_text().contains(&format!("HOME={ws}\n")),
        "{out:?}"
    );
}

#[tokio::test]
async fn output_is_capped_and_the_program_never_blocks_on_a_full_pipe() {
    if !kernel_confines_processes("output_is_capped_and_the_program_never_blocks_on_a_full_pipe") {
        return;
    }
    let scene = Scene::new();
    let out = SandboxedCommand::new("bash")
        .arg("-c")
        .arg("head -c 1000000 /dev/zero; head -c 1000000 /dev/zero >&2; echo end >&2")
        .output_cap(1000)
        .run(
            &launcher(),
            &scene.policy(FsAccess::ReadOnly, false),
            &CancellationToken::new(),
        )
        .await
        .expect("ran");
    assert!(out.success(), "{out:?}");
    assert_eq!((out.stdout.len(), out.stdout_truncated), (1000, true));
    assert_eq!((out.stderr.len(), out.stderr_truncated), (1000, true));
}

#[tokio::test]
async fn stdin_is_fed_and_cwd_must_lie_inside_the_workspace() {
    if !kernel_confines_processes("stdin_is_fed_and_cwd_must_lie_inside_the_workspace") {
        return;
    }
    let scene = Scene::new();
    std::fs::create_dir(scene.ws().join("sub")).expect("sub");
    let policy = scene.policy(FsAccess::ReadOnly, false);
    let out = SandboxedCommand::new("bash")
        .arg("-c")
        .arg("pwd; cat")
        .cwd("sub")
        .stdin(b"from stdin".to_vec())
        .run(&launcher(), &policy, &CancellationToken::new())
        .await
        .expect("ran");
    let ws = policy.workspace.display();
    assert_eq!(out.stdout_text(), format!("{ws}/sub\nfrom stdin"));
    let err = SandboxedCommand::new("true")
        .cwd("..")
        .run(&launcher(), &policy, &CancellationToken::new())
        .await
        .expect_err("cwd outside");
    assert_eq!(err.code(), "sandbox_invalid_policy");
}

#[tokio::test]
async fn missing_program_exits_127_and_missing_helper_fails_closed() {
    let scene = Scene::new();
    let policy = scene.policy(FsAccess::ReadOnly, false);
    if kernel_confines_processes("missing_program_exits_127_and_missing_helper_fails_closed") {
        let out = SandboxedCommand::new("no-such-program-xyz")
            .run(&launcher(), &policy, &CancellationToken::new())
            .await
            .expect("ran");
        assert_eq!(out.outcome, Outcome::Exited(127), "{out:?}");
    }
    let err = Launcher::locate(
        Some(Path::new("/nonexistent/tool-sandbox-exec")),
        Mode::Required,
    )
    .expect_err("missing helper");
    assert!(matches!(err, SandboxError::HelperMissing { .. }));
    assert_eq!(err.code(), "sandbox_helper_missing");
}

#[tokio::test]
async fn unconfined_background_child_does_outlive_its_shell_so_the_scan_can_see_survivors() {
    // Pins the test machinery: without the sandbox, the same escape works and is detected.
    let m = marker("control");
    let status = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("(exec -a {m} sleep 30 &)"))
        .status()
        .expect("bash");
    assert!(status.success());
    tokio::time::sleep(Duration::from_millis(100)).await;
    let left = processes_with_marker(&m);
    assert!(!left.is_empty(), "the scan did not see the escaped child");
    for pid in left {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

#[tokio::test]
async fn concurrent_runs_through_one_launcher_keep_their_own_streams_and_codes() {
    if !kernel_confines_processes("concurrent_runs_through_one_launcher_keep_their_own_streams") {
        return;
    }
    let scene = Scene::new();
    let launcher = launcher();
    let runs = (0..12).map(|i| {
        let policy = scene.policy(FsAccess::ReadWrite, i % 3 == 0);
        let launcher = launcher.clone();
        async move {
            let out = SandboxedCommand::new("bash")
                .arg("-c")
                .arg(format!(
                    "read line; echo out-{i}-$line; echo err-{i} >&2; sleep 0.0{i}; exit {i}"
                ))
                .stdin(format!("in-{i}\n"))
                .timeout(Duration::from_secs(20))
                .run(&launcher, &policy, &CancellationToken::new())
                .await
                .expect("ran");
            (i, out)
        }
    });
    for (i, out) in futures::future::join_all(runs).await {
        assert_eq!(out.outcome, Outcome::Exited(i), "{out:?}");
        assert_eq!(out.stdout_text(), format!("out-{i}-in-{i}\n"));
        assert_eq!(out.stderr_text(), format!("err-{i}\n"));
        assert_eq!(out.enforcement.net_namespace, i % 3 != 0, "{out:?}");
    }
}

#[tokio::test]
async fn a_spec_larger_than_the_socket_buffer_reaches_the_program_whole() {
    if !kernel_confines_processes("a_spec_larger_than_the_socket_buffer_reaches_the_program_whole")
    {
        return;
    }
    let scene = Scene::new();
    // Ten arguments of 100 KB: a megabyte of spec, far more than a socket buffer holds.
    let arg = "x".repeat(100_000);
    let mut cmd = SandboxedCommand::new("bash")
        .arg("-c")
        .arg("n=0; for a in \"$@\"; do n=$((n + ${#a})); done; echo $# $n")
        .arg("bash");
    for _ in 0..10 {
        cmd = cmd.arg(arg.clone());
    }
    let out = cmd
        .timeout(Duration::from_secs(20))
        .run(
            &launcher(),
            &scene.policy(FsAccess::ReadOnly, false),
            &CancellationToken::new(),
        )
        .await
        .expect("ran");
    assert!(out.success(), "{out:?}");
    assert_eq!(out.stdout_text(), "10 1000000\n");
}

#[tokio::test]
async fn finished_trees_leave_no_cgroup_behind() {
    if !kernel_confines_processes("finished_trees_leave_no_cgroup_behind") {
        return;
    }
    let Some(hierarchy) = tool_sandbox::cgroup::hierarchy() else {
        eprintln!(
            "\n!!!!! SKIPPED finished_trees_leave_no_cgroup_behind: no writable pids cgroup \
             hierarchy here !!!!!\n"
        );
        return;
    };
    let scene = Scene::new();
    let policy = scene.policy(FsAccess::ReadOnly, false);
    let launcher = launcher();
    for _ in 0..3 {
        assert!(bash_with(&launcher, &policy, "true").await.success());
    }
    drop(launcher);
    // Every cgroup of this crate belongs to a live supervisor (of a test running alongside) or
    // is gone: the zygote removes each tree's cgroup after the tree, and its spares' on exit.
    let dead_owned = || -> Vec<String> {
        std::fs::read_dir(hierarchy)
            .expect("hierarchy")
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|name| {
                name.strip_prefix("tool-sandbox-")
                    .and_then(|rest| rest.split('-').next())
                    .is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists())
            })
            .collect()
    };
    let mut left = dead_owned();
    for _ in 0..100 {
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        left = dead_owned();
    }
    assert!(
        left.is_empty(),
        "cgroups of finished trees left behind: {left:?}"
    );
}

async fn bash_with(launcher: &Launcher, policy: &SandboxPolicy, script: &str) -> ProcessOutput {
    SandboxedCommand::new("bash")
        .arg("-c")
        .arg(script)
        .timeout(Duration::from_secs(20))
        .run(launcher, policy, &CancellationToken::new())
        .await
        .expect("sandboxed bash ran")
}

#[tokio::test]
async fn programs_without_network_cannot_reach_each_other_over_abstract_unix_sockets() {
    if !kernel_confines_processes(
        "programs_without_network_cannot_reach_each_other_over_abstract_unix_sockets",
    ) {
        return;
    }
    let scene = Scene::new();
    let policy = scene.policy(FsAccess::ReadWrite, false);
    let launcher = launcher();
    let name = format!("tool-sandbox-test-{}", std::process::id());
    let server = format!(
        "import socket, time\n\
         s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n\
         s.bind('\\0{name}')\n\
         s.listen(1)\n\
         open('bound', 'w').close()\n\
         s.settimeout(3)\n\
         try:\n    s.accept()\n    print('accepted')\nexcept OSError as e:\n    print('nobody', e)\n"
    );
    let client = format!(
        "import os, socket, time\n\
         for _ in range(300):\n    \
             if os.path.exists('bound'): break\n    \
             time.sleep(0.01)\n\
         c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n\
         try:\n    c.connect('\\0{name}')\n    print('connected')\n\
         except OSError as e:\n    print('refused', e.errno)\n"
    );
    let run = |script: String| {
        let launcher = launcher.clone();
        let policy = policy.clone();
        async move {
            SandboxedCommand::new("python3")
                .arg("-c")
                .arg(script)
                .timeout(Duration::from_secs(20))
                .run(&launcher, &policy, &CancellationToken::new())
                .await
                .expect("ran")
        }
    };
    let (server, client) = tokio::join!(run(server), run(client));
    assert!(client.success(), "{client:?}");
    assert!(
        client.stdout_text().starts_with("refused"),
        "one program reached another's abstract socket: {client:?} / {server:?}"
    );
    assert!(server.stdout_text().starts_with("nobody"), "{server:?}");
}

/// The base seccomp filter is applied once by the helper's zygote and inherited; the class filter
/// (namespaces, socket families) by each spare after it entered its namespaces. Both must be in
/// force in the program: `io_uring_setup` is denied by the base filter only, `unshare` by the
/// class filter only (the program is root of its own user namespace, so without the filter a
/// nested user namespace would be allowed).
#[tokio::test]
async fn programs_get_the_base_and_the_class_seccomp_filters() {
    if !kernel_confines_processes("programs_get_the_base_and_the_class_seccomp_filters") {
        return;
    }
    let scene = Scene::new();
    for network in [false, true] {
        let out = bash(
            &scene.policy(FsAccess::ReadWrite, network),
            r#"perl -e '$p = "\0" x 120; $r = syscall(425, 1, $p); print "io_uring=$r errno=" . ($! + 0) . "\n"'
               unshare -U true 2>/dev/null; echo "unshare=$?""#,
        )
        .await;
        assert!(out.success(), "{out:?}");
        assert_eq!(
            out.stdout_text(),
            format!("io_uring=-1 errno={}\nunshare=1\n", libc::EPERM),
            "network {network}: {out:?}"
        );
    }
}
