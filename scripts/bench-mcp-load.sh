#!/usr/bin/env bash
# MCP load over loopback: CALLS (10 000) checked `tools/call`s of `get_weather` over streamable
# HTTP from CLIENTS (64) concurrent rmcp clients, against `tool-examples serve --http` (the
# example tools with every guard: schema validation, the executor's pipeline, confined sync
# handlers) and against a plain rmcp server serving the same function without our guards
# (`mcp_load plain`). ROUNDS (10) rounds alternate which server goes first, so load noise falls on
# both; each call's result must be the tool's own answer to its arguments (none lost, none mixed
# up). Prints each round's throughput, the ratio, each server's CPU time per call over the timed
# rounds (user + system, from /proc: steadier than throughput, which the clients' own CPU damps)
# and the servers' resident memory before and after the warm-up and after the run; fails on any
# wrong call and when the guarded server's memory grew by more than MAX_GROWTH_KIB (16 MiB) after
# the warm-up. LIFECYCLE=session measures 2025-11-25 sessions instead of stateless 2026-07-28
# requests. Release build; bounded by a timeout.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/wait-serving.sh

CALLS="${CALLS:-10000}"
CLIENTS="${CLIENTS:-64}"
ROUNDS="${ROUNDS:-10}"
WARMUP="${WARMUP:-1000}"
LIFECYCLE="${LIFECYCLE:-stateless}"
MAX_GROWTH_KIB="${MAX_GROWTH_KIB:-16384}"
# 0: a port the system chooses; each server says which once it is bound.
GUARDED_PORT="${GUARDED_PORT:-0}"
PLAIN_PORT="${PLAIN_PORT:-0}"

if [ -z "${BIN:-}" ]; then
    cargo build --quiet --release -p tests --bin mcp_load -p tool-examples --bin tool-examples
fi
BIN="${BIN:-target/release}"

WS="$(mktemp -d)"
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$WS"
}
trap cleanup EXIT

"$BIN/tool-examples" serve --http "127.0.0.1:$GUARDED_PORT" --workspace "$WS" 2>"$WS/guarded.log" &
GUARDED_PID=$!
PIDS+=("$GUARDED_PID")
"$BIN/mcp_load" plain "127.0.0.1:$PLAIN_PORT" >"$WS/plain.log" 2>&1 &
PLAIN_PID=$!
PIDS+=("$PLAIN_PID")
GUARDED_URL="$(wait_serving "$GUARDED_PID" "$WS/guarded.log")"
PLAIN_URL="$(wait_serving "$PLAIN_PID" "$WS/plain.log")"

echo "== mcp load: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
timeout 1200 "$BIN/mcp_load" bench \
    --guarded "$GUARDED_URL" --guarded-pid "$GUARDED_PID" \
    --plain "$PLAIN_URL" --plain-pid "$PLAIN_PID" \
    --calls "$CALLS" --clients "$CLIENTS" --rounds "$ROUNDS" --warmup "$WARMUP" \
    --lifecycle "$LIFECYCLE" --max-growth-kib "$MAX_GROWTH_KIB"
echo "== load afterwards $(cut -d' ' -f1-3 /proc/loadavg)"
