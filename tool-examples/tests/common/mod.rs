//! Shared set-up for the example program's attack tests: a workspace with a canary next to it
//! (outside it), and the kernel check that skips loudly.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

#[allow(unused_imports)] // not every test binary uses every part
pub use test_support::site::{intact, Site, CANARY};

pub const BIN: &str = env!("CARGO_BIN_EXE_tool-examples");

/// Whether `doctor` reports everything confinement needs; prints a loud skip line if not.
pub fn kernel_ready(test: &str) -> bool {
    let out = Command::new(BIN).arg("doctor").output().expect("doctor");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let full = ["landlock-v7", "seccomp", "userns", "pidns"]
        .iter()
        .all(|p| text.lines().next().unwrap_or("").contains(p));
    if !full {
        eprintln!("\n!!! SKIPPED {test}: the kernel lacks what confinement needs:\n{text} !!!\n");
    }
    full
}

/// A workspace with a canary outside it ([`Site::base`] holds the audit log, [`audit_log`]).
pub fn site() -> Site {
    Site::new()
}

/// Where a test's audit log goes: next to the workspace, not in it.
pub fn audit_log(site: &Site) -> PathBuf {
    site.base.join("audit.jsonl")
}
