"""`spectop sweep --rate`: open-loop points from the command line; bad input is one line and exit
2 before anything is measured, and a run says which load each figure came from, on the terminal
and in its files."""

from __future__ import annotations

import json

import pytest

from collectors.simulator import Simulator
from tests.support.cli_runs import spectop
from tui.cli import main

ARMS = ["sweep", "--plain", "http://127.0.0.1:9", "--draft", "http://127.0.0.1:9"]


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--rate", "fast"], "--rate must be comma-separated numbers, not 'fast'"),
        (["--rate", "0"], "--rate must be up to 64 rates above 0"),
        (
            ["--rate", "1", "--arrivals", "uniform"],
            "--arrivals must be poisson or bursty[:CV], not 'uniform'",
        ),
        (
            ["--rate", "1", "--arrivals", "bursty:0.5"],
            "--arrivals bursty:CV needs a coefficient of variation above 1",
        ),
        (["--rate", "1", "--rate-requests", "0"], "--rate-requests must be a whole number from 1"),
        (["--rate", "1", "--arm", "n=http://127.0.0.1:9"], "--rate works in the paired sweep"),
    ],
)
def test_bad_open_loop_input_is_one_line_and_exit_2(extra, says, capsys):
    assert main([*ARMS, *extra]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.slow  # a headless sweep in a subprocess against the simulator
def test_a_sweep_with_batches_and_rates_says_which_load_each_figure_came_from(tmp_path):
    with Simulator(seed=6, speedup=16.0) as sim:
        done = spectop(
            *["sweep", "--plain", sim.plain_url, "--draft", sim.draft_url, "--batches", "2"],
            *["--rate", "20", "--rate-requests", "40", "--seed", "3", "--tokens", "48", "--passes", "1"],
            *["--idle", "0.3", "--meter", f"dcgm={sim.meter_url}/metrics?period=0.1"],
            *["--results", str(tmp_path)],
        )
    assert done.returncode in (0, 3), done.stderr  # 3: a loaded machine may make plain drift
    out = done.stdout
    # a line per point, the rate's with the requests it had in flight
    assert "  B=2   plain before:" in out and "  rate 20/s poisson draft:" in out
    assert " in flight (max " in out
    assert "(closed-loop load: B requests at once)" in out
    assert "paired sweep, open-loop load: requests arriving at R per second" in out
    assert "Open-loop load: poisson arrivals at 20 requests/s" in out
    (run_dir,) = tmp_path.iterdir()
    md = (run_dir / "summary.md").read_text()
    assert md.startswith("closed-loop load: B requests at once:") and "open-loop load:" in md
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["plan"]["rates"] == [20.0] and meta["plan"]["arrival_seed"] == 3
    rows = [json.loads(line) for line in (run_dir / "points.jsonl").read_text().splitlines()]
    assert [r.get("load", {}).get("rate_rps") for r in rows] == [None] * 3 + [20.0] * 3
    assert all(r["in_flight"]["mean"] > 0 for r in rows)
    report = spectop("report", str(run_dir), "--format", "csv")
    assert report.returncode == 0 and report.stdout.splitlines()[-1].startswith("open,20.0,poisson,")
