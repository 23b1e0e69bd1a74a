#!/bin/sh
# The demo's simulated llama-server pair (plain on PORT, draft on PORT+1) with its GPU meter
# (PORT+2) and traffic, and one exporter watching both servers under that one meter.
# The exporter reads live mJ/token against a sweep's curves: without one there is no
# spectop_draft_energy_ratio, so the headline alert (SpectopDraftingCostsEnergy) and Grafana's
# "drafting over plain" panel stay empty. So it is given a sweep: SPECTOP_SWEEP=DIR (a saved run
# folder), else the newest run under SPECTOP_RESULTS (default /results, a volume that keeps it), else
# a quick sweep run here on the demo before its traffic starts (about a minute, on first start).
PORT="${SPECTOP_DEMO_PORT:-9000}"
LISTEN="${SPECTOP_LISTEN:-0.0.0.0:9464}"
RESULTS="${SPECTOP_RESULTS:-/results}"
SPEEDUP="${SPECTOP_DEMO_SPEEDUP:-1}"  # token rates and watts × X; mJ/token and ratios stay
METER="dcgm=http://127.0.0.1:$((PORT + 2))/metrics?period=0.1"
demo=""
trap 'kill $demo 2>/dev/null' EXIT INT TERM

# Start the demo with these options and wait (up to a minute) until its servers and meter answer:
# the exporter checks its meter once at start.
start_demo() {
  spectop demo "$@" --port "$PORT" --speedup "$SPEEDUP" > /dev/null &
  demo=$!
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
}

# The newest saved sweep under RESULTS (run folders are named by their start time).
newest_sweep() {
  found=""
  for summary in "$RESULTS"/*/summary.json; do
    [ -f "$summary" ] && found="${summary%/summary.json}"
  done
  echo "$found"
}

SWEEP="${SPECTOP_SWEEP:-$(newest_sweep)}"
if [ -z "$SWEEP" ]; then
  echo "run-spectop.sh: no sweep under $RESULTS: a quick sweep on the demo first (about a minute)" >&2
  start_demo --serve-only  # no traffic: other clients' requests would flag every point
  spectop sweep --plain "http://127.0.0.1:$PORT" --draft "http://127.0.0.1:$((PORT + 1))" --quick \
    --meter "$METER" --results "$RESULTS" ||
    echo "run-spectop.sh: the sweep ended with exit code $? (spectop sweep's codes: sweep.md)" >&2
  kill "$demo" && wait "$demo"
  SWEEP="$(newest_sweep)"
fi
start_demo --no-ui
if [ -n "$SWEEP" ]; then
  set -- --sweep "$SWEEP" "$@"
else
  echo "run-spectop.sh: serving without a sweep: no drafting-over-plain ratio" >&2
fi
spectop export --server "http://127.0.0.1:$PORT" --server "http://127.0.0.1:$((PORT + 1))" \
  --meter "$METER" --listen "$LISTEN" "$@"
