"""A sweep's files: meta.json at the start, one points.jsonl row per point as it completes, summaries at the end."""

from __future__ import annotations

import csv
import io
import json
import os
import platform
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from collectors.errors import SpectopError

POINT_SCHEMA = "spectop.point/1"


def machine() -> dict[str, Any]:
    """What the host is, for every row (the accelerator comes from the meter)."""
    return {
        "hostname": platform.node(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
    }


def new_run_dir(root: Path) -> Path:
    """results/<UTC timestamp>/, made unique if two sweeps start in the same second."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    for n in range(100):
        path = root / (stamp if n == 0 else f"{stamp}-{n}")
        try:
            path.mkdir(parents=True, exist_ok=False)
            return path
        except FileExistsError:
            continue
    raise SpectopError(f"cannot make a results folder under {root}")


class RunStore:
    """Writes are flushed and synced at once, so a killed server or Ctrl-C loses no completed point."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.points_path = run_dir / "points.jsonl"

    def write_meta(self, meta: Mapping[str, Any]) -> None:
        _write_atomic(self.run_dir / "meta.json", json.dumps(meta, indent=2, default=str))

    def append_point(self, row: Mapping[str, Any]) -> None:
        with open(self.points_path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(row, default=str) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def write_summary(self, summary: Mapping[str, Any], table_csv: str, table_md: str) -> None:
        _write_atomic(self.run_dir / "summary.json", json.dumps(summary, indent=2, default=str))
        _write_atomic(self.run_dir / "summary.csv", table_csv)
        _write_atomic(self.run_dir / "summary.md", table_md)


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def load_run(run_dir: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """meta and point rows of a saved run; a half-written last line (a crash) is skipped."""
    if not run_dir.is_dir():
        raise SpectopError(f"no sweep results at {run_dir}", "give the folder spectop sweep printed")
    points_path = run_dir / "points.jsonl"
    if not points_path.is_file():
        raise SpectopError(f"{run_dir} has no points.jsonl", "give a folder made by spectop sweep")
    meta_path = run_dir / "meta.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.is_file() else {}
    rows = []
    for line in points_path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return meta, rows


def to_csv(header: list[str], rows: list[list[Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()
