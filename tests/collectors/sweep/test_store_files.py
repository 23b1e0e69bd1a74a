"""A sweep's files survive crashes and corruption: whole lines only, torn ones skipped and named."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from collectors.errors import SpectopError
from collectors.export.json_forms import dumps, finite
from collectors.simulator import Simulator
from collectors.sweep.arms import make_arms
from collectors.sweep.codec import to_json
from collectors.sweep.events import SweepEnded, SweepStarted
from collectors.sweep.plan import SweepPlan
from collectors.sweep.run_meta import RunMeta
from collectors.sweep.runner import run_sweep
from collectors.sweep.store import RunStore, load_run, new_run_dir, point_problem
from tests.support.sweep_rows import as_point, note25_rows, points


def test_a_line_torn_by_a_crash_never_swallows_the_next_row(tmp_path):
    rows = points(note25_rows()[:2])
    store = RunStore(tmp_path)
    store.append_point(rows[0])
    with open(store.points_path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(to_json(rows[1]))[:40])  # killed mid-write: no newline
    store.append_point(rows[1])  # the next sweep point after a restart of the writer
    skipped: list[str] = []
    _, loaded = load_run(tmp_path, skipped)
    assert loaded == rows
    assert skipped == ["points.jsonl line 2: not a whole JSON line"]


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ([1, 2], "not a JSON object"),
        ({"arm": "plain"}, "no batch (a whole number from 1)"),
        ({"batch": True, "arm": "plain"}, "no batch (a whole number from 1)"),
        ({"batch": 2, "arm": "both"}, "no arm (plain or draft)"),
        ({"batch": 2, "arm": "plain", "pass": [0]}, "pass is not a whole number"),
        ({"batch": 2, "arm": "plain", "committed_tokens": "512"}, "no committed_tokens"),
        ({"batch": 2, "arm": "plain", "committed_tokens": 5, "window_s": -1}, "no window_s"),
    ],
)
def test_what_is_not_a_sweep_point_is_named(row, problem):
    assert point_problem(row) == problem


def test_wrong_types_deep_in_a_row_are_caught():
    good = note25_rows()[0]
    assert point_problem(good) is None
    assert point_problem({**good, "energy_j": "12 J"}) == "energy_j is not a number"
    assert point_problem({**good, "flags": ["void"]}) == "flags are not a list of {code, message}"
    assert point_problem({**good, "chunk_gaps_ms": [1.0, None]}) == "chunk_gaps_ms is not a list of numbers"
    assert (
        point_problem({**good, "requests": [{"ttft_ms": "fast"}]})
        == "requests are not a list of request objects"
    )


def test_a_run_with_nothing_readable_is_one_clear_error(tmp_path):
    (tmp_path / "points.jsonl").write_bytes(b"\x00\xff\xfe garbage\n[1, 2]\n")
    with pytest.raises(SpectopError, match="holds no readable sweep point"):
        load_run(tmp_path)


def test_a_corrupt_meta_is_ignored_and_said(tmp_path):
    (tmp_path / "points.jsonl").write_text(json.dumps(note25_rows()[0]) + "\n")
    (tmp_path / "meta.json").write_text('{"planned_points": "lots", "idle_w": 12.5')
    skipped: list[str] = []
    meta, rows = load_run(tmp_path, skipped)
    assert meta == RunMeta() and len(rows) == 1 and skipped == ["meta.json: not a JSON object, ignored"]
    (tmp_path / "meta.json").write_text('{"planned_points": "lots", "idle_w": 12.5}')
    skipped.clear()
    meta, _ = load_run(tmp_path, skipped)
    assert meta == RunMeta(idle_w=12.5) and skipped == [
        "meta.json: planned_points is not what a sweep writes, ignored"
    ]


@pytest.mark.parametrize("make", ["file in the way", "too long", "nul byte"])
def test_a_results_folder_that_cannot_be_made_is_one_clear_error(tmp_path, make):
    (tmp_path / "f").write_text("")
    root = {
        "file in the way": tmp_path / "f" / "runs",
        "too long": tmp_path / ("x" * 300),
        "nul byte": Path(f"{tmp_path}/a\x00b"),
    }[make]
    with pytest.raises(SpectopError) as error:
        new_run_dir(root)
    assert error.value.what.startswith("cannot make a results folder under")
    assert "give --results a folder you can write" in error.value.fix


def test_files_are_strict_json_without_nan_or_infinity(tmp_path):
    assert finite({"a": [math.nan, 1.5, {"b": math.inf}], "c": -math.inf}) == {
        "a": [None, 1.5, {"b": None}],
        "c": None,
    }
    store = RunStore(tmp_path)
    store.append_point(as_point({**note25_rows()[0], "power_w": math.nan}))
    store.write_summary({"ratio": math.inf}, "", "")
    strict = {"parse_constant": lambda name: pytest.fail(f"{name} in a file")}
    assert json.loads(store.points_path.read_text(), **strict)["power_w"] is None
    assert json.loads((tmp_path / "summary.json").read_text(), **strict) == {"ratio": None}
    assert dumps([math.nan]) == "[null]"


def test_a_summary_that_cannot_be_written_still_ends_the_sweep_with_it(tmp_path):
    # summary.json cannot be written (here a folder is in its way; a full disk does the same): the
    # sweep still ends with its summary and says why the file is missing, and the points are on disk
    plan = SweepPlan(batches=(1,), max_tokens=16, passes=1, idle_s=0.1, warmup_tokens=2)
    with Simulator(seed=1, speedup=20) as sim:
        arms = make_arms(plain_url=sim.plain_url, draft_url=sim.draft_url)
        events = []
        for event in run_sweep(plan, arms, None, tmp_path):
            if isinstance(event, SweepStarted):
                (event.run_dir / "summary.json").mkdir()
            events.append(event)
    ended = events[-1]
    assert isinstance(ended, SweepEnded) and ended.summary.points == 3
    assert ended.error.startswith(f"cannot write {ended.run_dir / 'summary.json'}: Is a directory")
    assert len(load_run(ended.run_dir)[1]) == 3
