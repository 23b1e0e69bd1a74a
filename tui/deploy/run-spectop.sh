#!/bin/sh
# The demo's simulated llama-server pair (plain on PORT, draft on PORT+1) with its GPU meter
# (PORT+2) and traffic, and one exporter watching both servers under that one meter.
PORT="${SPECTOP_DEMO_PORT:-9000}"
LISTEN="${SPECTOP_LISTEN:-0.0.0.0:9464}"
spectop demo --no-ui --port "$PORT" > /dev/null &
demo=$!
trap 'kill $demo 2>/dev/null' EXIT INT TERM
exec_export() {
  spectop export --server "http://127.0.0.1:$PORT" --server "http://127.0.0.1:$((PORT + 1))" \
    --meter "dcgm=http://127.0.0.1:$((PORT + 2))/metrics?period=0.1" --listen "$LISTEN" "$@"
}
exec_export "$@"
