"""The paired sweep on real llama-servers started by spectop (tiny models, CPU, estimate meter)."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from collectors.launch.process import free_port
from collectors.meters import Sampler, open_meter
from collectors.sweep.arms import make_arms
from collectors.sweep.codec import to_json
from collectors.sweep.events import PointDone, SweepEnded
from collectors.sweep.plan import SweepPlan
from collectors.sweep.runner import run_sweep
from collectors.sweep.store import load_run
from tests.support.processes import reaped

pytestmark = pytest.mark.llama
BASE = ["-np", "4", "-c", "4096", "-t", "1", "--metrics"]


def draft_command(binary, models, spec_type=True) -> list[str]:
    argv = [
        binary,
        "-m",
        str(models.target_path),
        "--port",
        str(free_port()),
        *BASE,
        "-md",
        str(models.draft_path),
    ]
    return argv + (["--spec-type", "draft-simple", "--spec-draft-n-max", "4"] if spec_type else [])


def run(plan, arms, tmp_path, should_stop=lambda: False, on_event=None):
    meter = open_meter("estimate")
    events = []
    with Sampler(meter) as sampler:
        for event in run_sweep(plan, arms, sampler, tmp_path / "results", should_stop=should_stop):
            events.append(event)
            if on_event:
                on_event(event)
    return events


def test_short_sweep_from_a_draft_command(llama_server_binary, tiny_models, tmp_path):
    plan = SweepPlan(batches=(1, 2), max_tokens=48, passes=1, idle_s=0.5, warmup_tokens=4)
    arms = make_arms(draft_cmd=draft_command(llama_server_binary, tiny_models))
    assert arms[0].derived and "-md" in arms[0].dropped
    events = run(plan, arms, tmp_path)
    ended = events[-1]
    assert isinstance(ended, SweepEnded) and ended.error is None and not ended.cancelled
    meta, rows = load_run(ended.run_dir)
    meta, rows = to_json(meta), to_json(rows)  # as meta.json and points.jsonl hold them
    assert len(rows) == 6 and meta["planned_points"] == 6
    for row in rows:
        assert row["committed_tokens"] == row["batch"] * 48
        assert row["server_tokens"] == row["committed_tokens"]
        assert row["server"]["build"].startswith("b") and row["meter"]["method"] == "estimate"
        assert "estimate" in {f["code"] for f in row["flags"]}
        # the batch the server actually ran, from its own busy-slots-per-decode over the window.
        # llama-server prints that running mean with 6 significant digits, and the window's mean is
        # rebuilt from it (mean x decodes, before and after): about 1e-4 of error here, not 0.
        # How well two short answers overlap on a shared, loaded CPU is not the server's promise;
        # what is spectop's is that a point that ran short of its batch says so.
        mean = row["server_busy_per_decode"]
        codes = {f["code"] for f in row["flags"]}
        if row["batch"] == 1:
            assert mean == pytest.approx(1.0, abs=0.01) and "concurrency" not in codes
        else:
            assert 1.0 - 0.01 <= mean <= row["batch"] + 0.01
            assert ("concurrency" in codes) == (mean < 0.75 * row["batch"]), (mean, codes)
        if row["arm"] == "draft":
            # acceptance equals the server's own counters
            assert row["drafted"] == row["server_drafted"] and row["accepted"] == row["server_accepted"]
            assert 0 < row["acceptance"] < 1
            assert row["server"]["drafting"] is True
            assert "output-mismatch" not in {f["code"] for f in row["flags"]}
        else:
            assert row["drafted"] == 0 and row["server"]["drafting"] is False
    summary = json.loads((ended.run_dir / "summary.json").read_text())
    assert [t["batch"] for t in summary["rows"]] == [1, 2]
    assert (ended.run_dir / "summary.csv").read_text().startswith("batch,plain_tok_s")
    assert "Recommendation:" in (ended.run_dir / "summary.md").read_text()


def test_draft_without_spec_type_is_flagged_void(llama_server_binary, tiny_models, tmp_path):
    plan = SweepPlan(batches=(1,), max_tokens=16, passes=1, idle_s=0.2, warmup_tokens=4)
    arms = make_arms(draft_cmd=draft_command(llama_server_binary, tiny_models, spec_type=False))
    ended = run(plan, arms, tmp_path)[-1]
    _, rows = load_run(ended.run_dir)
    draft = next(r for r in rows if r.arm == "draft")
    assert "void" in {f.code for f in draft.flags}
    assert ended.summary.rows[0].void
    assert ended.summary.recommendation.startswith("no valid paired points")


def test_a_server_that_dies_mid_sweep_loses_no_completed_point(llama_server, draft_args, tmp_path):
    plain, draft = llama_server(), llama_server(*draft_args)
    plan = SweepPlan(batches=(1, 2), max_tokens=16, passes=1, idle_s=0.2, warmup_tokens=4)
    arms = make_arms(plain_url=plain.url, draft_url=draft.url)

    def kill_draft(event):
        if isinstance(event, PointDone) and event.index == 0:
            draft.stop()

    events = run(plan, arms, tmp_path, on_event=kill_draft)
    ended = events[-1]
    assert ended.error and "cannot" in ended.error
    _, rows = load_run(ended.run_dir)
    assert len(rows) == 1 and rows[0].arm == "plain"
    assert ended.summary.points == 1


def test_ctrl_c_leaves_completed_points_and_one_line(llama_server, draft_args, tmp_path):
    plain, draft = llama_server(), llama_server(*draft_args)
    cmd = [
        sys.executable,
        "-m",
        "tui",
        "sweep",
        "--plain",
        plain.url,
        "--draft",
        draft.url,
        "--batches",
        "1,2,4",
        "--tokens",
        "64",
        "--passes",
        "2",
        "--idle",
        "0.2",
        "--meter",
        "estimate",
        "--results",
        str(tmp_path),
    ]
    popen = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "COLUMNS": "120"}
    )
    with reaped(popen) as proc:
        deadline = time.monotonic() + 60
        for line in proc.stdout:
            if "B=1   draft" in line or time.monotonic() > deadline:
                break
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, shlex.join(cmd) + "\n" + err
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and "sweep interrupted" in lines[0] and "Traceback" not in err
    run_dir = Path(lines[0].rsplit(" in ", 1)[1])
    _, rows = load_run(run_dir)
    assert len(rows) >= 2
    assert f"{len(rows)} completed points" in lines[0]
    assert (run_dir / "summary.json").is_file()


def test_fresh_server_restarts_before_every_point(llama_server_binary, tiny_models, tmp_path):
    plan = SweepPlan(batches=(1,), max_tokens=16, passes=1, idle_s=0.2, warmup_tokens=4, fresh_server=True)
    arms = make_arms(draft_cmd=draft_command(llama_server_binary, tiny_models))
    ended = run(plan, arms, tmp_path)[-1]
    assert ended.error is None
    logs = sorted(p.name for p in ended.run_dir.glob("*-server-*.log"))
    # one start for the idle baseline, then one per point: plain, draft, plain
    assert logs == ["draft-server-3.log", "plain-server-1.log", "plain-server-2.log", "plain-server-4.log"]
    _, rows = load_run(ended.run_dir)
    assert [r.arm for r in rows] == ["plain", "draft", "plain"] and all(
        r.window.committed_tokens == 16 for r in rows
    )
