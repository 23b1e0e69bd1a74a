"""Bad files and paths, as a user meets them: one clear line, exit 2, nothing measured lost, no traceback.

Every case runs `spectop` as a subprocess. A full disk is a cap on file size for the child
(RLIMIT_FSIZE): past it a write fails half-way, as on a disk that fills mid-line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from collectors.simulator import Simulator
from tests.support.cli_runs import ROOT, file_size_limit, one_line, spectop
from tests.support.sweep_rows import note25_rows

NOWHERE = "http://127.0.0.1:9"  # nothing listens there: no case below may get that far


def sweep_nowhere(*extra: str) -> list[str]:
    return ["sweep", "--plain", NOWHERE, "--draft", NOWHERE, "--meter", "none", *extra]


@pytest.mark.slow
@pytest.mark.parametrize("where", ["file in the way", "inside /proc", "name too long"])
def test_a_results_folder_that_cannot_be_made_stops_before_measuring(tmp_path, where):
    (tmp_path / "f").write_text("")
    results = {
        "file in the way": str(tmp_path / "f" / "runs"),
        "inside /proc": "/proc/spectop-results",
        "name too long": str(tmp_path / ("x" * 300)),
    }[where]
    proc = spectop(*sweep_nowhere("--results", results))
    assert proc.returncode == 2
    line = one_line(proc.stderr)
    assert line.startswith("spectop: cannot make a results folder under") and "give --results" in line


@pytest.mark.slow
def test_a_disk_that_fills_mid_sweep_keeps_every_whole_point_and_a_summary_of_them(tmp_path):
    # a point row is ~3 kB here; 8 kB takes meta.json and two rows, and the third is cut off mid-line
    with Simulator(seed=2, speedup=8) as sim:
        proc = spectop(
            *["sweep", "--plain", sim.plain_url, "--draft", sim.draft_url, "--batches", "1,2"],
            *["--tokens", "32", "--passes", "1", "--idle", "0.2", "--meter", f"dcgm={sim.meter_page_url}"],
            *["--results", str(tmp_path)],
            preexec=file_size_limit(8000),
        )
    line = one_line(proc.stderr)
    assert proc.returncode == 1, proc.stderr
    assert line.startswith("spectop: sweep stopped: cannot write a point to ") and "File too large" in line
    (run_dir,) = tmp_path.iterdir()
    saved = [json.loads(x) for x in (run_dir / "points.jsonl").read_text().splitlines()]  # all whole
    assert len(saved) >= 1 and f"{len(saved)} completed points saved in {run_dir}" in line
    assert json.loads((run_dir / "summary.json").read_text())["points"] == len(saved)
    report = spectop("report", str(run_dir), "--format", "json")
    assert (
        report.returncode == 0 and report.stderr == "" and json.loads(report.stdout)["points"] == len(saved)
    )


def write_run(tmp_path, lines: list[bytes], meta: bytes | None = None):
    (tmp_path / "points.jsonl").write_bytes(b"".join(lines))
    if meta is not None:
        (tmp_path / "meta.json").write_bytes(meta)
    return str(tmp_path)


@pytest.mark.slow
def test_report_on_a_run_with_nothing_readable(tmp_path):
    proc = spectop(
        "report", write_run(tmp_path, [b"\x00\xffgarbage\n", b'"a string"\n', b'{"batch": "x"}\n'])
    )
    assert proc.returncode == 2
    assert "holds no readable sweep point" in one_line(proc.stderr) and proc.stdout == ""


@pytest.mark.slow
def test_report_on_a_partly_corrupt_run_reports_what_is_whole_and_says_what_it_skipped(tmp_path):
    good = [json.dumps(r).encode() + b"\n" for r in note25_rows()[:6]]
    wrong = json.dumps({**note25_rows()[0], "energy_j": "lots"}).encode() + b"\n"
    run = write_run(tmp_path, good[:3] + [wrong] + good[3:] + [good[0][:25]], meta=b"{not json")
    proc = spectop("report", run)
    assert proc.returncode == 0
    line = one_line(proc.stderr)
    assert line == "spectop report: skipped meta.json: not a JSON object, ignored and 2 more"
    assert "paired sweep" in proc.stdout and "Recommendation" in proc.stdout
    as_json = json.loads(spectop("report", run, "--format", "json").stdout)
    assert as_json["points"] == 6


@pytest.mark.slow
def test_report_json_is_strict_even_from_a_run_holding_nan_or_overflowing(tmp_path):
    rows = note25_rows()[:6]
    rows[0]["net_energy_j"] = float("nan")  # Python's json writes NaN; strict readers reject it
    rows[3]["energy_j"] = rows[5]["energy_j"] = 1.5e308  # finite each, infinite once summed
    lines = [json.dumps(r).encode() + b"\n" for r in rows]
    proc = spectop("report", write_run(tmp_path, lines), "--format", "json")
    assert proc.returncode == 0
    body = json.loads(proc.stdout, parse_constant=lambda name: pytest.fail(f"{name} printed"))
    assert body["points"] == 6 and body["rows"][1]["plain"]["energy_j"] is None


@pytest.mark.slow
def test_report_on_a_folder_whose_points_file_is_a_folder(tmp_path):
    (tmp_path / "points.jsonl").mkdir()
    proc = spectop("report", str(tmp_path))
    assert proc.returncode == 2 and "has no points.jsonl" in one_line(proc.stderr)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("utf16.txt", "Write a haiku".encode("utf-16"), "utf16.txt is not UTF-8 text (byte 0)"),
        ("binary.txt", b"Write\x00a haiku", "binary.txt holds NUL bytes: not a text file"),
        (
            "numbers.jsonl",
            b'{"prompt": "ok"}\n{"prompt": 42}\n',
            'numbers.jsonl line 2: every line must be a JSON object with a text "prompt"',
        ),
        (
            "list.jsonl",
            b'["prompt"]\n',
            'list.jsonl line 1: every line must be a JSON object with a text "prompt"',
        ),
        (
            "blank.jsonl",
            b'{"prompt": "   "}\n',
            'blank.jsonl line 1: every line must be a JSON object with a text "prompt"',
        ),
        ("empty.txt", b"\n\n\n", "empty.txt holds no prompts"),
    ],
)
def test_a_prompts_file_of_the_wrong_kind_is_one_line(tmp_path, name, content, says):
    path = tmp_path / name
    path.write_bytes(content)
    proc = spectop(*sweep_nowhere("--prompts", str(path), "--results", str(tmp_path / "r")))
    assert proc.returncode == 2
    assert one_line(proc.stderr).startswith(f"spectop: {says}")
    assert not (tmp_path / "r").exists()  # nothing was started


@pytest.mark.slow
def test_a_huge_prompts_file_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "corpus.txt"
    with open(path, "wb") as fh:
        fh.truncate(64 * 1024 * 1024)  # sparse: no disk used
    proc = spectop(*sweep_nowhere("--prompts", str(path)))
    assert proc.returncode == 2 and "corpus.txt is larger than 16 MiB" in one_line(proc.stderr)


def test_prompts_from_windows_editors_split_on_blank_lines(tmp_path):
    from collectors.sweep.prompts import load_prompts

    path = tmp_path / "p.txt"
    path.write_bytes("\ufeffFirst prompt\r\n\r\nSecond prompt\r\n".encode())
    assert load_prompts(str(path)).prompts == ("First prompt", "Second prompt")


@pytest.mark.slow
def test_report_written_to_a_file_is_whole_at_any_terminal_width(tmp_path):
    rows = note25_rows()
    for r in rows:  # flags as long as a loaded run's: they must be read whole in a CI log
        r["flags"] = [{"code": c, "message": c} for c in ("estimate", "plain-drift", "short-window")]
    run = write_run(tmp_path, [json.dumps(r).encode() + b"\n" for r in rows])
    for columns in ("80", "160"):
        proc = subprocess.run(
            [sys.executable, "-m", "tui", "report", run],
            capture_output=True,  # a pipe, as `> out` or a CI log
            text=True,
            cwd=ROOT,
            env={**os.environ, "COLUMNS": columns},
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        assert "…" not in proc.stdout
        assert "estimate,plain-drift,short-window" in proc.stdout.replace(", ", ",")
