"""Results folders written by an earlier spectop load through today's engine: a paired sweep and a
multi-arm sweep, each measured on the simulators by the version whose sweep engine had its paired
and multi-arm halves apart (tests/data/sweeps), are summarized again from their points into the
same summary.json, summary.csv and summary.md they were saved with, by the library, by `spectop
report` and by the loader the Sweep tab's "show a saved run" uses; the summary records read the
saved summary.json and write it back the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collectors.export.json_forms import dumps
from collectors.sweep.codec import from_json, to_json
from collectors.sweep.records import ArmsSummary, PairedSummary
from collectors.sweep.sentences import to_markdown
from collectors.sweep.store import load_run
from collectors.sweep.summary import is_arms_run, summarize_saved, summary_of
from collectors.sweep.tables import to_table_csv
from tests.support.cli_runs import spectop
from tui.cli import main

SAVED = Path(__file__).resolve().parents[2] / "data" / "sweeps"
RUNS = {
    "paired": SAVED / "paired-20261201T223229Z",
    "multi-arm": SAVED / "multi-arm-20261201T223236Z",
}


@pytest.mark.parametrize("kind", RUNS)
def test_an_old_folder_is_summarized_as_it_was_saved(kind: str) -> None:
    run_dir = RUNS[kind]
    meta, rows = load_run(run_dir)
    assert is_arms_run(meta, rows) == (kind == "multi-arm")
    summary = summarize_saved(run_dir)
    assert json.loads(dumps(to_json(summary))) == json.loads((run_dir / "summary.json").read_text())
    assert to_table_csv(summary) == (run_dir / "summary.csv").read_text()
    assert to_markdown(summary) == (run_dir / "summary.md").read_text()


@pytest.mark.parametrize("kind", RUNS)
def test_report_reads_an_old_folder(kind: str) -> None:
    run_dir = RUNS[kind]
    done = spectop("report", str(run_dir), "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json.loads((run_dir / "summary.json").read_text())


@pytest.mark.parametrize("kind", RUNS)
def test_the_records_read_and_write_the_saved_form(kind: str) -> None:
    run_dir = RUNS[kind]
    saved = json.loads((run_dir / "summary.json").read_text())
    record = from_json(ArmsSummary if kind == "multi-arm" else PairedSummary, saved)
    assert json.loads(dumps(to_json(record))) == saved
    meta, rows = load_run(run_dir)
    assert record == summary_of(rows, meta)


@pytest.mark.parametrize("kind", RUNS)
def test_the_point_and_meta_records_read_and_write_the_saved_files(kind: str) -> None:
    # every row and the meta.json an earlier spectop wrote, read into the records and written back
    # by the one codec: the same keys in the same order with the same values, so a run written
    # today is the file it always was
    run_dir = RUNS[kind]
    lines = (run_dir / "points.jsonl").read_text().splitlines()
    meta, rows = load_run(run_dir)
    assert len(rows) == len(lines)
    for line, point in zip(lines, rows):
        assert dumps(to_json(point)) == dumps(json.loads(line))
    assert dumps(to_json(meta)) == dumps(json.loads((run_dir / "meta.json").read_text()))


def _old_row(
    index: int, arm: str, phase: str, tok_s: float, power_w: float, drafted: int, accepted: int
) -> dict:
    # a row as spectop wrote it before it kept the meter's own window (`energy_window_s`), every
    # gap (`chunk_gaps_ms`), the server's counts, `steps_exact`, `energy_covered` and the idle flag
    tokens = round(10.0 * tok_s)
    return {
        "schema": "spectop.point/1", "index": index, "pass": 0, "batch": 1, "arm": arm, "phase": phase,
        "started_at": "2026-11-01T10:00:00Z", "window_s": 10.0, "committed_tokens": tokens,
        "drafted": drafted, "accepted": accepted, "steps": 200 if drafted else tokens,
        "acceptance": accepted / drafted if drafted else None, "concurrency_mean": 1.0,
        "concurrency_max": 1, "ttft_ms_p50": 40.0, "chunk_gap_ms_p95": 20.0,
        "requests": [{"request_id": f"r{index}", "committed_tokens": tokens, "ttft_ms": 40.0}],
        "energy_j": 10.0 * power_w, "idle_w": 12.0, "net_energy_j": 10.0 * (power_w - 12.0),
        "power_w": power_w, "mj_per_token": 1000 * 10.0 * power_w / tokens,
        "server": {"url": "http://127.0.0.1:8080", "backend": "llama.cpp", "model": "m"},
        "meter": {"name": "nvml", "devices": ["gpu0"], "boundary": "GPU board", "method": "counter",
                  "update_period_s": 0.1},
        "machine": {"hostname": "h"}, "prompts": {"set": "default", "digest": "d"},
        "max_tokens": tokens, "temperature": 0.0, "flags": [],
    }  # fmt: skip


def test_a_folder_from_before_the_meter_window_and_the_gaps_loads_and_reports(tmp_path, capsys) -> None:
    # note 25's B=1 (collectors/docs/note25.md) saved in that older layout, with a meta.json from
    # before `refine`, `route`, the servers and the idle flag were kept
    meta = {
        "schema": "spectop.run/1",
        "plan": {"batches": [1], "max_tokens": 619, "passes": 1, "prompts": {"set": "default", "digest": "d",
                 "prompts": ["p"]}, "warmup_tokens": 16, "idle_s": 5.0, "drift_limit": 0.05, "fresh_server": False},
        "arms": [{"name": "plain", "url": "http://127.0.0.1:8080", "argv": [], "derived": False, "dropped": []}],
        "meter": {"name": "nvml", "devices": ["gpu0"], "boundary": "GPU board", "method": "counter",
                  "update_period_s": 0.1},
        "machine": {"hostname": "h"}, "planned_points": 3, "idle_w": 12.0,
    }  # fmt: skip
    rows = [
        _old_row(0, "plain", "before", 61.9, 22.9, 0, 0),
        _old_row(1, "draft", "", 78.3, 29.8, 400, 280),
        _old_row(2, "plain", "after", 61.9, 22.9, 0, 0),
    ]
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    (tmp_path / "points.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    skipped: list[str] = []
    loaded_meta, points = load_run(tmp_path, skipped)
    assert skipped == [] and len(points) == 3 and loaded_meta.planned_points == 3
    # by hand: plain 619 tokens, 229 J in 10 s: 370 mJ/token; draft 783 tokens, 298 J: 381 mJ/token;
    # 381 / 370 = 1.03x (within the 5 % band: even), 78.3 / 61.9 = 1.26x, 280 of 400 drafted: 70 %
    line = "| 1 | 61.9 | 78.3 | 1.26x | 370 | 381 | 1.03x | 22.9 | 29.8 | 70 % |"
    assert line in to_markdown(summarize_saved(tmp_path))  # what the Sweep tab's "show a saved run" reads
    assert main(["report", str(tmp_path), "--format", "markdown"]) == 0
    assert line in capsys.readouterr().out
