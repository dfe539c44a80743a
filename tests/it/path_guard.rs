//! The workspace path guard, with real files and symlinks in a temporary directory: what stays
//! inside is accepted and normalized, everything that could reach outside is refused.
#![cfg(unix)]

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use test_support::site::{Guarded, Site};
use tool_core::guard::path::{PathGuard, PathGuardError};
use tool_core::ReasonCode;

/// `base/ws` is the workspace (with `sub/file.txt`), `base/outside` holds the canary.
pub(crate) type Fixture = Guarded<PathGuard>;

pub(crate) fn fixture() -> Fixture {
    Site::new()
        .with_file("sub/file.txt", "inside")
        .guarded(|ws| PathGuard::new(ws).expect("guard"))
}

fn accepted(f: &Fixture, raw: &str) -> PathBuf {
    match f.guard.check(raw) {
        Ok(p) => p.into_path_buf(),
        Err(e) => panic!("`{raw}` should be accepted: {e}"),
    }
}

fn refused(f: &Fixture, raw: &str) -> PathGuardError {
    match f.guard.check(raw) {
        Ok(p) => panic!("`{raw}` should be refused, got {}", p.display()),
        Err(e) => {
            assert_eq!(e.code(), ReasonCode::PathOutsideWorkspace);
            e
        }
    }
}

#[test]
fn relative_paths_resolve_against_the_workspace() {
    let f = fixture();
    assert_eq!(accepted(&f, "sub/file.txt"), f.ws.join("sub/file.txt"));
    assert_eq!(
        accepted(&f, "./sub/../sub/./file.txt"),
        f.ws.join("sub/file.txt")
    );
    assert_eq!(
        accepted(&f, "new/dir/file.txt"),
        f.ws.join("new/dir/file.txt")
    );
    assert_eq!(accepted(&f, "."), f.ws);
}

#[test]
fn dot_dot_that_leaves_the_workspace_is_refused() {
    let f = fixture();
    refused(&f, "..");
    refused(&f, "../outside/secret.txt");
    refused(&f, "sub/../../outside/secret.txt");
    refused(&f, "sub/../../../../../../etc/passwd");
}

#[test]
fn absolute_paths_are_accepted_only_inside() {
    let f = fixture();
    let inside = f.ws.join("sub/file.txt");
    assert_eq!(accepted(&f, inside.to_str().expect("utf8")), inside);
    refused(&f, f.outside.join("secret.txt").to_str().expect("utf8"));
    refused(&f, "/etc/passwd");
    refused(&f, "/");
}

#[test]
fn empty_paths_and_nul_bytes_are_refused() {
    let f = fixture();
    assert!(matches!(refused(&f, ""), PathGuardError::Empty));
    assert!(matches!(
        refused(&f, "sub/file.txt\0../../x"),
        PathGuardError::NulByte
    ));
}

#[test]
fn symlinks_inside_the_workspace_are_followed_and_accepted() {
    let f = fixture();
    symlink(f.ws.join("sub"), f.ws.join("link_dir")).expect("link");
    symlink("sub/file.txt", f.ws.join("link_file")).expect("link");
    // The path handed on keeps the link (deleting a link deletes the link, not its target).
    assert_eq!(
        accepted(&f, "link_dir/file.txt"),
        f.ws.join("link_dir/file.txt")
    );
    assert_eq!(accepted(&f, "link_file"), f.ws.join("link_file"));
    assert_eq!(
        accepted(&f, "link_dir/new.txt"),
        f.ws.join("link_dir/new.txt")
    );
}

#[test]
fn symlinks_that_leave_the_workspace_are_refused() {
    let f = fixture();
    symlink(&f.outside, f.ws.join("escape")).expect("link");
    symlink(f.outside.join("secret.txt"), f.ws.join("sub/secret_link")).expect("link");
    symlink("../../outside", f.ws.join("sub/relative_escape")).expect("link");
    for raw in [
        "escape",
        "escape/secret.txt",
        "escape/new.txt",
        "sub/secret_link",
        "sub/relative_escape/secret.txt",
    ] {
        assert!(
            matches!(refused(&f, raw), PathGuardError::SymlinkEscape { .. }),
            "{raw}"
        );
    }
    let abs = f.ws.join("escape/secret.txt");
    refused(&f, abs.to_str().expect("utf8"));
}

#[test]
fn dangling_links_are_judged_by_where_a_write_would_land() {
    let f = fixture();
    // Writing through this link would create a file outside.
    symlink(f.outside.join("planted.txt"), f.ws.join("dangling_out")).expect("link");
    refused(&f, "dangling_out");
    // A chain: inside dangling link -> another dangling link -> outside.
    symlink("dangling_out", f.ws.join("chain")).expect("link");
    refused(&f, "chain");
    // A dangling link whose target's parent is a link out.
    symlink(&f.outside, f.ws.join("escape_dir")).expect("link");
    symlink("escape_dir/new.txt", f.ws.join("via_dir")).expect("link");
    refused(&f, "via_dir");
    // A dangling link that stays inside is fine.
    symlink("sub/not_yet.txt", f.ws.join("dangling_in")).expect("link");
    assert_eq!(accepted(&f, "dangling_in"), f.ws.join("dangling_in"));
    assert!(!f.outside.join("planted.txt").exists());
}

#[test]
fn symlink_loops_are_refused() {
    let f = fixture();
    symlink("loop_b", f.ws.join("loop_a")).expect("link");
    symlink("loop_a", f.ws.join("loop_b")).expect("link");
    refused(&f, "loop_a");
    refused(&f, "loop_a/x");
}

#[test]
fn the_workspace_root_must_be_an_existing_directory() {
    let f = fixture();
    assert!(PathGuard::new(f.ws.join("missing")).is_err());
    assert!(PathGuard::new(f.ws.join("sub/file.txt")).is_err());
    // A workspace given through a symlink is canonicalized: its real location is the root.
    let alias = f.ws.parent().expect("parent").join("alias");
    symlink(&f.ws, &alias).expect("link");
    let g = PathGuard::new(&alias).expect("guard");
    assert_eq!(g.root(), f.ws.as_path());
    assert_eq!(
        g.check("sub/file.txt").expect("ok").as_path(),
        Path::new(&f.ws.join("sub/file.txt"))
    );
}
