"""A sweep's files: meta.json at the start, one points.jsonl row per point as it completes, summaries at the end.

Pitfalls handled: a results folder that cannot be made (no permission, a file in the way, a read-only
or impossible path) and a file that cannot be written (a full disk) are one-line SpectopErrors, never
tracebacks; a point row is appended whole or not at all (a failed write is cut back off, and a line
left torn by a crash is ended before the next row, so it never swallows one); reading a run skips
what is not a whole sweep point (a torn last line, a corrupt or foreign line, wrong types) instead
of failing on it, and says what it skipped. Files are strict JSON: no NaN or Infinity. A server
command may carry an API key: whoever built a row, every `command` and `argv` in it is written with
its secrets replaced (collectors/redact.py).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import platform
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from collectors.errors import SpectopError
from collectors.export.json_forms import dumps, finite
from collectors.redact import redact_argv, redact_command
from collectors.sweep.codec import from_json, to_json
from collectors.sweep.open_loop import open_loop_problem
from collectors.sweep.point import POINT_SCHEMA, Machine, SweepPoint
from collectors.sweep.records import ARMS_SUMMARY_SCHEMA, SUMMARY_SCHEMA, Summary
from collectors.sweep.run_meta import ARMS_RUN_SCHEMA, RUN_SCHEMA, RunMeta

__all__ = [  # the files' schema strings, read from here by the sweep and the tests
    "ARMS_RUN_SCHEMA",
    "ARMS_SUMMARY_SCHEMA",
    "POINT_SCHEMA",
    "RUN_SCHEMA",
    "SUMMARY_SCHEMA",
    "RunStore",
    "load_run",
    "machine",
    "new_run_dir",
    "point_problem",
    "to_csv",
    "without_secrets",
]


def machine() -> Machine:
    """What the host is, for every row (the accelerator comes from the meter)."""
    return Machine(
        hostname=platform.node(),
        platform=platform.platform(),
        processor=platform.processor() or platform.machine(),
        cpu_count=os.cpu_count(),
        python=platform.python_version(),
    )


def new_run_dir(root: Path) -> Path:
    """results/<UTC timestamp>/, made unique if two sweeps start in the same second."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    for n in range(100):
        path = root / (stamp if n == 0 else f"{stamp}-{n}")
        try:
            path.mkdir(parents=True, exist_ok=False)
            return path
        except FileExistsError:
            if not root.is_dir():
                raise _cannot("make a results folder under", root, "a file is in the way") from None
            continue
        except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
            raise _cannot("make a results folder under", root, exc) from exc
    raise SpectopError(f"cannot make a results folder under {root}")


def _cannot(what: str, path: Path, exc: BaseException | str) -> SpectopError:
    why = exc if isinstance(exc, str) else (getattr(exc, "strerror", None) or str(exc))
    return SpectopError(
        f"cannot {what} {path}: {why}", "give --results a folder you can write, with free space"
    )


class RunStore:
    """Writes are flushed and synced at once, so a killed server or Ctrl-C loses no completed point."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.points_path = run_dir / "points.jsonl"

    def write_meta(self, meta: RunMeta) -> None:
        text = dumps(without_secrets(to_json(meta)), indent=2, default=str)
        write_atomic(self.run_dir / "meta.json", text)

    def append_point(self, point: SweepPoint) -> None:
        """One whole line, synced; on a failed write (a full disk) the file is cut back as it was."""
        data = (dumps(without_secrets(to_json(point)), default=str) + "\n").encode("utf-8")
        try:
            fd = os.open(self.points_path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise _cannot("write", self.points_path, exc) from exc
        try:
            start = os.lseek(fd, 0, os.SEEK_END)
            if start and os.pread(fd, 1, start - 1) != b"\n":
                data = b"\n" + data  # a line torn by a crash stays alone, and is skipped when read
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except OSError as exc:
            try:
                os.ftruncate(fd, start)
            except OSError:
                pass
            raise _cannot("write a point to", self.points_path, exc) from exc
        finally:
            os.close(fd)

    def write_summary(self, summary: Summary, table_csv: str, table_md: str) -> None:
        write_atomic(self.run_dir / "summary.json", dumps(to_json(summary), indent=2, default=str))
        write_atomic(self.run_dir / "summary.csv", table_csv)
        write_atomic(self.run_dir / "summary.md", table_md)


def without_secrets(value: Any) -> Any:
    """`value` with the secrets of every command in it (`command` strings, `argv` lists) replaced."""
    if isinstance(value, Mapping):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            if key == "command" and isinstance(item, str):
                out[key] = redact_command(item)
            elif key == "argv" and isinstance(item, list | tuple):
                out[key] = redact_argv(str(word) for word in item)
            else:
                out[key] = without_secrets(item)
        return out
    if isinstance(value, list | tuple):
        return [without_secrets(item) for item in value]
    return value


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` whole or not at all (a temporary file renamed over it)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise _cannot("write", path, exc) from exc


def load_run(run_dir: Path, skipped: list[str] | None = None) -> tuple[RunMeta, list[SweepPoint]]:
    """meta and points of a saved run, older versions' files too; what is not a whole sweep point
    (a half-written last line from a crash, a corrupt line) is skipped, and said in `skipped` when
    given."""
    skipped = skipped if skipped is not None else []
    if not run_dir.is_dir():
        raise SpectopError(f"no sweep results at {run_dir}", "give the folder spectop sweep printed")
    points_path = run_dir / "points.jsonl"
    if not points_path.is_file():
        raise SpectopError(f"{run_dir} has no points.jsonl", "give a folder made by spectop sweep")
    meta = _read_meta(run_dir / "meta.json", skipped)
    try:
        lines = points_path.read_bytes().splitlines()
    except OSError as exc:
        raise SpectopError(f"cannot read {points_path}: {exc.strerror}", "check its permissions") from exc
    rows = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = finite(json.loads(line.decode("utf-8")))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            skipped.append(f"points.jsonl line {number}: not a whole JSON line")
            continue
        problem = point_problem(row)
        if problem is None:
            try:
                rows.append(from_json(SweepPoint, row))
            except (TypeError, ValueError, AttributeError):  # a nested field of the wrong shape
                problem = "a field has the wrong type"
        if problem:
            skipped.append(f"points.jsonl line {number}: {problem}")
    if lines and not rows:
        raise SpectopError(
            f"{points_path} holds no readable sweep point ({skipped[-1]})",
            "give a folder made by spectop sweep",
        )
    return meta, rows


def _read_meta(path: Path, skipped: list[str]) -> RunMeta:
    if not path.is_file():
        return RunMeta()
    try:
        meta = finite(json.loads(path.read_bytes().decode("utf-8")))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        meta = None
    if not isinstance(meta, dict):
        skipped.append("meta.json: not a JSON object, ignored")
        return RunMeta()
    # what the summary reads of it, each dropped when it has the wrong type
    for key, ok in (("planned_points", _count), ("idle_w", _number), ("idle_flag", _flag_or_none)):
        if key in meta and not ok(meta[key]):
            skipped.append(f"meta.json: {key} is not what a sweep writes, ignored")
            meta.pop(key)
    try:
        record: RunMeta = from_json(RunMeta, meta)
    except (TypeError, ValueError, AttributeError):
        # a plan, arm or server of another shape: keep what the summary reads, if that reads
        skipped.append("meta.json: its plan, arms or servers are not what a sweep writes, ignored")
        kept = {k: meta[k] for k in _SUMMARY_READS if k in meta}
        try:
            record = from_json(RunMeta, kept)
        except (TypeError, ValueError, AttributeError):
            return RunMeta()
    return record


# what the summary reads of meta.json (summary.py)
_SUMMARY_READS = ("schema", "planned_points", "idle_w", "idle_flag", "arm_names", "classes", "failed_arms")


def _number(v: Any) -> bool:
    return v is None or (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v))


def _count(v: Any) -> bool:
    return v is None or (isinstance(v, int) and not isinstance(v, bool) and v >= 0)


def _flag(v: Any) -> bool:
    return isinstance(v, dict) and isinstance(v.get("code"), str) and isinstance(v.get("message", ""), str)


def _flag_or_none(v: Any) -> bool:
    return v is None or _flag(v)


_NUMBERS = (
    "energy_j",
    "net_energy_j",
    "energy_window_s",
    "drafted",
    "accepted",
    "steps",
    "concurrency_mean",
    "concurrency_max",
    "idle_w",
    "mj_per_token",
    "power_w",
    "net_mj_per_token",
    "tok_s",
)


def point_problem(row: Any) -> str | None:
    """Why `row` is not a sweep point the summary can read (the fields it reads, with their types)."""
    if not isinstance(row, dict):
        return "not a JSON object"
    if not (isinstance(row.get("batch"), int) and not isinstance(row["batch"], bool) and row["batch"] >= 1):
        if row.get("batch") != 0 or row.get("load") is None:  # an open-loop point's batch is 0
            return "no batch (a whole number from 1)"
    named = bool(row.get("prompt_class")) and isinstance(row.get("arm"), str) and bool(row.get("arm"))
    if row.get("arm") not in ("plain", "draft") and not named:  # a multi-arm sweep's arms have names
        return "no arm (plain or draft)"
    if not _count(row.get("pass")):
        return "pass is not a whole number"
    if not _count(row.get("committed_tokens")) or row.get("committed_tokens") is None:
        return "no committed_tokens"
    if not (_number(row.get("window_s")) and row.get("window_s") is not None and row["window_s"] >= 0):
        return "no window_s"
    bad = [k for k in _NUMBERS if not _number(row.get(k))]
    if bad:
        return f"{bad[0]} is not a number"
    if not isinstance(row.get("energy_covered", True), bool) or not _flag_or_none(row.get("idle_flag")):
        return "energy_covered or idle_flag has the wrong type"
    if not (isinstance(row.get("flags", []), list) and all(_flag(f) for f in row.get("flags", []))):
        return "flags are not a list of {code, message}"
    gaps = row.get("chunk_gaps_ms")
    if gaps is not None and not (isinstance(gaps, list) and all(_number(g) and g is not None for g in gaps)):
        return "chunk_gaps_ms is not a list of numbers"
    requests = row.get("requests", [])
    if not (
        isinstance(requests, list)
        and all(isinstance(q, dict) and _number(q.get("ttft_ms")) for q in requests)
    ):
        return "requests are not a list of request objects"
    return open_loop_problem(row)


def to_csv(header: list[str], rows: list[list[Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()
