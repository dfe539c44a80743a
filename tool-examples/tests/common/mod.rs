//! Shared set-up for the example program's attack tests: a workspace with a canary next to it
//! (outside it), the kernel check that skips loudly, and a process finder.
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

/// `command` with every `sleep 3NNN` made unique to this test run (`sleep 3NNN.PID`), so that a
/// stray sleeper of another run on the same machine is never mistaken for one of ours.
pub fn per_run(command: &str) -> String {
    let token = format!(".{}", std::process::id());
    let mut out = String::new();
    let mut rest = command;
    while let Some(i) = rest.find("sleep 3") {
        let digits = rest[i + 6..]
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len() - i - 6);
        out.push_str(&rest[..i + 6 + digits]);
        out.push_str(&token);
        rest = &rest[i + 6 + digits..];
    }
    out.push_str(rest);
    out
}

/// Command lines of the live processes of this run (see [`per_run`]) that contain `marker`.
pub fn sleepers(marker: &str) -> Vec<String> {
    let token = format!(".{}", std::process::id());
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(marker) && c.contains(&token))
        .collect()
}
