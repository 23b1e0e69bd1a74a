"""The shown server's live figures, as the App's handlers hand them to the dashboard screen.

Repaints, not figures, are what the dashboard spends its CPU on. Polls at least once a second (the
default) hand over the meters' readings themselves, just before their snapshots (tui/workers.py),
and repaint power and energy with everything else: the screen is drawn once a poll. A poll that
is late hands them over every 0.5 s without it, and slower polls leave them to a 0.5 s timer:
those reads go into the state at once but repaint the power and energy panels at most once per
`LIVE_REPAINT_S` (once a poll is a second late, with polls a second apart), a meter error or a
pause at once, so what is shown is never far behind. With polling off (tests, snapshots) every
message repaints. It holds no App: it reads the fleet and paints on the screen it is given."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial

from collectors.live.accounting import TOK_S_WINDOW_S
from collectors.live.verdict import void_warning, with_void
from collectors.servers.snapshot import ServerSnapshot
from tui.config import Settings
from tui.fleet import Fleet
from tui.routing import route_line
from tui.screens.dashboard import DashboardScreen

LIVE_REPAINT_S = 1.0  # the least time between two repaints of power and energy by meter reads
# A poll's table rows are shown this long after its panels. One frame's crop is the box around every
# region it repaints: panels and rows together made it span the tabs and every widget between them
# (26 widgets drawn, against 15 and 9 apart). Frames come every 1/60 s: the panels' is drawn by then.
ROWS_AFTER_S = 0.05


def _call_next(screen: DashboardScreen, callback: Callable[[], object]) -> None:
    if screen.is_running:  # not once the app has closed it
        screen.call_next(callback)


class LivePainter:
    """The source bar, power, energy and the summary table of the fleet's shown server."""

    def __init__(
        self,
        settings: Settings,
        fleet: Fleet,
        clock: Callable[[], float],
        on_idle: Callable[[float], None] | None = None,
    ) -> None:
        self.settings, self.fleet = settings, fleet
        self._clock = clock
        # told once, when the idle baseline is first known (the demo holds its traffic until then:
        # the baseline is measured over idle polls, and the demo's traffic never pauses again)
        self.on_idle = on_idle
        self.painted_s: float | None = None  # when power and energy were last repainted
        self.stale = False  # the state holds readings the power and energy panels do not show yet
        self.log_state: tuple[str, bool] | None = None  # the server log's reader (--server-log)
        if settings.route is not None:  # said where the log's reader would be: routing takes no log
            self.log_state = (route_line(settings.route, settings), False)
        self.warned: str | None = None  # the void-draft warning last told in a notification

    def void(self) -> str | None:
        """The shown server's void-draft warning, if it has one."""
        s = self.settings
        launched = s.server_argv if self.fleet.watched.url.rstrip("/") == s.server_url.rstrip("/") else ()
        return void_warning(
            self.fleet.watched.url, s.draft_url, s.draft_cmd, self.fleet.state.latest, launched
        )

    def show_sources(self, screen: DashboardScreen) -> str | None:
        """The source bar; returns the void-draft warning, which the drafting panel shows too."""
        state = self.fleet.state
        warning = self.void()
        screen.show_sources(state.latest, self.fleet.meter_error, state.paused, warning, self.log_state)
        if warning and warning != self.warned:  # told once inside the dashboard, where it is seen
            screen.notify(warning, title="drafting", severity="error", timeout=30, markup=False)
        self.warned = warning
        return warning

    def due(self) -> bool:
        """A meter read repaints when polling is off, or when its readings have waited long enough."""
        if not self.settings.poll or self.painted_s is None:
            return True
        interval_s = self.settings.interval_s
        wait_s = LIVE_REPAINT_S + interval_s if interval_s <= LIVE_REPAINT_S else LIVE_REPAINT_S
        return self.stale and self._clock() - self.painted_s >= wait_s

    def paint(self, screen: DashboardScreen) -> None:
        """Power and energy as the state has them now, and the summary table."""
        self.painted_s, self.stale = self._clock(), False
        state = self.fleet.state
        power_w = state.power_w[-1] if state.power_w else None
        idle_w = state.ledger.idle_w()
        screen.show_power(power_w, idle_w, state.power_w, self.fleet.meter_error)
        screen.show_energy(with_void(self.fleet.energy(), self.void()))
        self.show_fleet(screen)
        if idle_w is not None and self.on_idle is not None:
            told, self.on_idle = self.on_idle, None
            told(idle_w)

    def show_fleet(self, screen: DashboardScreen) -> None:
        """The summary table, when several servers are watched."""
        if self.fleet.several:
            screen.show_servers(self.fleet.rows(), self.fleet.selected)

    def show_poll(self, screen: DashboardScreen) -> None:
        """What a poll of the shown server changes: source bar, throughput, drafting, power, energy, slots."""
        state = self.fleet.state
        warning = self.show_sources(screen)
        self.paint(screen)  # the idle baseline comes from idle polls
        if state.latest is not None:  # drafting over the rolling window (one poll's is often empty)
            recent = (state.ledger.recent_tok_s(), TOK_S_WINDOW_S)
            screen.show_snapshot(state.latest, state.drafting() or state.latest, state.tok_s, warning, recent)
        rows = partial(self.show_rows, screen, state.latest, state.slot_tok_s)
        if self.settings.poll:  # the rows in a frame of their own (ROWS_AFTER_S); with polling off at once
            # the event loop's own timer hands them to the screen: a Textual Timer is a task a poll
            asyncio.get_running_loop().call_later(ROWS_AFTER_S, _call_next, screen, rows)
        else:
            rows()

    def show_rows(
        self, screen: DashboardScreen, latest: ServerSnapshot | None, slot_tok_s: dict[int, float]
    ) -> None:
        """The slots' rows and the server's latency line, as of the poll that asked for them."""
        state = self.fleet.state
        screen.show_slots(latest, slot_tok_s)
        exported = latest is None or not latest.ok or latest.latency_counters is not None
        screen.show_server_latency(state.ledger.server_latency(), exported)

    def show_server(self, screen: DashboardScreen) -> None:
        """All of the shown server, after another one was picked: source bar, panels and tabs."""
        state = self.fleet.state
        screen.select_server(self.fleet.watched.url, self.fleet.meter_info())
        self.show_poll(screen)
        screen.show_records(state.records.values(), state.attribution())
