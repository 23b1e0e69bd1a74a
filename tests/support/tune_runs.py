"""Saved sweeps to derive schedules from (and the two committed ones, `DATA`): note 25's table as a paired run, and a multi-arm run whose
mJ/token cells are chosen by hand (every point 100 tok/s over 10 s, so mJ/token is 10 × its W)."""

from __future__ import annotations

from pathlib import Path

from collectors.sweep.store import ARMS_RUN_SCHEMA, RunStore
from collectors.tune.schedule import DraftSchedule, ScheduleLevel
from tests.support.sweep_rows import as_point, note25_rows, row, run_meta

DATA = Path(__file__).resolve().parents[1] / "data" / "sweeps"

# mJ/token per arm and batch; plain first
ARMS_MJ = {
    "plain": {1: 400, 2: 400, 4: 200, 8: 100},
    "draft-2": {1: 300, 2: 330, 4: 205, 8: 150},
    "draft-4": {1: 250, 2: 340, 4: 230, 8: 160},
    "ngram": {1: 100, 2: 100, 4: 100, 8: 100},
}


def save_run(folder: Path, rows: list[dict], meta: dict | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    store = RunStore(folder)
    store.write_meta(run_meta(meta or {}))
    for r in rows:
        store.append_point(as_point(r))
    return folder


def note25_run(folder: Path, rows: list[dict] | None = None) -> Path:
    return save_run(folder, rows if rows is not None else note25_rows())


def arms_rows(cells: dict[str, dict[int, float]], prompt_class: str = "prose") -> list[dict]:
    rows = []
    for arm, by_batch in cells.items():
        for batch, mj in by_batch.items():
            r = row(batch, arm, 100.0, mj / 10.0, phase="before" if arm == "plain" else "")
            rows.append({**r, "prompt_class": prompt_class})
    return rows


def arms_run(folder: Path, rows: list[dict] | None = None, classes: tuple[str, ...] = ("prose",)) -> Path:
    meta = {
        "schema": ARMS_RUN_SCHEMA,
        "arm_names": list(ARMS_MJ),
        "classes": [{"name": c} for c in classes],
    }
    return save_run(folder, rows if rows is not None else arms_rows(ARMS_MJ), meta)


def schedule_of(ks: dict[int, int], always_k: int | None = None) -> DraftSchedule:
    """A schedule with K `ks[batch]` at each level (the energies left out: the forms read only K)."""
    levels = tuple(
        ScheduleLevel(b, k, f"draft-{k}" if k else "plain", None, None, None) for b, k in ks.items()
    )
    top = always_k if always_k is not None else max(ks.values())
    return DraftSchedule(levels, f"draft-{top}", top, None, "results/run")


NOTE25_KS = {1: 4, 2: 4, 4: 0, 8: 0, 16: 0}  # test_derive: note 25 with drafts of up to 4
ARMS_KS = {1: 4, 2: 2, 4: 2, 8: 0}  # test_derive: the multi-arm run
