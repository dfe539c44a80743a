#!/usr/bin/env bash
# The scratch application (tests/scratch-app): an application crate outside the workspace that
# depends on tool-core by path, built as its user builds it and driven through its own command
# line (tests/scratch-app/drive.py): its six tools, the SQLite database outside the workspace
# written by the confined handler through its grant, approval by flag and at a terminal prompt,
# paths outside the workspace and a dangerous script refused, the start-up refusal without a
# sandbox helper, and the audit log. Fails on any failed check.
#
# It builds into the workspace's target directory (CARGO_TARGET_DIR to change it), from the
# workspace's lock file and with its profile, so the dependencies the workspace already built are
# not built again; its `tool-sandbox-exec` is the helper found beside the program.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"

start=$(date +%s)
cargo build --quiet -p tool-sandbox --bin tool-sandbox-exec
cp Cargo.lock tests/scratch-app/Cargo.lock
(cd tests/scratch-app && CARGO_TARGET_DIR="$TARGET" cargo build --quiet)
built=$(date +%s)
echo "scratch-app: built in $((built - start)) s"

python3 tests/scratch-app/drive.py "$TARGET/debug/scratch-app" "$TARGET/debug/tool-sandbox-exec" |
    grep -v '^ok '
echo "scratch-app: driven in $(($(date +%s) - built)) s"
