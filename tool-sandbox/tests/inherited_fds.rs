//! Descriptors the executor leaves without close-on-exec never reach a confined program, and
//! the sandbox keeps none of them open. A test binary of its own: nothing else here spawns a
//! process that could inherit the pipe.

mod common;

use std::os::fd::AsRawFd;
use std::time::Duration;

use common::{kernel_confines_processes, launcher, Scene};
use tool_sandbox::{CancellationToken, FsAccess, SandboxedCommand};

#[tokio::test]
async fn a_descriptor_without_close_on_exec_reaches_no_program_and_is_not_kept_open() {
    if !kernel_confines_processes(
        "a_descriptor_without_close_on_exec_reaches_no_program_and_is_not_kept_open",
    ) {
        return;
    }
    // A pipe as a careless library makes it: no close-on-exec on either end. The launcher made
    // after it starts its helper with the pipe inherited.
    let (read, write) = nix::unistd::pipe().expect("pipe");
    let flags = nix::fcntl::fcntl(&write, nix::fcntl::F_GETFD).expect("flags");
    assert_eq!(
        flags & nix::fcntl::FdFlag::FD_CLOEXEC.bits(),
        0,
        "the pipe must be inheritable for this test to mean anything"
    );
    let fd = write.as_raw_fd();
    let target = std::fs::read_link(format!("/proc/self/fd/{fd}")).expect("readlink");
    let launcher = launcher();
    let scene = Scene::new();
    let script = format!("readlink /proc/self/fd/{fd} || echo none");
    let out = SandboxedCommand::new("bash")
        .arg("-c")
        .arg(&script)
        .timeout(Duration::from_secs(20))
        .run(
            &launcher,
            &scene.policy(FsAccess::ReadWrite, false),
            &CancellationToken::new(),
        )
        .await
        .expect("sandboxed bash ran");
    assert!(out.success(), "{out:?}");
    assert_ne!(
        out.stdout_text().trim(),
        target.to_string_lossy(),
        "the program inherited the executor's pipe as fd {fd}"
    );

    // With our write end closed, the reader sees end of file at once: no helper, spare or
    // init of the launcher (still alive) holds a copy of the write end.
    drop(write);
    nix::fcntl::fcntl(&read, nix::fcntl::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK))
        .expect("non-blocking");
    let mut buf = [0u8; 1];
    match nix::unistd::read(&read, &mut buf) {
        Ok(0) => {}
        Ok(n) => panic!("read {n} bytes from a pipe nobody wrote to"),
        Err(e) => panic!(
            "the pipe's write end is still open somewhere in the sandbox ({e}): the helper \
             kept an inherited descriptor"
        ),
    }
    drop(launcher);
}
