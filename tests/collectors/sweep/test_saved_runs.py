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
