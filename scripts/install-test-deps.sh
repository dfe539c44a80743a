#!/usr/bin/env bash
# Install the system tools `cargo test --workspace` uses: strace, for the test that checks the
# scanner's effects against a trace of the same program (tests/it/safety_strace.rs). Without it
# that test skips with a message. Safe to run again: nothing is done when strace is there.
set -euo pipefail

if command -v strace >/dev/null 2>&1; then
    exit 0
fi
echo "== strace"
SUDO=""
if [ "$(id -u)" != 0 ]; then
    SUDO="sudo"
fi
if command -v apt-get >/dev/null 2>&1; then
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq strace
elif command -v dnf >/dev/null 2>&1; then
    $SUDO dnf install -y -q strace
elif command -v apk >/dev/null 2>&1; then
    $SUDO apk add --quiet strace
else
    echo "no known package manager: install strace by hand" >&2
    exit 1
fi
strace -V | head -n 1
