#!/usr/bin/env bash
# Install the system tools `cargo test --workspace` uses:
# - strace, for the test that checks the scanner's effects against a trace of the same program
#   (tests/it/safety_strace.rs);
# - redis-server, for the shared store of an MCP fleet (tool-core's `redis` feature);
# - nginx, the load balancer in front of the fleet's tests.
# Each test starts its own server on a free loopback port and stops it; without the tool it
# skips with a message. Safe to run again: nothing is done when everything is there. The
# packages' own services are not started.
set -euo pipefail

missing=()
command -v strace >/dev/null 2>&1 || missing+=(strace)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
echo "== installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" != 0 ]; then
    SUDO="sudo"
fi
if command -v apt-get >/dev/null 2>&1; then
    $SUDO apt-get update -qq
    # No service starts in a container or CI machine: the tests start their own.
    RUNLEVEL=1 DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
elif command -v dnf >/dev/null 2>&1; then
    pkgs=("${missing[@]/redis-server/redis}")
    $SUDO dnf install -y -q "${pkgs[@]}"
elif command -v apk >/dev/null 2>&1; then
    pkgs=("${missing[@]/redis-server/redis}")
    $SUDO apk add --quiet "${pkgs[@]}"
else
    echo "no known package manager: install ${missing[*]} by hand" >&2
    exit 1
fi
strace -V | head -n 1
redis-server --version
