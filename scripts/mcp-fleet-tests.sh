#!/usr/bin/env bash
# The Python `mcp` client through a fleet: three replicas of the fixture server behind nginx,
# sharing one Redis and one state key (scripts/install-test-deps.sh installs both). 2026-07-28
# requests are spread over the replicas (a random hash key per request), so an approval's two
# rounds land where they land; a 2025-11-25 session stays on one replica (by client address).
# Usage: mcp-fleet-tests.sh SERVER PYTHON BASE_PORT (uses BASE_PORT .. BASE_PORT+4).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/wait-serving.sh
SERVER="$1"
PY="$2"
PORT="$3"
OUT="target/mcp-conformance"
mkdir -p "$OUT"
echo "== mcp: python sdk client (http) through nginx to three replicas sharing Redis"
./scripts/install-test-deps.sh
FLEET="$(mktemp -d)"
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
mkdir -p "$FLEET/ws"
openssl rand -hex 32 >"$FLEET/state.key" 2>/dev/null || head -c 48 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$FLEET/state.key"
chmod 600 "$FLEET/state.key"
REDIS_PORT=$PORT
LB_PORT=$((PORT + 1))
redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no >"$OUT/redis.log" 2>&1 &
FLEET_PIDS="$!"
UPSTREAMS=""
REPLICA_PIDS=()
for i in 1 2 3; do
    RPORT=$((PORT + 1 + i))
    "$SERVER" --http "127.0.0.1:$RPORT" --workspace "$FLEET/ws" --replica "r$i" \
        --store "redis://127.0.0.1:$REDIS_PORT/0" --state-key-file "$FLEET/state.key" \
        2>"$OUT/replica-$i.log" &
    FLEET_PIDS="$FLEET_PIDS $!"
    REPLICA_PIDS+=("$!")
    UPSTREAMS="$UPSTREAMS    server 127.0.0.1:$RPORT;
"
done
cat >"$FLEET/nginx.conf" <<NGINX
daemon off;
worker_processes 1;
pid $FLEET/nginx.pid;
error_log $FLEET/nginx.err;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path $FLEET/body;
  proxy_temp_path $FLEET/proxy;
  fastcgi_temp_path $FLEET/fcgi;
  uwsgi_temp_path $FLEET/uwsgi;
  scgi_temp_path $FLEET/scgi;
  # 2026-07-28 requests are self-contained: any replica (a random key each). A 2025-11-25
  # session lives on the replica its initialize reached: keep a client on one replica.
  map \$http_mcp_protocol_version \$affinity { "~^2026-" \$request_id; default \$remote_addr; }
  upstream fleet {
    hash \$affinity consistent;
$UPSTREAMS  }
  server {
    listen 127.0.0.1:$LB_PORT;
    location /mcp {
      proxy_pass http://fleet;
      proxy_http_version 1.1;
      proxy_set_header Host \$http_host;
      proxy_set_header Connection "";
      proxy_buffering off;
    }
  }
}
NGINX
"$NGINX" -c "$FLEET/nginx.conf" -p "$FLEET" &
FLEET_PIDS="$FLEET_PIDS $!"
trap 'kill $FLEET_PIDS 2>/dev/null || true; rm -rf "$FLEET"' EXIT
# Each replica says where it serves once bound (one that found its port taken exits instead).
for i in 1 2 3; do
    wait_serving "${REPLICA_PIDS[$((i - 1))]}" "$OUT/replica-$i.log" >/dev/null
done
for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$LB_PORT") 2>/dev/null; then break; fi
    sleep 0.1
done
LB="http://127.0.0.1:$LB_PORT/mcp"
for round in 1 2 3; do
    timeout 120 "$PY" tests/mcp/python_client_http.py "$LB" auto 2026-07-28 2>>"$OUT/python-fleet.log" |
        grep -v '^ok ' || { echo "python client through the fleet (2026-07-28, round $round): FAILED"; exit 1; }
    timeout 120 "$PY" tests/mcp/python_client_http.py "$LB" legacy 2025-11-25 2>>"$OUT/python-fleet.log" |
        grep -v '^ok ' || { echo "python client through the fleet (2025-11-25, round $round): FAILED"; exit 1; }
done
echo "python client through the fleet: 3 rounds in each revision passed"
