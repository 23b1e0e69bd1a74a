"""The sweep tab says which batches the recommendation left out and why, and its plot does not join them."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from collectors.sweep.codec import to_json
from collectors.sweep.events import SweepEnded
from collectors.sweep.records import summary_from_json
from collectors.sweep.summary import summary_of
from tests.support import synthetic
from tests.support.dashboard import FakeCollector, FakeSampler
from tests.support.sweep_rows import flagged, note25_rows, points, run_meta
from tui import messages
from tui.app import SpectopApp
from tui.config import Settings
from tui.widgets.sweep_plot import SweepPlot


def ended(rows) -> SweepEnded:
    return SweepEnded(
        Path("results/x"),
        summary_of(points(rows), run_meta({"planned_points": len(rows), "idle_w": None})),
        False,
    )


async def show(summary_event: SweepEnded) -> tuple[str, SpectopApp]:
    app = SpectopApp(
        Settings(server_url=synthetic.URL, poll=False),
        FakeCollector(synthetic.snapshots()),
        FakeSampler(synthetic.METER),
    )
    async with app.run_test(size=(140, 42)) as pilot:
        app.post_message(messages.SweepProgressed(summary_event))
        await pilot.pause()
        verdict = str(app.main.query_one("#sweep-verdict", Static).render())
        plot = app.main.query_one(SweepPlot)
        return verdict, plot


async def test_a_batch_left_out_is_named_with_its_reason():
    rows = flagged(note25_rows(), 8, "draft", "concurrency")
    verdict, _ = await show(ended(rows))
    assert "Recommendation:" in verdict
    assert "No trustworthy pair at B=8: concurrency" in verdict


async def test_a_clean_sweep_names_no_batch():
    verdict, _ = await show(ended(note25_rows()))
    assert "No trustworthy pair" not in verdict


async def test_the_plot_does_not_join_a_batch_left_out(monkeypatch):
    drawn: list[list[float]] = []
    rows = flagged(note25_rows(), 8, "draft", "concurrency")
    original = SweepPlot.show

    def spy(self, summary):
        calls = []
        plot_fn, scatter_fn = self.plt.plot, self.plt.scatter
        self.plt.plot = lambda xs, ys, **kw: calls.append(("line", list(xs))) or plot_fn(xs, ys, **kw)
        self.plt.scatter = lambda xs, ys, **kw: calls.append(("mark", list(xs))) or scatter_fn(xs, ys, **kw)
        try:
            original(self, summary)
        finally:
            self.plt.plot, self.plt.scatter = plot_fn, scatter_fn
        drawn.extend(calls)

    monkeypatch.setattr(SweepPlot, "show", spy)
    await show(ended(rows))
    lines = [xs for kind, xs in drawn if kind == "line"]
    marks = [xs for kind, xs in drawn if kind == "mark"]
    assert lines and all(3.0 not in xs for xs in lines)  # log2(8) = 3: not on either curve
    assert [3.0] in marks  # shown as lone marks instead


async def test_a_summary_saved_with_the_old_crossover_shows_the_crossing_through_1_and_its_band():
    # a recording or a summary.json from before holds the crossover as one batch, where the ratio
    # rose through 1.05; the tab shows the ratio's 1.0 crossing, judged again from the summary's own
    # ratios: (35.0 / 125.5) / (39.1 / 100.2) = 0.7147 at 2 and (37.1 / 163.4) / (39.0 / 192.3) =
    # 1.1195 at 4, so linear in log B a level L lies at 2 * 2 ** ((L - 0.7147) / 0.4048): 1.0 at
    # 3.26, 0.95 at 2.99 and 1.05 at 3.55
    form = to_json(ended(note25_rows()).summary)
    form["crossover"] = {"below": 2, "above": 4, "batch": 3.55, "ratio": 1.05}
    # read as a recording's or a saved summary.json's summary is read
    verdict, _ = await show(SweepEnded(Path("results/x"), summary_from_json(form), False))
    said = " ".join(verdict.split())
    assert "Crossover ≈ 3.26 requests (energy ratio 1.0), between 2.99 and 3.55 within the ±5 % band." in said


async def test_without_a_meter_the_tab_gives_the_speed_verdict():
    rows = note25_rows()
    for r in rows:  # as a sweep with no meter records them
        r.update(energy_j=None, energy_covered=False)
        r["flags"] = [{"code": "no-meter", "message": "no power meter: energy not measured"}]
    verdict, _ = await show(ended(rows))
    said = " ".join(verdict.split())
    # draft over plain tok/s: 1.26 and 1.25 at 1 and 2, 0.85, 0.68 and 0.87 at 4, 8 and 16
    assert "by speed alone, drafting is faster at 1, 2 and slower at 4, 8, 16" in said
    assert "Energy not measured at B=1, 2, 4, 8, 16 (no meter)" in said and "No trustworthy pair" not in said
