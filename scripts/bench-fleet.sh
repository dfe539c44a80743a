#!/usr/bin/env bash
# The fleet load bench: one replica with its own memory against one with the Redis store, per
# kind of call, then 10,000 checked calls through nginx to three replicas sharing Redis.
# Needs redis-server and nginx (scripts/install-test-deps.sh). Figures go to BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-test-deps.sh
cargo build --release -p tests --bin fleet_replica --bin fleet_load
./target/release/fleet_load "$@"
