"""From the App's state to each widget's view: one function, called after every state change."""

from __future__ import annotations

from typing import TYPE_CHECKING

from collectors.launch import url_from_argv
from collectors.specflags import is_void_draft
from collectors.sweep.arms import split_command
from tui.state import LiveState
from tui.widgets.drafting_panel import DraftingPanel, DraftingView
from tui.widgets.energy_panel import EnergyPanel
from tui.widgets.latency_panel import LatencyPanel, LatencyView
from tui.widgets.power_panel import PowerPanel, PowerView
from tui.widgets.requests_table import RequestsTable
from tui.widgets.source_bar import SourceBar, SourceView
from tui.widgets.throughput_panel import ThroughputPanel, ThroughputView

if TYPE_CHECKING:
    from tui.app import SpectopApp

LATENCY_RECORDS = 20


def void_warning(app: SpectopApp, state: LiveState) -> str | None:
    """A draft configured for the watched server, but nothing drafted: say so loudly."""
    s = app.settings
    snap = state.latest
    url = s.server_url.rstrip("/")
    if s.draft_cmd:
        argv = split_command(s.draft_cmd)
        if url_from_argv(argv) == url and is_void_draft(argv):
            return (
                "VOID: the draft model is loaded with -md but --spec-type is missing, so nothing is "
                "drafted (add --spec-type draft-simple)"
            )
    is_draft_arm = (s.draft_url and s.draft_url.rstrip("/") == url) or (
        s.draft_cmd and url_from_argv(split_command(s.draft_cmd)) == url
    )
    if is_draft_arm and snap is not None and snap.drafting is False:
        return (
            "VOID: this server is the draft arm but drafts nothing (llama-server needs "
            "--spec-type draft-simple as well as -md)"
        )
    return None


def push(app: SpectopApp) -> None:
    state = app.state
    snap = state.latest
    warning = void_warning(app, state)
    info = app.sampler.meter.info if app.sampler else None
    app.main.query_one(SourceBar).view = SourceView(
        app.settings.server_url, snap, info, app.meter_error, state.paused, warning
    )
    power_now = state.power_w[-1] if state.power_w else None
    app.main.query_one(PowerPanel).view = PowerView(
        info, power_now, state.idle_w(), tuple(state.power_w)[-120:], app.meter_error
    )
    app.main.query_one(PowerPanel).set_class(bool(app.meter_error), "-failed")
    if snap is not None:
        app.main.query_one(ThroughputPanel).view = ThroughputView(snap, tuple(state.tok_s)[-120:])
        app.main.query_one(ThroughputPanel).set_class(not snap.ok, "-failed")
        app.main.query_one(DraftingPanel).view = DraftingView(snap, warning)
        app.main.query_one(DraftingPanel).set_class(bool(warning), "-failed")
    app.main.query_one(EnergyPanel).view = state.energy_view()
    app.main.query_one(RequestsTable).show(
        state.records.values(),
        state.attributed_mj,
        snap,
        snap.busy_slot_tokens if snap else (),
        state.slot_tok_s,
    )
    recent = tuple(list(state.records.values())[-LATENCY_RECORDS:])
    app.main.query_one(LatencyPanel).view = LatencyView(recent)
