//! A confined thread, tried as an attacker would: canaries outside the workspace, a local TCP
//! listener and a sentinel process started outside the sandbox.

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::time::Duration;

use common::{errno, kernel_confines_threads, on_confined_thread, Scene};
use test_support::procs::Sentinel;
use tool_sandbox::{confine_current_thread, FsAccess, Mode, SandboxError, SandboxPolicy};

#[test]
fn read_only_thread_writing_in_workspace_gets_eacces() {
    if !kernel_confines_threads("read_only_thread_writing_in_workspace_gets_eacces") {
        return;
    }
    let scene = Scene::new();
    let target = scene.ws().join("new.txt");
    let existing = scene.ws().join("inside.txt");
    let (create, overwrite, remove) =
        on_confined_thread(scene.policy(FsAccess::ReadOnly, false), move || {
            (
                std::fs::write(&target, "x").map_err(|e| errno(&e)),
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&existing)
                    .map(|_| ())
                    .map_err(|e| errno(&e)),
                std::fs::remove_file(&existing).map_err(|e| errno(&e)),
            )
        });
    assert_eq!(create, Err(libc::EACCES));
    assert_eq!(overwrite, Err(libc::EACCES));
    assert_eq!(remove, Err(libc::EACCES));
    assert_eq!(
        std::fs::read_to_string(scene.ws().join("inside.txt")).expect("still there"),
        "inside"
    );
}

#[test]
fn read_only_thread_reads_workspace_but_not_a_canary_outside() {
    if !kernel_confines_threads("read_only_thread_reads_workspace_but_not_a_canary_outside") {
        return;
    }
    let scene = Scene::new();
    let inside = scene.ws().join("inside.txt");
    let canary = scene.canary();
    let (ok, outside) = on_confined_thread(scene.policy(FsAccess::ReadOnly, false), move || {
        (
            std::fs::read_to_string(&inside).map_err(|e| errno(&e)),
            std::fs::read_to_string(&canary).map_err(|e| errno(&e)),
        )
    });
    assert_eq!(ok, Ok("inside".to_owned()));
    assert_eq!(outside, Err(libc::EACCES));
}

#[test]
fn read_write_thread_writes_inside_only() {
    if !kernel_confines_threads("read_write_thread_writes_inside_only") {
        return;
    }
    let scene = Scene::new();
    let inside = scene.ws().join("sub");
    let outside_new = scene.outside.path().join("planted.txt");
    let canary = scene.canary();
    let outside_new2 = outside_new.clone();
    let (made, planted, overwritten, moved_out) =
        on_confined_thread(scene.policy(FsAccess::ReadWrite, false), move || {
            let made = std::fs::create_dir(&inside)
                .and_then(|()| std::fs::write(inside.join("f.txt"), "ok"))
                .map_err(|e| errno(&e));
            let planted = std::fs::write(&outside_new2, "x").map_err(|e| errno(&e));
            let overwritten = std::fs::write(&canary, "pwned").map_err(|e| errno(&e));
            // Moving a workspace file out (rename across the boundary) is refused too.
            let moved_out =
                std::fs::rename(inside.join("f.txt"), &outside_new2).map_err(|e| errno(&e));
            (made, planted, overwritten, moved_out)
        });
    assert_eq!(made, Ok(()));
    assert_eq!(planted, Err(libc::EACCES));
    assert_eq!(overwritten, Err(libc::EACCES));
    assert!(moved_out.is_err(), "rename out of the workspace succeeded");
    assert!(!outside_new.exists());
    assert_eq!(
        std::fs::read_to_string(scene.canary()).expect("canary"),
        "canary"
    );
}

#[test]
fn confined_thread_cannot_read_etc_shadow_nor_root_home() {
    if !kernel_confines_threads("confined_thread_cannot_read_etc_shadow_nor_root_home") {
        return;
    }
    let scene = Scene::new();
    let (shadow, root, usr) = on_confined_thread(scene.policy(FsAccess::ReadWrite, true), || {
        (
            std::fs::read("/etc/shadow")
                .map(|_| ())
                .map_err(|e| errno(&e)),
            std::fs::read_dir("/root")
                .map(|_| ())
                .map_err(|e| errno(&e)),
            std::fs::read_dir("/usr/bin")
                .map(|_| ())
                .map_err(|e| errno(&e)),
        )
    });
    assert_eq!(shadow, Err(libc::EACCES));
    assert_eq!(root, Err(libc::EACCES));
    assert_eq!(usr, Ok(()), "system paths stay readable");
}

#[test]
fn non_network_thread_cannot_connect_to_a_local_tcp_listener() {
    if !kernel_confines_threads("non_network_thread_cannot_connect_to_a_local_tcp_listener") {
        return;
    }
    let scene = Scene::new();
    let listener = TcpListener::bind("127.0.0.1:0").expect("listener");
    let addr = listener.local_addr().expect("addr");
    let refused = on_confined_thread(scene.policy(FsAccess::ReadWrite, false), move || {
        TcpStream::connect_timeout(&addr, Duration::from_secs(2)).map_err(|e| errno(&e))
    });
    // seccomp refuses the AF_INET socket before Landlock would refuse the connect.
    assert_eq!(refused.map(|_| ()), Err(libc::EPERM));
    listener.set_nonblocking(true).expect("nonblocking");
    assert!(listener.accept().is_err(), "the listener got a connection");
}

#[test]
fn non_network_thread_cannot_create_inet_inet6_or_netlink_sockets() {
    if !kernel_confines_threads("non_network_thread_cannot_create_inet_inet6_or_netlink_sockets") {
        return;
    }
    use nix::sys::socket::{socket, AddressFamily, SockFlag, SockProtocol, SockType};
    let scene = Scene::new();
    let (v4, v6, netlink, unix) =
        on_confined_thread(scene.policy(FsAccess::ReadWrite, false), || {
            (
                UdpSocket::bind("127.0.0.1:0")
                    .map(|_| ())
                    .map_err(|e| errno(&e)),
                UdpSocket::bind("[::1]:0")
                    .map(|_| ())
                    .map_err(|e| errno(&e)),
                socket(
                    AddressFamily::Netlink,
                    SockType::Raw,
                    SockFlag::empty(),
                    SockProtocol::NetlinkRoute,
                )
                .map(|_| ())
                .map_err(|e| e as i32),
                std::os::unix::net::UnixStream::pair()
                    .map(|_| ())
                    .map_err(|e| errno(&e)),
            )
        });
    assert_eq!(v4, Err(libc::EPERM));
    assert_eq!(v6, Err(libc::EPERM));
    assert_eq!(netlink, Err(libc::EPERM));
    assert_eq!(unix, Ok(()), "AF_UNIX socket pairs stay allowed");
}

#[test]
fn network_thread_still_connects_to_a_local_tcp_listener() {
    if !kernel_confines_threads("network_thread_still_connects_to_a_local_tcp_listener") {
        return;
    }
    let scene = Scene::new();
    let listener = TcpListener::bind("127.0.0.1:0").expect("listener");
    let addr = listener.local_addr().expect("addr");
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().expect("accept");
        let mut buf = [0u8; 2];
        s.read_exact(&mut buf).expect("read");
        buf
    });
    on_confined_thread(scene.policy(FsAccess::ReadOnly, true), move || {
        let mut s = TcpStream::connect(addr).expect("open_world connects");
        s.write_all(b"hi").expect("write");
    });
    assert_eq!(&server.join().expect("server"), b"hi");
}

#[test]
fn confined_thread_cannot_kill_a_sentinel_outside() {
    if !kernel_confines_threads("confined_thread_cannot_kill_a_sentinel_outside") {
        return;
    }
    let scene = Scene::new();
    let mut sentinel = Sentinel::start("30");
    let pid = nix::unistd::Pid::from_raw(sentinel.pid() as i32);
    let killed = on_confined_thread(scene.policy(FsAccess::ReadWrite, true), move || {
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL).map_err(|e| e as i32)
    });
    assert_eq!(killed, Err(libc::EPERM));
    assert!(sentinel.alive(), "the sentinel died");
}

#[test]
fn confined_thread_cannot_ptrace_mount_or_unshare() {
    if !kernel_confines_threads("confined_thread_cannot_ptrace_mount_or_unshare") {
        return;
    }
    use nix::sched::{unshare, CloneFlags};
    let scene = Scene::new();
    let ws = scene.ws().to_path_buf();
    let sentinel = Sentinel::start("30");
    let pid = nix::unistd::Pid::from_raw(sentinel.pid() as i32);
    let (unshared, traced, mounted) =
        on_confined_thread(scene.policy(FsAccess::ReadWrite, true), move || {
            let unshared = unshare(CloneFlags::CLONE_NEWNS).map_err(|e| e as i32);
            let traced = nix::sys::ptrace::attach(pid).map_err(|e| e as i32);
            let mounted = std::process::Command::new("mount")
                .args(["-t", "tmpfs", "none"])
                .arg(&ws)
                .output()
                .map(|o| {
                    (
                        o.status.success(),
                        String::from_utf8_lossy(&o.stderr).into_owned(),
                    )
                });
            (unshared, traced, mounted)
        });
    assert_eq!(unshared, Err(libc::EPERM));
    assert_eq!(traced, Err(libc::EPERM));
    let (ok, stderr) = mounted.expect("mount runs");
    assert!(!ok, "mount succeeded inside the sandbox");
    assert!(
        stderr.contains("ermission denied") || stderr.contains("not permitted"),
        "{stderr}"
    );
}

#[test]
fn other_threads_of_the_process_stay_unconfined() {
    if !kernel_confines_threads("other_threads_of_the_process_stay_unconfined") {
        return;
    }
    let scene = Scene::new();
    on_confined_thread(scene.policy(FsAccess::ReadOnly, false), || ());
    std::fs::write(scene.outside.path().join("free.txt"), "x")
        .expect("the test thread itself is not confined");
}

#[test]
fn confining_to_a_missing_workspace_fails_closed() {
    let scene = Scene::new();
    let mut policy = scene.policy(FsAccess::ReadOnly, false);
    policy.workspace = scene.ws().join("does-not-exist");
    let err = std::thread::spawn(move || confine_current_thread(&policy, Mode::Required))
        .join()
        .expect("thread");
    assert!(
        matches!(err, Err(SandboxError::InvalidPolicy(_))),
        "{err:?}"
    );
    assert!(SandboxPolicy::new("/does/not/exist", FsAccess::ReadOnly, false).is_err());
}

#[test]
fn off_mode_enforces_nothing_and_says_so() {
    let scene = Scene::new();
    let policy = scene.policy(FsAccess::ReadOnly, false);
    let e = std::thread::spawn(move || confine_current_thread(&policy, Mode::Off))
        .join()
        .expect("thread")
        .expect("off");
    assert_eq!(e.label(), "none");
}
