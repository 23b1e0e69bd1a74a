"""Recordings for the replay tests: a live dashboard session recorded as it ran, and the committed
recording of a `spectop demo --record` session."""

from __future__ import annotations

from pathlib import Path

from collectors.recording.writer import Recorder
from tests.support import synthetic
from tests.support.dashboard import FakeCollector, FakeSampler, text_of
from tui import messages
from tui.app import SpectopApp
from tui.config import Settings

DEMO_RECORDING = Path(__file__).resolve().parents[1] / "data" / "recordings" / "demo.jsonl"


def recording_app(recorder: Recorder | None) -> SpectopApp:
    settings = Settings(server_url=synthetic.URL, poll=False)
    return SpectopApp(
        settings, FakeCollector(synthetic.snapshots()), FakeSampler(synthetic.METER), recorder=recorder
    )


async def feed_session(pilot) -> None:
    """Meter readings, polls, two own requests and a finished sweep, as the workers post them."""
    app = pilot.app
    app.post_message(messages.MeterRead(synthetic.readings()))
    for snap in synthetic.snapshots():
        app.post_message(messages.ServerPolled(snap))
    await pilot.pause()
    app.add_records(
        [
            synthetic.record("draft-simple", "r1", 100.2),
            synthetic.record("draft-simple", "r2", 100.5, "sweep:draft:2"),
        ]
    )
    for event in synthetic.sweep_events():
        app.post_message(messages.SweepProgressed(event))
    await pilot.pause()


def panel_texts(app: SpectopApp) -> dict[str, str]:
    """What the dashboard's panels and tables show, by panel (without the blank lines below: the
    replay's bar takes one line from the tables)."""
    main = app.main
    panels = {
        "sources": main.source_bar,
        "power": main.power_panel,
        "throughput": main.throughput_panel,
        "drafting": main.drafting_panel,
        "energy": main.energy_panel,
        "requests": main.requests_table,
    }
    return {name: text_of(widget).rstrip() for name, widget in panels.items()}
