#!/usr/bin/env bash
# Clean build of a user crate: what someone who wants `#[tool]` + the executor pays.
#
# For each tool-core checkout given (default: this one), creates a scratch crate in a temp dir
# outside the workspace that depends on that tool-core by path with its default features and uses
# `#[tool]` + `Executor` as the README example does, then runs a clean `cargo build` (dev
# profile, its own CARGO_TARGET_DIR, Cargo.lock copied from the checkout so versions match) and
# reports: crates compiled, wall time, and whether a C compiler (the `cc` build of tree-sitter)
# or Ruff's parser was part of the build.
#
# Usage: scripts/bench-build.sh [CHECKOUT...]
#   scripts/bench-build.sh /path/to/old/checkout .   # old and new, one after the other
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ $# -gt 0 ] || set -- "$ROOT"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/bench-build.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
export CARGO_INCREMENTAL=0

printf '%-50s %8s %10s %6s %6s\n' checkout crates seconds cc ruff
n=0
for checkout in "$@"; do
    checkout="$(cd "$checkout" && pwd)"
    n=$((n + 1))
    crate="$WORK/user$n"
    mkdir -p "$crate/src"
    cat > "$crate/Cargo.toml" <<TOML
[package]
name = "bench-user"
version = "0.1.0"
edition = "2021"

[dependencies]
tool-core = { path = "$checkout/tool-core" }
tokio = { version = "1", features = ["rt-multi-thread", "macros"] }

[workspace]
TOML
    cat > "$crate/src/main.rs" <<'RS'
use std::sync::Arc;
use tool_core::{tool, Executor, ExecutorConfig, Registry, WorkspacePath};

/// Count the lines of a text file in the workspace.
///
/// # Arguments
/// * `path` - the file, relative to the workspace
#[tool(risk = "read_only", path_args = ["path"], concurrency_safe)]
fn count_lines(path: WorkspacePath) -> Result<usize, std::io::Error> {
    Ok(std::fs::read_to_string(&path)?.lines().count())
}

#[tokio::main]
async fn main() {
    let registry = Arc::new(Registry::from_inventory().expect("valid registry"));
    let executor = Executor::new(registry, ExecutorConfig::new(".")).expect("executor");
    let session = executor.new_session();
    println!("{} tools, session {}", executor.registry().len(), session.id());
}
RS
    # The checkout's lock file pins the same versions the project tests with.
    cp "$checkout/Cargo.lock" "$crate/Cargo.lock"
    export CARGO_TARGET_DIR="$crate/target"
    start=$(date +%s.%N)
    (cd "$crate" && cargo build --offline --color never 2> "$crate/build.log")
    end=$(date +%s.%N)
    crates=$(grep -c '^ *Compiling ' "$crate/build.log" || true)
    secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
    cc=no
    ruff=no
    grep -q 'Compiling tree-sitter\|Compiling cc ' "$crate/build.log" && cc=yes
    grep -q 'Compiling ruff_' "$crate/build.log" && ruff=yes
    printf '%-50s %8s %10s %6s %6s\n' "$checkout" "$crates" "$secs" "$cc" "$ruff"
    unset CARGO_TARGET_DIR
done
