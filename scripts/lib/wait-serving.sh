# Sourced by the MCP scripts: `wait_serving PID LOG` waits (up to 30 s) until the server with
# process id PID has written the URL it serves to LOG (`serving ... at http://ADDR/mcp`, written
# once its address is bound) and prints that URL. It fails with the log when the server exits
# first (a taken port, a bad flag) or never says where it listens, so a script never talks to
# another process that happens to hold the port.
wait_serving() {
  local pid="$1" log="$2" url
  for _ in $(seq 1 300); do
    url="$(sed -n 's|^serving.* at \(http://[^ ]*/mcp\)$|\1|p' "$log" 2>/dev/null | head -n 1)"
    if [ -n "$url" ]; then
      echo "$url"
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "the server (pid $pid) exited before it served; its log:" >&2
      cat "$log" >&2
      return 1
    fi
    sleep 0.1
  done
  echo "the server (pid $pid) did not say where it serves within 30 s; its log:" >&2
  cat "$log" >&2
  return 1
}
