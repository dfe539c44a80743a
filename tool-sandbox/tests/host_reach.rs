//! What a confined program can reach of the host beyond reading and writing files: metadata of
//! files outside the workspace, their extended attributes, pathname UNIX sockets, the mount
//! table, and memory and disk. Each attack also runs through a `Mode::Off` launcher first, as a
//! control: it must succeed there, so a test that passes is one whose defence held.

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::time::Duration;

use common::{kernel_confines_processes, launcher, marker, Scene, Sockets};
use tool_sandbox::{
    CancellationToken, FsAccess, Launcher, LimitHit, Mode, ProcessOutput, Rlimits, SandboxPolicy,
    SandboxedCommand,
};

fn unconfined() -> Launcher {
    Launcher::locate(
        Some(Path::new(env!("CARGO_BIN_EXE_tool-sandbox-exec"))),
        Mode::Off,
    )
    .expect("helper built by cargo")
}

async fn run(
    launcher: &Launcher,
    policy: &SandboxPolicy,
    program: &str,
    script: &str,
    limits: Rlimits,
) -> ProcessOutput {
    SandboxedCommand::new(program)
        .arg("-c")
        .arg(script)
        .limits(limits)
        .timeout(Duration::from_secs(30))
        .run(launcher, policy, &CancellationToken::new())
        .await
        .expect("the program ran")
}

/// Mode, mtime, owner group and extended attributes of `path`.
fn metadata_of(path: &Path) -> (u32, i64, u32, Vec<String>) {
    let m = std::fs::symlink_metadata(path).expect("metadata");
    let xattrs = std::process::Command::new("python3")
        .arg("-c")
        .arg("import os,sys; print(sorted(os.listxattr(sys.argv[1])))")
        .arg(path)
        .output()
        .expect("python3");
    let xattrs = String::from_utf8_lossy(&xattrs.stdout)
        .trim()
        .split(", ")
        .map(str::to_owned)
        .collect();
    (m.mode(), m.mtime(), m.gid(), xattrs)
}

/// Changes the metadata of a file and of a directory outside the workspace, and of a file in
/// root's home (the setuid bit), in every way the shell and Python offer. Returns the script.
fn metadata_attack(file: &Path, dir: &Path, home_file: &Path) -> String {
    let (f, d, h) = (file.display(), dir.display(), home_file.display());
    format!(
        r#"
chmod 4777 {f}; chmod 777 {d}; chmod u+s {h}; chgrp 1 {f}; touch -d 2001-01-01 {f} {d}
python3 - <<'EOF'
import os
for call in (
    lambda: os.chmod("{f}", 0o6777),
    lambda: os.utime("{f}", (1, 1)),
    lambda: os.chown("{f}", -1, 2),
    lambda: os.setxattr("{f}", "user.planted", b"x"),
    lambda: os.removexattr("{f}", "user.mark"),
    lambda: os.setxattr("{d}", "user.planted", b"x"),
    lambda: os.chmod("{h}", 0o4755),
):
    try:
        call()
    except OSError as e:
        print("refused", e.errno)
EOF
true
"#
    )
}

#[tokio::test]
async fn metadata_of_host_files_cannot_be_changed() {
    if !kernel_confines_processes("metadata_of_host_files_cannot_be_changed") {
        return;
    }
    // The root's home holds the file whose setuid bit an attacker wants.
    let Some(home) = std::env::var_os("HOME").map(std::path::PathBuf::from) else {
        return;
    };
    for (launcher, confined) in [(unconfined(), false), (launcher(), true)] {
        let scene = Scene::new();
        let file = scene.canary();
        let dir = scene.outside.path().to_path_buf();
        let home_file = home.join(format!(".{}", marker("setuid")));
        std::fs::write(&home_file, "#!/bin/sh\n").expect("home file");
        std::fs::set_permissions(&home_file, std::fs::Permissions::from_mode(0o755)).expect("mode");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).expect("mode");
        let mark = std::process::Command::new("python3")
            .args([
                "-c",
                "import os,sys; os.setxattr(sys.argv[1], 'user.mark', b'1')",
            ])
            .arg(&file)
            .status()
            .expect("python3");
        assert!(mark.success(), "this file system takes user xattrs");
        let before = [
            metadata_of(&file),
            metadata_of(&dir),
            metadata_of(&home_file),
        ];
        for access in [FsAccess::ReadWrite, FsAccess::ReadOnly] {
            let policy = scene.policy(access, false);
            let out = run(
                &launcher,
                &policy,
                "bash",
                &metadata_attack(&file, &dir, &home_file),
                Rlimits::default(),
            )
            .await;
            let after = [
                metadata_of(&file),
                metadata_of(&dir),
                metadata_of(&home_file),
            ];
            if confined {
                assert_eq!(after, before, "{access:?} changed host metadata: {out:?}");
            } else {
                assert_ne!(
                    after, before,
                    "the unconfined control changed nothing: {out:?}"
                );
                break;
            }
        }
        let _ = std::fs::remove_file(&home_file);
    }
}

#[tokio::test]
async fn extended_attributes_of_host_files_cannot_be_read() {
    if !kernel_confines_processes("extended_attributes_of_host_files_cannot_be_read") {
        return;
    }
    let secret = marker("xattr-secret");
    for (launcher, confined) in [(unconfined(), false), (launcher(), true)] {
        let scene = Scene::new();
        let file = scene.canary();
        let set = std::process::Command::new("python3")
            .args([
                "-c",
                "import os,sys; os.setxattr(sys.argv[1], 'user.secret', sys.argv[2].encode())",
            ])
            .arg(&file)
            .arg(&secret)
            .status()
            .expect("python3");
        assert!(set.success());
        let script = format!(
            "import os\nfor p in ({f:?}, {d:?}):\n    try:\n        print(os.getxattr(p, 'user.secret'), os.listxattr(p))\n    except OSError as e:\n        print('refused', e.errno)\n",
            f = file.display().to_string(),
            d = scene.outside.path().display().to_string(),
        );
        let out = run(
            &launcher,
            &scene.policy(FsAccess::ReadWrite, false),
            "python3",
            &script,
            Rlimits::default(),
        )
        .await;
        assert_eq!(
            out.stdout_text().contains(&secret),
            !confined,
            "confined: {confined}: {out:?}"
        );
    }
}

fn socket_attack(s: &Sockets) -> String {
    format!(
        r#"
import socket
try:
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); c.connect({st:?}); c.send(b"hi"); print("stream reached")
except OSError as e:
    print("stream refused", e.errno)
try:
    d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); d.sendto(b"hi", {dg:?}); print("datagram reached")
except OSError as e:
    print("datagram refused", e.errno)
"#,
        st = s.stream_path.display().to_string(),
        dg = s.datagram_path.display().to_string(),
    )
}

#[tokio::test]
async fn pathname_unix_sockets_outside_are_out_of_reach_unless_declared() {
    if !kernel_confines_processes("pathname_unix_sockets_outside_are_out_of_reach_unless_declared")
    {
        return;
    }
    let scene = Scene::new();
    for network in [false, true] {
        let policy = scene.policy(FsAccess::ReadWrite, network);
        let sockets = Sockets::new();
        let control = run(
            &unconfined(),
            &policy,
            "python3",
            &socket_attack(&sockets),
            Rlimits::default(),
        )
        .await;
        assert!(sockets.reached(), "control reached nothing: {control:?}");
        let sockets = Sockets::new();
        let out = run(
            &launcher(),
            &policy,
            "python3",
            &socket_attack(&sockets),
            Rlimits::default(),
        )
        .await;
        assert!(!sockets.reached(), "network {network}: {out:?}");
        assert_eq!(out.stdout_text().matches("refused").count(), 2, "{out:?}");
        // Declared: that socket, and only that one, is in the program's root.
        let sockets = Sockets::new();
        let declared = policy
            .clone()
            .with_unix_sockets([sockets.stream_path.clone()])
            .expect("a socket");
        let out = run(
            &launcher(),
            &declared,
            "python3",
            &socket_attack(&sockets),
            Rlimits::default(),
        )
        .await;
        assert!(out.stdout_text().contains("stream reached"), "{out:?}");
        assert!(out.stdout_text().contains("datagram refused"), "{out:?}");
        assert!(sockets.stream.accept().is_ok(), "{out:?}");
    }
}

#[tokio::test]
async fn a_declared_unix_socket_must_be_a_socket() {
    let scene = Scene::new();
    let policy = scene.policy(FsAccess::ReadWrite, false);
    let err = policy
        .clone()
        .with_unix_sockets([scene.canary()])
        .expect_err("a regular file is no socket");
    assert!(err.to_string().contains("is not a socket"), "{err}");
    let err = policy
        .with_unix_sockets(["relative.sock".into()])
        .expect_err("relative");
    assert!(err.to_string().contains("not an absolute path"), "{err}");
}

#[tokio::test]
async fn the_program_sees_a_minimal_root_and_cannot_remount_it() {
    if !kernel_confines_processes("the_program_sees_a_minimal_root_and_cannot_remount_it") {
        return;
    }
    let scene = Scene::new();
    let out = run(
        &launcher(),
        &scene.policy(FsAccess::ReadWrite, false),
        "bash",
        r#"
for p in /root /home /run /var/run /dev/shm /proc /sys /var /srv /opt /etc/shadow; do
    [ -e "$p" ] && echo "present $p"
done
echo x > /dev/null && echo "null writable"
head -c 4 /dev/urandom > /dev/null && echo "urandom readable"
touch /usr/planted 2>/dev/null || echo "usr read-only"
mount -o remount,rw /usr 2>/dev/null || echo "no remount"
umount -l /usr 2>/dev/null || echo "no umount"
python3 -c "import ctypes,os; l=ctypes.CDLL(None, use_errno=True); r=l.syscall(442, -100, b'/usr', 0, b'\0'*32, 32); print('mount_setattr', r, ctypes.get_errno())"
echo done
"#,
        Rlimits::default(),
    )
    .await;
    let text = out.stdout_text();
    assert!(!text.contains("present"), "{out:?}");
    for expected in [
        "null writable",
        "urandom readable",
        "usr read-only",
        "no remount",
        "no umount",
        "mount_setattr -1 1\n",
        "done",
    ] {
        assert!(text.contains(expected), "{expected}: {out:?}");
    }
    assert!(!Path::new("/usr/planted").exists());
}

#[tokio::test]
async fn the_memory_of_all_of_a_runs_processes_is_bounded() {
    if !kernel_confines_processes("the_memory_of_all_of_a_runs_processes_is_bounded") {
        return;
    }
    if !tool_sandbox::cgroup::memory_available() {
        eprintln!(
            "\n!!!!! SKIPPED the_memory_of_all_of_a_runs_processes_is_bounded: no writable \
             memory cgroup hierarchy here !!!!!\n"
        );
        return;
    }
    let scene = Scene::new();
    // Three processes of 96 MiB each, every page touched, each under RLIMIT_AS.
    let script = r#"
import os, time
kids = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        b = bytearray(96 << 20)
        for i in range(0, len(b), 4096): b[i] = 1
        time.sleep(1)
        os._exit(0)
    kids.append(pid)
codes = [os.waitpid(k, 0)[1] for k in kids]
print("codes", codes)
"#;
    let policy = scene.policy(FsAccess::ReadWrite, false);
    let limits = |memory| Rlimits {
        memory_bytes: memory,
        ..Rlimits::default()
    };
    let free = run(&launcher(), &policy, "python3", script, limits(None)).await;
    assert_eq!(free.stdout_text(), "codes [0, 0, 0]\n", "{free:?}");
    assert!(free.limits_hit.is_empty(), "{free:?}");
    let bounded = run(
        &launcher(),
        &policy,
        "python3",
        script,
        limits(Some(160 << 20)),
    )
    .await;
    assert_ne!(bounded.stdout_text(), "codes [0, 0, 0]\n", "{bounded:?}");
    assert_eq!(bounded.limits_hit, vec![LimitHit::Memory], "{bounded:?}");
}

#[tokio::test]
async fn a_file_over_the_size_limit_is_reported() {
    if !kernel_confines_processes("a_file_over_the_size_limit_is_reported") {
        return;
    }
    let scene = Scene::new();
    let limits = Rlimits {
        file_size_bytes: Some(1 << 20),
        ..Rlimits::default()
    };
    let out = run(
        &launcher(),
        &scene.policy(FsAccess::ReadWrite, false),
        "bash",
        "exec head -c 2000000 /dev/zero > big.bin",
        limits,
    )
    .await;
    assert_eq!(out.limits_hit, vec![LimitHit::FileSize], "{out:?}");
    let len = std::fs::metadata(scene.ws().join("big.bin"))
        .expect("written")
        .len();
    assert_eq!(len, 1 << 20);
}
