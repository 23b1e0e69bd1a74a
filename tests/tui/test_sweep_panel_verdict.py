"""The sweep tab says which batches the recommendation left out and why, and its plot does not join them."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from collectors.sweep.events import SweepEnded
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
