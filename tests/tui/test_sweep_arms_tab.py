"""The Sweep tab shows a multi-arm sweep: seed 001's arm x class grid (collectors/docs/draft-strategies.md) with
the best arms marked, the summary's sentences and a plot of mJ/token by arm per class; a saved run
is shown from the dialog; and the drafting panel gives Eq. 5's width advice live after it.

The points are seed 001's table (collectors/simulator/profiles_note001.py, copied from the note),
one request at a time, so the best arms are the note's: draft-4 for code, plain for prose, n-gram
for edit.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from rich.text import Text
from textual.widgets import Button, DataTable, Input, Select, Static

from collectors.meters import Sampler, open_meter
from collectors.simulator import Simulator
from collectors.simulator.profiles_note001 import ARMS, TABLE
from collectors.sweep.events import PointDone, PointProgressed, SweepEnded, SweepStarted
from collectors.sweep.plan import PointKey, SweepPlan
from collectors.sweep.store import ARMS_RUN_SCHEMA
from collectors.sweep.summary import summary_of
from tests.support import synthetic
from tests.support.dashboard import FakeCollector, FakeSampler, wait_until
from tests.support.sweep_rows import as_point, points, run_meta
from tui import messages
from tui.app import SpectopApp
from tui.config import Settings
from tui.widgets.sweep_dialog import CLASSES as CLASSES_OPTION
from tui.widgets.sweep_dialog import SweepDialog

CLASSES = ("code", "prose", "edit")
SIZES = {"wide": (140, 42), "narrow": (80, 24)}
STEPS = 100  # decode steps per point: G = 1 + accepted / 100
TOKENS = 384  # seed 001's greedy answer length
RUN_DIR = Path("results/20261130T000000Z")


def _row(cls: str, arm: str, phase: str = "") -> dict[str, Any]:
    tok_s, acceptance, mj = TABLE[(cls, arm)]
    length = 8 if arm == "ngram" else (int(arm.removeprefix("draft-")) if arm != "plain" else 0)
    drafted = None if arm == "plain" else (0 if acceptance is None else STEPS * length)
    accepted = None if drafted is None else round((acceptance or 0.0) * drafted)
    seconds = TOKENS / tok_s
    flags = [{"code": "void", "message": "the ngram arm drafted nothing"}] if drafted == 0 else []
    return {
        "pass": 0, "batch": 1, "arm": arm, "phase": phase, "prompt_class": cls,
        "committed_tokens": TOKENS, "window_s": seconds, "energy_window_s": seconds,
        "energy_j": mj * TOKENS / 1000, "energy_covered": True, "net_energy_j": None,
        "drafted": drafted, "accepted": accepted, "steps": STEPS, "chunk_gaps_ms": [], "requests": [],
        "flags": flags, "server": {"backend": "llama.cpp", "command": f"llama-server ({arm})"},
    }  # fmt: skip


def note001_rows() -> list[dict[str, Any]]:
    rows = []
    for cls in CLASSES:
        rows.append(_row(cls, "plain", "before"))
        rows += [_row(cls, arm) for arm in ARMS[1:]]
        rows.append(_row(cls, "plain", "after"))
    return rows


def note001_meta(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "schema": ARMS_RUN_SCHEMA,
        "arm_names": list(ARMS),
        "classes": [{"name": c, "digest": "", "prompts": []} for c in CLASSES],
        "planned_points": len(rows),
        "idle_w": 12.0,
    }


def arms_events() -> list:
    rows = note001_rows()
    schedule = tuple(PointKey(0, 1, r["arm"], r["phase"], r["prompt_class"]) for r in rows)
    summary = summary_of(points(rows), run_meta(note001_meta(rows)))
    events: list = [SweepStarted(RUN_DIR, SweepPlan(), schedule, ())]
    for i, (key, row) in enumerate(zip(schedule, rows)):
        shown = {
            **row,
            "tok_s": row["committed_tokens"] / row["window_s"],
            "power_w": row["energy_j"] / row["window_s"],
            "mj_per_token": 1000 * row["energy_j"] / row["committed_tokens"],
            "acceptance": row["accepted"] / row["drafted"] if row["drafted"] else None,
        }
        events += [PointProgressed(i, key, "running"), PointDone(i, key, as_point(shown))]
    return [*events, SweepEnded(RUN_DIR, summary, False)]


def make_app() -> SpectopApp:
    settings = Settings(server_url=synthetic.URL, poll=False)
    return SpectopApp(settings, FakeCollector(synthetic.snapshots()), FakeSampler(synthetic.METER))


def grid(app: SpectopApp) -> dict[tuple[str, str], dict[str, str]]:
    table = app.main.query_one("#sweep-table", DataTable)
    keys = [str(c.key.value) for c in table.columns.values()]
    rows = [dict(zip(keys, (str(c) for c in table.get_row_at(i)))) for i in range(table.row_count)]
    return {(r["class"], r["arm"]): r for r in rows}


def plain_text(widget: Static) -> str:
    content = widget.render()
    return content.plain if isinstance(content, Text) else str(content)


async def feed_arms(pilot) -> None:
    app = pilot.app
    await pilot.pause()  # the sweep tab composed, as it is before anyone can start a sweep
    for event in arms_events():
        app.post_message(messages.SweepProgressed(event))
    await pilot.pause()
    await pilot.press("3")
    await pilot.pause(0.2)
    app.clear_notifications()


async def test_grid_marks_the_best_arm_per_class_and_says_the_sentences() -> None:
    app = make_app()
    async with app.run_test(size=SIZES["wide"]) as pilot:
        await feed_arms(pilot)
        cells = grid(app)
        assert len(cells) == len(CLASSES) * len(ARMS)
        # seed 001's findings: draft-4 best for code by energy and speed; plain for prose by energy,
        # draft-4 by speed; n-gram wins edits outright
        assert cells[("code", "draft-4")]["best"] == "energy+speed"
        assert (cells[("prose", "plain")]["best"], cells[("prose", "draft-4")]["best"]) == ("energy", "speed")
        assert cells[("edit", "ngram")]["best"] == "energy+speed"
        assert (
            cells[("edit", "ngram")]["mJ/token"] == "119.5"
            and cells[("edit", "ngram")]["vs plain"] == "0.32x"
        )
        verdict = plain_text(app.main.query_one("#sweep-verdict", Static))
        assert "Best by energy: code draft-4, prose plain, edit ngram." in verdict
        assert "Best by speed: code draft-4, prose draft-4 (dearer), edit ngram." in verdict
        assert "Below 60 % acceptance (yellow): code: not all cost energy; prose: all cost energy." in verdict
        assert "code: llama-server at 1 concurrent request: --spec-draft-n-max 4" in verdict
        assert "edit: llama-server at 1 concurrent request: --spec-type ngram-simple (and no -md)" in verdict
        # the multi-arm summary is not a paired one: the live verdict keeps comparing with none
        assert app.state.sweep_summary is None


async def test_the_finished_notification_names_the_best_arm_per_class() -> None:
    app = make_app()
    async with app.run_test(size=SIZES["wide"]) as pilot:
        for event in arms_events():
            app.post_message(messages.SweepProgressed(event))
        await pilot.pause()
        said = [n.message for n in app._notifications]
        assert "best by energy: code draft-4, prose plain, edit ngram" in said


async def test_drafting_panel_gives_the_width_advice_live_after_the_sweep() -> None:
    app = make_app()
    async with app.run_test(size=SIZES["wide"]) as pilot:
        await feed_arms(pilot)
        # J_k = mJ/token x (1 + accepted/100), the median over classes: draft-2 code 383.5 x 2.56,
        # prose 447.5 x 2.20 = 984.5, edit 339.3 x 2.96; draft-4 code 302.0 x 3.72 = 1123.44, ...
        assert app.main.drafting_panel.round_energy_mj[2] == pytest.approx(984.5)
        assert app.main.drafting_panel.round_energy_mj[4] == pytest.approx(1123.44)
        # live: the server drafts 4 positions, S = 0.6, 0.4, 0.3, 0.2 over 100 steps; 2 -> 4 adds
        # 0.5 tokens on G_2 = 2.0, so it may cost 25 %; it costs 1123.44 / 984.5 - 1 = 14 %: keep 4
        snap = dataclasses.replace(
            synthetic.snapshots()[-1], window_per_position=(60, 40, 30, 20), window_steps=100
        )
        app.main.show_snapshot(snap, snap, [], None)  # as a poll whose window has these counts
        await pilot.pause()
        shown = "\n".join(t.plain for t in app.main.drafting_panel.lines(app.main.drafting_panel.view))
        assert "draft-max 2 → 4 costs 14 % more per round and adds 0.50 tokens: keep 4" in shown
        # a survival that falls off after S_2: the same 14 % buys 0.02 tokens on G_2 = 2.0: keep 2
        snap = dataclasses.replace(snap, window_per_position=(60, 40, 1, 1))
        app.main.show_snapshot(snap, snap, [], None)
        await pilot.pause()
        shown = "\n".join(t.plain for t in app.main.drafting_panel.lines(app.main.drafting_panel.view))
        assert "draft-max 2 → 4 costs 14 % more per round and adds 0.02 tokens: keep 2" in shown


def write_run(run_dir: Path) -> None:
    rows = note001_rows()
    run_dir.mkdir(parents=True)
    (run_dir / "meta.json").write_text(json.dumps(note001_meta(rows)))
    (run_dir / "points.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


async def test_dialog_shows_a_saved_multi_arm_run(tmp_path: Path) -> None:
    write_run(tmp_path / "run")
    app = make_app()
    async with app.run_test(size=SIZES["wide"]) as pilot:
        app.action_sweep()
        await wait_until(pilot, lambda: isinstance(app.screen, SweepDialog))
        dialog = app.screen
        dialog.query_one("#saved-run", Input).value = str(tmp_path / "missing")
        dialog.query_one("#dialog-show", Button).press()
        error = dialog.query_one("#dialog-error", Static)
        await wait_until(pilot, lambda: "no sweep results at" in plain_text(error))
        # a wrong folder is one line in the dialog, which stays open
        assert app.screen is dialog
        dialog.query_one("#saved-run", Input).value = str(tmp_path / "run")
        dialog.query_one("#dialog-show", Button).press()
        await wait_until(pilot, lambda: ("edit", "ngram") in grid(app))
        assert app.screen is not dialog
        assert app.main.tabs.active == "sweep"
        assert grid(app)[("edit", "ngram")]["best"] == "energy+speed"
        assert 4 in app.main.drafting_panel.round_energy_mj


@pytest.mark.parametrize("size", SIZES.values(), ids=SIZES.keys())
def test_finished_multi_arm_sweep(snap_compare, size):
    assert snap_compare(make_app(), terminal_size=size, run_before=feed_arms)


@pytest.fixture(scope="module")
def sim():
    with Simulator(seed=7, speedup=8.0) as simulator:
        yield simulator


@pytest.mark.slow
async def test_dialog_starts_a_multi_arm_sweep_over_classes(sim, tmp_path: Path) -> None:
    plan = SweepPlan(batches=(1,), max_tokens=32, passes=1, idle_s=0.3, warmup_tokens=4)
    sampler = Sampler(open_meter(f"dcgm={sim.meter_url}/metrics?period=0.1")).start()
    settings = Settings(
        server_url=sim.draft_url,
        plain_url=sim.plain_url,
        draft_url=sim.draft_url,
        results_root=tmp_path,
        quick_plan=plan,
        poll=False,
    )
    app = SpectopApp(settings, FakeCollector(synthetic.snapshots()), sampler)
    seen: list = []
    try:
        async with app.run_test(size=SIZES["wide"], message_hook=seen.append) as pilot:
            await pilot.press("s")
            dialog = app.screen
            assert isinstance(dialog, SweepDialog)
            # draft lengths vary a draft command; a running server's URL cannot be varied
            dialog.query_one("#draft-lengths", Input).value = "2,8"
            await pilot.click("#dialog-run")
            await pilot.pause()
            assert "--draft-max needs the draft command" in plain_text(
                dialog.query_one("#dialog-error", Static)
            )
            dialog.query_one("#draft-lengths", Input).value = ""
            dialog.query_one("#prompts", Select).value = CLASSES_OPTION
            dialog.query_one("#dialog-run", Button).press()
            await wait_until(pilot, lambda: ended(seen), timeout_s=120)
            await pilot.pause()
            (done,) = ended(seen)
            assert done.error is None and done.summary.classes == tuple(CLASSES)
            assert sorted(grid(app)) == sorted((c, a) for c in CLASSES for a in ("plain", "draft"))
            assert app.state.sweep_summary is None  # a multi-arm run is not the live verdict's curve
    finally:
        sampler.stop()
        sampler.meter.close()


def ended(seen: list) -> list:
    return [
        m.event for m in seen if isinstance(m, messages.SweepProgressed) and isinstance(m.event, SweepEnded)
    ]
