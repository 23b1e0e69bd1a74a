"""What the dashboard repaints and when: held-back meter reads still show within a second, and a bar
whose text did not change is not laid out again (a layout pass repaints the whole screen)."""

from __future__ import annotations

import dataclasses
import time

from collectors.servers.answers import error_snapshot
from collectors.servers.snapshot import ServerSnapshot
from tests.support import synthetic
from tests.support.dashboard import FakeCollector, FakeSampler, text_of, wait_until
from tui import messages
from tui.app import SpectopApp
from tui.config import Settings
from tui.widgets.source_bar import SourceBar


def now_line(app: SpectopApp) -> str:
    return text_of(app.query_one("#power")).splitlines()[0]


async def test_meter_reads_between_polls_show_within_a_second_and_a_poll_shows_them_at_once():
    clock = [1000.0]
    settings = Settings(server_url=synthetic.URL, interval_s=3600)  # live, but one poll only: at start
    sampler = FakeSampler(synthetic.METER)  # nothing new: its 0.5 s ticks post empty reads
    app = SpectopApp(settings, FakeCollector(synthetic.snapshots()), sampler, clock=lambda: clock[0])
    readings = synthetic.readings()  # 40 W, then 60 W from the 21st
    async with app.run_test(size=(140, 42)) as pilot:
        await wait_until(pilot, lambda: app.state.latest is not None)
        clock[0] += 0.3
        app.post_message(messages.MeterRead(readings[:10]))
        await pilot.pause()
        assert app.state.power_w[-1] == 40.0  # in the state at once
        assert "40.0 W" not in now_line(app)  # but the panels were painted 0.3 s ago
        clock[0] += 0.8
        app.post_message(messages.MeterRead([]))  # the next tick, a second after the last paint
        await pilot.pause()
        assert "40.0 W" in now_line(app)
        clock[0] += 0.2
        app.post_message(messages.MeterRead(readings[10:]))
        await pilot.pause()
        assert "60.0 W" not in now_line(app)
        busy = dataclasses.replace(synthetic.snapshots()[1], taken_at_s=time.monotonic())
        app.post_message(messages.ServerPolled(busy))  # a poll shows the latest power with its figures
        await pilot.pause()
        assert "60.0 W" in now_line(app)


async def test_with_a_poll_every_second_meter_reads_wait_for_the_poll_unless_it_is_late():
    """Polls once a second repaint power with everything else: a meter read in between repainting
    it too drew the screen twice a poll. Here a read repaints only when no poll came for 1 s past
    the interval (2 s at the default 1 s), so what is shown is still never far behind."""
    clock = [1000.0]
    settings = Settings(server_url=synthetic.URL, interval_s=1.0)
    app = SpectopApp(
        settings, FakeCollector(synthetic.snapshots()), FakeSampler(synthetic.METER), clock=lambda: clock[0]
    )
    app.poll_server = lambda: None  # type: ignore[method-assign]  # polls are posted below, on the fake clock
    readings = synthetic.readings()  # 40 W, then 60 W from the 21st
    busy = synthetic.snapshots()[1]
    async with app.run_test(size=(140, 42)) as pilot:
        app.post_message(messages.ServerPolled(dataclasses.replace(busy, taken_at_s=time.monotonic())))
        await pilot.pause()
        for dt_s in (0.5, 0.6):  # 0.5 s and 1.1 s after the poll's paint: the next poll is due
            clock[0] += dt_s
            app.post_message(messages.MeterRead(readings[:10]))
            await pilot.pause()
            assert app.state.power_w[-1] == 40.0 and "40.0 W" not in now_line(app)
        app.post_message(messages.ServerPolled(dataclasses.replace(busy, taken_at_s=time.monotonic())))
        await pilot.pause()
        assert "40.0 W" in now_line(app)  # the poll shows it
        clock[0] += 1.9
        app.post_message(messages.MeterRead(readings[10:]))  # 1.9 s on, no poll: still due
        await pilot.pause()
        assert "60.0 W" not in now_line(app)
        clock[0] += 0.2  # 2.1 s without a poll: the read repaints
        app.post_message(messages.MeterRead([]))
        await pilot.pause()
        assert "60.0 W" in now_line(app)


async def test_a_poll_that_leaves_the_source_bar_unchanged_does_not_lay_out_the_screen():
    settings = Settings(server_url=synthetic.URL, poll=False)
    app = SpectopApp(settings, FakeCollector(synthetic.snapshots()), FakeSampler(synthetic.METER))
    async with app.run_test(size=(140, 42)) as pilot:
        busy = synthetic.snapshots()[1]
        app.post_message(messages.ServerPolled(busy))
        await pilot.pause()
        bar = app.query_one(SourceBar)
        layouts: list[bool] = []
        original = bar.refresh

        def refresh(*regions, layout: bool = False, **kwargs):
            layouts.append(layout)
            return original(*regions, layout=layout, **kwargs)

        bar.refresh = refresh  # type: ignore[method-assign]
        later = dataclasses.replace(busy, taken_at_s=busy.taken_at_s + 1, live_tok_s=123.0)
        app.post_message(messages.ServerPolled(later))  # new figures, the same bar
        await pilot.pause()
        assert True not in layouts
        rows = bar.size.height
        app.post_message(
            messages.ServerPolled(error_snapshot(synthetic.URL, "llama.cpp", OSError("refused")))
        )
        await pilot.pause()
        assert "refused" in text_of(bar) and bar.size.height == rows + 1


async def test_polls_that_move_the_servers_latency_do_not_lay_out_the_screen():
    """The server-latency line sits in the latency tab, hidden while the requests tab is shown; its
    figures move with every poll (its window grows a second a poll: "last 1 s", "last 2 s", ...). It
    used to ask for a layout pass each time, which repaints the whole screen: once a poll."""
    from tests.support import server_latency  # the latency line's hand-worked figures

    settings = Settings(server_url=synthetic.URL, poll=False)
    app = SpectopApp(settings, FakeCollector(synthetic.snapshots()), FakeSampler(synthetic.METER))

    def poll(t_s: float, counters) -> messages.ServerPolled:
        return messages.ServerPolled(
            ServerSnapshot(
                url=synthetic.URL,
                backend="vllm",
                taken_at_s=t_s,
                status="ok",
                window_s=1.0,
                latency_counters=counters,
            )
        )

    async with app.run_test(size=(160, 42)) as pilot:
        app.post_message(poll(1.0, server_latency.BEFORE))
        await pilot.pause()
        layouts: list[object] = []
        original = app.main._refresh_layout
        app.main._refresh_layout = lambda *a, **k: (layouts.append(a), original(*a, **k))[1]  # type: ignore[method-assign]
        for t_s in range(2, 10):
            app.post_message(poll(float(t_s), server_latency.BEFORE))
            await pilot.pause()
        app.post_message(poll(10.0, server_latency.AFTER))
        await pilot.pause()
        assert layouts == []
        app.main.select_tab("latency")  # shown: laid out once, with the figures of the last poll
        await pilot.pause()
        shown = " ".join(text_of(app.query_one("#server-latency")).split())
        assert "server last 9 s TTFT p50/p95 116.7/191.7 ms" in shown
        layouts.clear()
        app.post_message(poll(11.0, server_latency.AFTER))  # shown, new figures, the same two rows
        await pilot.pause()
        assert "server last 10 s" in " ".join(text_of(app.query_one("#server-latency")).split())
        assert layouts == []


async def test_polls_with_the_latency_tab_hidden_do_not_remap_the_screen_or_repaint_panel_boxes():
    """Two costs a poll paid in every frame, found counting Textual's work on a real llama-server:
    the hidden server-latency line repainted (its figures move each poll), and a repaint of a widget
    the compositor does not show drops its map of the whole screen, rebuilt in the next frame; and
    the drafting panel set its border subtitle, unchanged, which repaints the whole box. Polls with
    new figures here redraw the panels' bodies, never the map or a box; showing the latency tab then
    shows the figures of the last poll."""
    from textual._compositor import Compositor

    from tests.support import server_latency
    from tui.widgets.drafting_panel import DraftingPanel

    settings = Settings(server_url=synthetic.URL, poll=False)
    app = SpectopApp(settings, FakeCollector(synthetic.snapshots()), FakeSampler(synthetic.METER))
    busy = synthetic.snapshots()[1]

    def poll(t_s: float, counters) -> messages.ServerPolled:
        return messages.ServerPolled(
            dataclasses.replace(busy, taken_at_s=t_s, live_tok_s=100.0 + t_s, latency_counters=counters)
        )

    async with app.run_test(size=(160, 45)) as pilot:
        app.post_message(poll(1.0, server_latency.BEFORE))
        await pilot.pause()
        body = app.query_one("#throughput")
        first = text_of(body)
        remaps: list[object] = []
        arrange = Compositor._arrange_root
        boxes: list[object] = []
        panel = app.query_one(DraftingPanel)
        panel_refresh = panel.refresh
        try:
            Compositor._arrange_root = lambda *a, **k: (remaps.append(a), arrange(*a, **k))[1]  # type: ignore[method-assign]
            # a refresh without regions repaints the whole box; its changed rows are asked by region
            panel.refresh = lambda *a, **k: (None if a else boxes.append(a), panel_refresh(*a, **k))[1]  # type: ignore[method-assign]
            for t_s in range(2, 8):
                app.post_message(
                    poll(float(t_s), server_latency.AFTER if t_s == 7 else server_latency.BEFORE)
                )
                await pilot.pause()
            assert text_of(body) != first  # the polls were drawn
            assert remaps == [] and boxes == []
        finally:
            Compositor._arrange_root = arrange  # type: ignore[method-assign]
        app.main.select_tab("latency")
        await pilot.pause()
        assert "server last 6 s" in " ".join(text_of(app.query_one("#server-latency")).split())


def test_wrapped_rows_counts_what_rich_wraps_without_wrapping_lines_that_fit():
    """A panel measures its rows every poll to ask for a layout only when they change; lines that
    fit are counted as one row without Rich's wrap, and the count still equals Rich's."""
    from rich.console import Console
    from rich.text import Text

    from tui.widgets.figures import wrapped_rows

    console = Console(width=200)
    lines = [Text(""), Text("a" * 10), Text("a" * 11), Text("ab cd ef gh ij"), Text("ö✓★" * 4), Text("x\ny")]
    for width in (1, 5, 10, 12, 40):
        assert wrapped_rows(lines, width, console) == sum(len(t.wrap(console, width)) for t in lines), width
    assert wrapped_rows(lines, 0, console) is None


async def test_a_poll_repaints_the_panels_and_the_table_rows_in_frames_of_their_own():
    """One frame's crop is the box around every region it repaints: panels and table rows in one
    frame made it cross the tabs and every widget between them (26 widgets drawn against 15 and 9
    apart, counted on a real llama-server). A poll's panels go in one frame, its slot rows in the
    next."""
    from textual._compositor import Compositor

    settings = Settings(server_url=synthetic.URL, interval_s=1.0)
    app = SpectopApp(settings, FakeCollector(synthetic.snapshots()), FakeSampler(synthetic.METER))
    app.poll_server = lambda: None  # type: ignore[method-assign]  # polls are posted below
    busy = synthetic.snapshots()[1]

    def poll(t_s: float) -> messages.ServerPolled:
        tokens = int(40 * t_s)
        return messages.ServerPolled(
            dataclasses.replace(
                busy, taken_at_s=t_s, live_tok_s=100.0 + t_s, busy_slot_tokens=((0, tokens), (1, tokens + 7))
            )
        )

    async with app.run_test(size=(160, 45)) as pilot:
        app.post_message(poll(1.0))
        await pilot.pause()
        table = app.query_one("#requests-table")
        panels_bottom = app.query_one("#panels").region.bottom
        frames: list[list[object]] = []
        render = Compositor.render_partial_update

        def recorded(compositor: Compositor):  # type: ignore[no-untyped-def]
            frames.append(list(compositor._dirty_regions))
            return render(compositor)

        try:
            Compositor.render_partial_update = recorded  # type: ignore[method-assign]
            for t_s in range(2, 6):
                app.post_message(poll(float(t_s)))
                shown = str(40 * t_s + 7)  # slot 1's tokens
                await wait_until(pilot, lambda: shown in text_of(table))  # noqa: B023
                await pilot.pause(0.1)  # polls come a second apart: the frames of one are drawn
        finally:
            Compositor.render_partial_update = render  # type: ignore[method-assign]
        drawn = [
            (any(r.y < panels_bottom for r in regions), any(r.y >= table.region.y for r in regions))
            for regions in frames
        ]
        assert (True, False) in drawn and (False, True) in drawn  # both were repainted
        assert (True, True) not in drawn, frames
