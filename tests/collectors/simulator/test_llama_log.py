"""The simulated llama-server writes its per-request log as the real one does, so `--server-log`
reads it with the reader it uses on a real server."""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from collectors.servers.llamacpp.log import parse_text
from collectors.simulator import Simulator
from collectors.simulator.llama_log import stamp

REAL_LOGS = Path(__file__).resolve().parents[2] / "fixtures" / "llama-server-logs"


def template(line: str) -> str:
    """A log line with its numbers (and the padding before them) taken out: its format."""
    return re.sub(r" *\d[\d.]*", "#", line)


def test_the_stamp_is_llama_cpps_elapsed_time():
    # draft.log: "0.00.960.874 I slot print_timing" is 0.960874 s after the start
    assert stamp(0.960874) == "0.00.960.874"
    assert stamp(61.5) == "1.01.500.000"  # minutes, seconds of the minute
    assert stamp(125 * 60 + 0.000001) == "125.00.000.001"  # the minutes field is unbounded


def test_the_simulated_log_has_the_real_logs_lines_and_the_servers_own_figures(tmp_path):
    with Simulator(seed=4, speedup=20, log_dir=tmp_path) as sim, httpx.Client(timeout=30) as client:
        draft = client.post(sim.draft_url + "/completion", json={"prompt": "a b c", "n_predict": 40}).json()
        plain = client.post(sim.plain_url + "/completion", json={"prompt": "a b c", "n_predict": 24}).json()
    draft_log, plain_log = (tmp_path / "draft.log").read_text(), (tmp_path / "plain.log").read_text()
    # every line the simulator writes is a line of the real captures, numbers aside
    real = {
        template(line)
        for name in ("draft.log", "plain.log")
        for line in (REAL_LOGS / name).read_text().splitlines()
    }
    ours = [template(line) for line in (draft_log + plain_log).splitlines()]
    assert ours and all(line in real for line in ours), [line for line in ours if line not in real]
    # and the reader finds in it what the server answered (its `timings`)
    (logged,) = parse_text(draft_log)
    t = draft["timings"]
    assert (logged.generated_tokens, logged.prompt_tokens) == (40, t["prompt_n"])
    assert (logged.draft_n, logged.draft_n_accepted) == (t["draft_n"], t["draft_n_accepted"])
    assert logged.eval_ms == round(t["predicted_ms"], 2) and logged.context_tokens == t["prompt_n"] + 40 - 1
    (logged_plain,) = parse_text(plain_log)
    assert logged_plain.generated_tokens == plain["tokens_predicted"] == 24
    assert logged_plain.draft_n is None  # a plain server logs no draft line


def test_no_log_unless_asked_and_none_for_servers_that_log_no_requests(tmp_path):
    with Simulator(seed=4, speedup=20) as sim:
        assert sim.logs == {}
    with Simulator(seed=4, speedup=20, backend="vllm", log_dir=tmp_path) as sim:
        assert sim.logs == {} and list(tmp_path.iterdir()) == []
