//! What a confined thread can reach of the host beyond reading and writing files. A thread shares
//! the executor's file system view (it cannot have a mount namespace of its own), so seccomp
//! denies it the metadata calls and UNIX sockets; the last tests pin what still reaches the host,
//! as the crate docs say. Each attack runs on an unconfined thread first, as a control.

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixDatagram, UnixListener, UnixStream};
use std::path::{Path, PathBuf};

use common::{errno, kernel_confines_threads, on_confined_thread, Scene, Sockets};
use tool_sandbox::{default_system_read_paths, FsAccess, SandboxPolicy};

/// A policy that may also read the scene's outside directory, so the thread can open the canary
/// read-only: what an attacker needs for the descriptor-based calls.
fn reading_outside(scene: &Scene, access: FsAccess) -> SandboxPolicy {
    let mut paths = default_system_read_paths();
    paths.push(scene.outside.path().to_path_buf());
    scene
        .policy(access, false)
        .with_system_read_paths(paths)
        .expect("policy")
}

/// Every way to change or read a file's metadata, path- and descriptor-based: the errno of each.
fn metadata_attack(file: &Path) -> Vec<(&'static str, Result<(), i32>)> {
    let io = |r: std::io::Result<()>| r.map_err(|e| errno(&e));
    let rx = |r: rustix::io::Result<()>| r.map_err(|e| e.raw_os_error());
    let opened = std::fs::File::open(file);
    // Reads first: the writes below remove the attribute they read.
    let fget = opened
        .as_ref()
        .ok()
        .map(|f| rx(rustix::fs::fgetxattr(f, "user.mark", &mut [0u8; 16][..]).map(drop)));
    let mut results = vec![
        (
            "getxattr",
            rx(rustix::fs::getxattr(file, "user.mark", &mut [0u8; 16][..]).map(drop)),
        ),
        (
            "chmod",
            io(std::fs::set_permissions(
                file,
                std::fs::Permissions::from_mode(0o4777),
            )),
        ),
        ("chown", io(std::os::unix::fs::chown(file, None, Some(1)))),
        ("lchown", io(std::os::unix::fs::lchown(file, None, Some(2)))),
        (
            "utimensat",
            rx(rustix::fs::utimensat(
                rustix::fs::CWD,
                file,
                &rustix::fs::Timestamps {
                    last_access: rustix::fs::Timespec {
                        tv_sec: 1,
                        tv_nsec: 0,
                    },
                    last_modification: rustix::fs::Timespec {
                        tv_sec: 1,
                        tv_nsec: 0,
                    },
                },
                rustix::fs::AtFlags::empty(),
            )),
        ),
        (
            "setxattr",
            rx(rustix::fs::setxattr(
                file,
                "user.planted",
                b"x",
                rustix::fs::XattrFlags::empty(),
            )),
        ),
        (
            "removexattr",
            rx(rustix::fs::removexattr(file, "user.mark")),
        ),
    ];
    match opened {
        Ok(f) => {
            results.extend([
                (
                    "fchmod",
                    io(f.set_permissions(std::fs::Permissions::from_mode(0o4777))),
                ),
                ("fchown", io(std::os::unix::fs::fchown(&f, None, Some(3)))),
                (
                    "futimens",
                    io(f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(7))),
                ),
                (
                    "fsetxattr",
                    rx(rustix::fs::fsetxattr(
                        &f,
                        "user.planted",
                        b"x",
                        rustix::fs::XattrFlags::empty(),
                    )),
                ),
                ("fgetxattr", fget.unwrap_or(Ok(()))),
            ]);
        }
        Err(e) => results.push(("open", Err(errno(&e)))),
    }
    results
}

fn snapshot(path: &Path) -> (u32, i64, u32, usize) {
    let m = std::fs::metadata(path).expect("metadata");
    let xattrs = rustix::fs::listxattr(path, &mut [0u8; 256][..]).unwrap_or(0);
    (m.mode(), m.mtime(), m.gid(), xattrs)
}

#[test]
fn a_confined_thread_cannot_change_or_read_host_metadata() {
    if !kernel_confines_threads("a_confined_thread_cannot_change_or_read_host_metadata") {
        return;
    }
    for access in [FsAccess::ReadOnly, FsAccess::ReadWrite] {
        let scene = Scene::new();
        let canary = scene.canary();
        rustix::fs::setxattr(&canary, "user.mark", b"1", rustix::fs::XattrFlags::empty())
            .expect("this file system takes user xattrs");
        let before = snapshot(&canary);
        // The control: the same calls on an unconfined thread change the file.
        let control_file = scene.outside.path().join("control.txt");
        std::fs::write(&control_file, "c").expect("control file");
        rustix::fs::setxattr(
            &control_file,
            "user.mark",
            b"1",
            rustix::fs::XattrFlags::empty(),
        )
        .expect("xattr");
        let control_before = snapshot(&control_file);
        let control = metadata_attack(&control_file);
        assert!(control.iter().all(|(_, r)| r.is_ok()), "{control:?}");
        assert_ne!(snapshot(&control_file), control_before);

        let target = canary.clone();
        let results = on_confined_thread(reading_outside(&scene, access), move || {
            metadata_attack(&target)
        });
        for (call, result) in &results {
            assert_eq!(*result, Err(libc::EPERM), "{access:?}: {call}: {results:?}");
        }
        assert_eq!(results.len(), 12, "every call was tried: {results:?}");
        assert_eq!(snapshot(&canary), before, "{access:?}");
    }
}

#[test]
fn a_confined_thread_cannot_reach_pathname_unix_sockets_unless_its_tool_declares_one() {
    if !kernel_confines_threads("a_confined_thread_cannot_reach_pathname_unix_sockets") {
        return;
    }
    let scene = Scene::new();
    let sockets = Sockets::new();
    let (stream_path, dgram_path) = (&sockets.stream_path, &sockets.datagram_path);
    let (listener, dgram) = (&sockets.stream, &sockets.datagram);
    let attack = |stream: PathBuf, datagram: PathBuf| {
        move || {
            (
                UnixStream::connect(&stream)
                    .map(drop)
                    .map_err(|e| errno(&e)),
                UnixDatagram::unbound()
                    .and_then(|d| d.send_to(b"hi", &datagram))
                    .map(drop)
                    .map_err(|e| errno(&e)),
                UnixDatagram::pair().map(drop).map_err(|e| errno(&e)),
                // A stream pair reaches only itself: allowed.
                UnixStream::pair().map(drop).map_err(|e| errno(&e)),
            )
        }
    };
    let control = attack(stream_path.clone(), dgram_path.clone())();
    assert_eq!(control, (Ok(()), Ok(()), Ok(()), Ok(())));
    assert!(listener.accept().is_ok());
    assert!(dgram.recv(&mut [0u8; 8]).is_ok());

    for network in [false, true] {
        let policy = scene.policy(FsAccess::ReadWrite, network);
        let got = on_confined_thread(policy, attack(stream_path.clone(), dgram_path.clone()));
        assert_eq!(
            got,
            (Err(libc::EPERM), Err(libc::EPERM), Err(libc::EPERM), Ok(())),
            "network {network}"
        );
        assert!(listener.accept().is_err(), "network {network}");
        assert!(dgram.recv(&mut [0u8; 8]).is_err(), "network {network}");
    }
    let declared = scene
        .policy(FsAccess::ReadWrite, false)
        .with_unix_sockets([stream_path.clone()])
        .expect("a socket");
    let got = on_confined_thread(declared, attack(stream_path.clone(), dgram_path.clone()));
    assert_eq!(got.0, Ok(()), "the declared socket is reachable");
    assert!(listener.accept().is_ok());
}

/// What still reaches the host from a confined thread, as the crate docs say: a tool that
/// declares one UNIX socket gets UNIX sockets, and Landlock (ABI 7) has no right that limits
/// which pathname socket they connect to.
#[test]
fn a_thread_whose_tool_declares_a_socket_still_reaches_other_pathname_sockets() {
    if !kernel_confines_threads("a_thread_whose_tool_declares_a_socket_still_reaches_other") {
        return;
    }
    let scene = Scene::new();
    let dir = tempfile::tempdir().expect("socket dir");
    let declared_path = dir.path().join("declared.sock");
    let other_path = dir.path().join("other.sock");
    let _declared = UnixListener::bind(&declared_path).expect("declared");
    let other = UnixListener::bind(&other_path).expect("other");
    other.set_nonblocking(true).expect("nonblocking");
    let policy = scene
        .policy(FsAccess::ReadWrite, false)
        .with_unix_sockets([declared_path])
        .expect("a socket");
    let got = on_confined_thread(policy, move || {
        UnixStream::connect(&other_path)
            .map(drop)
            .map_err(|e| errno(&e))
    });
    assert_eq!(got, Ok(()));
    assert!(other.accept().is_ok());
}

/// What still reaches the host from a confined thread: the metadata a `stat` shows (existence,
/// size, mode, times) of any path, since Landlock checks opening, not looking up.
#[test]
fn a_confined_thread_still_sees_what_stat_shows_of_host_paths() {
    if !kernel_confines_threads("a_confined_thread_still_sees_what_stat_shows_of_host_paths") {
        return;
    }
    let scene = Scene::new();
    let canary = scene.canary();
    let got = on_confined_thread(scene.policy(FsAccess::ReadOnly, false), move || {
        (
            std::fs::metadata(&canary)
                .map(|m| m.len())
                .map_err(|e| errno(&e)),
            std::fs::read(&canary).map(drop).map_err(|e| errno(&e)),
        )
    });
    assert_eq!(got, (Ok(6), Err(libc::EACCES)));
}
