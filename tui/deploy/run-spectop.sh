#!/bin/sh
# The demo's simulated llama-server pair (plain on PORT, draft on PORT+1) with its GPU meter
# (PORT+2) and traffic, and one exporter watching both servers under that one meter.
PORT="${SPECTOP_DEMO_PORT:-9000}"
LISTEN="${SPECTOP_LISTEN:-0.0.0.0:9464}"
spectop demo --no-ui --port "$PORT" > /dev/null &
demo=$!
trap 'kill $demo 2>/dev/null' EXIT INT TERM
# The exporter checks its meter once at start: wait (up to a minute) until the demo answers.
python3 - "$PORT" <<'PY' || exit 1
import sys, time, urllib.request
port = int(sys.argv[1])
urls = [f"http://127.0.0.1:{port}/health", f"http://127.0.0.1:{port + 1}/health", f"http://127.0.0.1:{port + 2}/metrics"]
deadline = time.monotonic() + 60
while urls:
    try:
        urllib.request.urlopen(urls[0], timeout=2).read()
        urls.pop(0)
    except OSError:
        if time.monotonic() > deadline:
            sys.exit(f"run-spectop.sh: the demo did not answer at {urls[0]} within 60 s")
        time.sleep(0.2)
PY
exec_export() {
  spectop export --server "http://127.0.0.1:$PORT" --server "http://127.0.0.1:$((PORT + 1))" \
    --meter "dcgm=http://127.0.0.1:$((PORT + 2))/metrics?period=0.1" --listen "$LISTEN" "$@"
}
exec_export "$@"
