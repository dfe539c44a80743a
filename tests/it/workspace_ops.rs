//! The file operations of a checked `WorkspacePath`: they resolve beneath the workspace handle,
//! refuse what is not a regular file without blocking, refuse hard links unless asked, and write
//! and move without a caller-chosen name or an overwrite nobody asked for.
#![cfg(unix)]

use std::os::unix::fs::symlink;
use std::process::Command;
use std::time::{Duration, Instant};

use test_support::site::CANARY;
use tool_core::guard::workspace::{FileKind, ReadOptions, WorkspaceFsError};
use tool_core::ReasonCode;

use crate::path_guard::fixture;

fn mkfifo(path: &std::path::Path) {
    let status = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

#[test]
fn a_regular_file_is_read_up_to_the_limit() {
    let f = fixture();
    let p = f.guard.check("sub/file.txt").expect("checked");
    assert_eq!(p.read(1024).expect("read"), b"inside");
    assert_eq!(p.read(3).expect("read"), b"ins");
    assert_eq!(p.read_to_string(1024).expect("read"), "inside");
    assert_eq!(p.relative(), std::path::Path::new("sub/file.txt"));
}

#[test]
fn a_fifo_is_refused_at_once_without_waiting_for_a_writer() {
    let f = fixture();
    mkfifo(&f.ws.join("pipe"));
    let p = f.guard.check("pipe").expect("checked");
    let started = Instant::now();
    let err = p.read(16).expect_err("a FIFO is not read");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the open must not block"
    );
    assert!(
        matches!(
            err,
            WorkspaceFsError::NotARegularFile {
                kind: FileKind::Fifo,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("FIFO"), "{err}");
}

#[test]
fn directories_and_sockets_are_not_read_as_files() {
    let f = fixture();
    let dir = f.guard.check("sub").expect("checked");
    assert!(matches!(
        dir.read(16),
        Err(WorkspaceFsError::NotARegularFile {
            kind: FileKind::Dir,
            ..
        })
    ));
    let _listener =
        std::os::unix::net::UnixListener::bind(f.ws.join("sock")).expect("bind a socket");
    let sock = f.guard.check("sock").expect("checked");
    let err = sock.read(16).expect_err("a socket is not read");
    assert!(
        matches!(
            err,
            WorkspaceFsError::NotARegularFile {
                kind: FileKind::Socket,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn a_hard_link_is_refused_unless_the_caller_opts_in() {
    let f = fixture();
    std::fs::hard_link(f.outside.join("secret.txt"), f.ws.join("linked.txt")).expect("link");
    let p = f
        .guard
        .check("linked.txt")
        .expect("the path itself is inside");
    let err = p.read(1024).expect_err("a hard-linked file is refused");
    assert!(
        matches!(err, WorkspaceFsError::HardLinked { links: 2, .. }),
        "{err:?}"
    );
    assert_eq!(err.code(), ReasonCode::PathOutsideWorkspace);
    assert!(!err.to_string().contains(CANARY));
    let opted_in = p
        .read_with(1024, ReadOptions::new().allow_hard_links(true))
        .expect("read when the tool opts in");
    assert_eq!(opted_in, CANARY.as_bytes());
}

#[test]
fn a_symlink_that_leaves_after_the_check_is_refused_on_use() {
    let f = fixture();
    symlink("sub/file.txt", f.ws.join("flip")).expect("link");
    let p = f.guard.check("flip").expect("inside at check time");
    assert_eq!(p.read(64).expect("read"), b"inside");
    // The link now leaves the workspace: every operation refuses, none reaches the canary.
    std::fs::remove_file(f.ws.join("flip")).expect("unlink");
    symlink("../outside/secret.txt", f.ws.join("flip")).expect("relink");
    let err = p.read(64).expect_err("escape");
    assert!(matches!(err, WorkspaceFsError::Outside { .. }), "{err:?}");
    assert_eq!(err.code(), ReasonCode::PathOutsideWorkspace);
    assert!(p.metadata().is_err());

    // A directory link swapped to outside: listing, writing and creating stay refused.
    symlink("sub", f.ws.join("door")).expect("link");
    let listed = f.guard.check("door").expect("inside at check time");
    let written = f.guard.check("door/new.txt").expect("inside at check time");
    let made = f
        .guard
        .check("door/deeper/dir")
        .expect("inside at check time");
    std::fs::remove_file(f.ws.join("door")).expect("unlink");
    symlink(&f.outside, f.ws.join("door")).expect("relink");
    assert!(matches!(
        listed.read_dir(),
        Err(WorkspaceFsError::Outside { .. })
    ));
    assert!(matches!(
        written.write_atomic(b"pwned"),
        Err(WorkspaceFsError::Outside { .. })
    ));
    assert!(matches!(
        made.create_dir_all(),
        Err(WorkspaceFsError::Outside { .. })
    ));
    let victim = f.guard.check("door/secret.txt");
    assert!(victim.is_err(), "the guard refuses it now");
    assert_eq!(
        std::fs::read_dir(&f.outside).expect("ls").count(),
        1,
        "nothing was created outside"
    );
    assert_eq!(
        std::fs::read_to_string(f.outside.join("secret.txt")).expect("canary"),
        CANARY
    );
}

#[test]
fn an_absolute_symlink_is_refused_even_when_it_points_inside() {
    let f = fixture();
    symlink(f.ws.join("sub/file.txt"), f.ws.join("abs")).expect("link");
    let p = f.guard.check("abs").expect("the guard accepts it");
    assert!(matches!(p.read(64), Err(WorkspaceFsError::Outside { .. })));
}

#[test]
fn write_atomic_replaces_the_file_and_leaves_no_temporary_name() {
    let f = fixture();
    let p = f.guard.check("new/dir/out.txt").expect("checked");
    assert!(p.write_atomic(b"x").is_err(), "the parent must exist");
    p.create_parent_dirs().expect("parents");
    p.write_atomic(b"first").expect("write");
    p.write_atomic(b"second").expect("replace");
    assert_eq!(
        std::fs::read_to_string(f.ws.join("new/dir/out.txt")).expect("read"),
        "second"
    );
    let names: Vec<_> = std::fs::read_dir(f.ws.join("new/dir"))
        .expect("ls")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, ["out.txt"]);
    // A symlink at the destination is replaced, its target untouched.
    symlink("sub/file.txt", f.ws.join("alias")).expect("link");
    let alias = f.guard.check("alias").expect("checked");
    alias.write_atomic(b"replaced").expect("write");
    assert!(!std::fs::symlink_metadata(f.ws.join("alias"))
        .expect("stat")
        .file_type()
        .is_symlink());
    assert_eq!(
        std::fs::read_to_string(f.ws.join("sub/file.txt")).expect("read"),
        "inside"
    );
    let root = f.guard.check(".").expect("checked");
    assert!(matches!(
        root.write_atomic(b"x"),
        Err(WorkspaceFsError::Root { .. })
    ));
}

#[test]
fn rename_to_never_overwrites_and_rename_replacing_does() {
    let f = fixture();
    std::fs::write(f.ws.join("a.txt"), "a").expect("a");
    std::fs::write(f.ws.join("b.txt"), "b").expect("b");
    let a = f.guard.check("a.txt").expect("checked");
    let b = f.guard.check("b.txt").expect("checked");
    let err = a.rename_to(&b).expect_err("b exists");
    assert!(
        matches!(err, WorkspaceFsError::AlreadyExists { .. }),
        "{err:?}"
    );
    assert_eq!(std::fs::read_to_string(f.ws.join("a.txt")).expect("a"), "a");
    assert_eq!(std::fs::read_to_string(f.ws.join("b.txt")).expect("b"), "b");
    let c = f.guard.check("sub/c.txt").expect("checked");
    a.rename_to(&c).expect("move");
    assert_eq!(
        std::fs::read_to_string(f.ws.join("sub/c.txt")).expect("c"),
        "a"
    );
    c.rename_replacing(&b).expect("replace");
    assert_eq!(std::fs::read_to_string(f.ws.join("b.txt")).expect("b"), "a");

    let other = fixture();
    let foreign = other.guard.check("x.txt").expect("checked");
    assert!(matches!(
        b.rename_to(&foreign),
        Err(WorkspaceFsError::OtherWorkspace { .. })
    ));
}

#[test]
fn remove_file_removes_a_link_not_its_target_and_refuses_directories() {
    let f = fixture();
    symlink("sub/file.txt", f.ws.join("alias")).expect("link");
    f.guard
        .check("alias")
        .expect("checked")
        .remove_file()
        .expect("remove");
    assert!(f.ws.join("sub/file.txt").exists());
    assert!(std::fs::symlink_metadata(f.ws.join("alias")).is_err());
    assert!(f
        .guard
        .check("sub")
        .expect("checked")
        .remove_file()
        .is_err());
    assert!(f.ws.join("sub").is_dir());
    let gone = f.guard.check("sub/missing.txt").expect("checked");
    assert!(gone.remove_file().expect_err("missing").is_not_found());
}

#[test]
fn read_dir_and_metadata_report_kinds() {
    let f = fixture();
    symlink("sub", f.ws.join("link")).expect("link");
    mkfifo(&f.ws.join("pipe"));
    let root = f.guard.check(".").expect("checked");
    let mut entries: Vec<(String, FileKind)> = root
        .read_dir()
        .expect("ls")
        .iter()
        .map(|e| (e.name().to_string_lossy().into_owned(), e.kind()))
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        entries,
        [
            ("link".to_owned(), FileKind::Symlink),
            ("pipe".to_owned(), FileKind::Fifo),
            ("sub".to_owned(), FileKind::Dir),
        ]
    );
    let link = f.guard.check("link").expect("checked");
    assert_eq!(link.metadata().expect("stat").kind(), FileKind::Dir);
    assert_eq!(
        link.symlink_metadata().expect("lstat").kind(),
        FileKind::Symlink
    );
    let file = f.guard.check("sub/file.txt").expect("checked");
    let m = file.metadata().expect("stat");
    assert_eq!((m.kind(), m.len(), m.links()), (FileKind::File, 6, 1));
}
