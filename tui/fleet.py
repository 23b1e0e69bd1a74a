"""The dashboard's servers: each watched server's state, the one shown (`Fleet`), and the summary table's rows.

No Textual here. Every figure of a row comes from what the single-server panels read (the
server's LiveState: its latest poll, its rolling drafting window, its LiveLedger's energy and the
verdict of collectors/live/verdict.py), so the row and that server's panels agree.

Pitfall handled: one meter under several servers (one GPU's DCGM page, two servers on it) counts
the same joules in each server's ledger. Their energy is then split by tokens, with the
exporter's own arithmetic (`FeedView.energy_share`, collectors/export/series.py), and the row
says the meter is shared and the server's share; the verdict is read on the split figure.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from collectors.export.series import FeedView
from collectors.live.verdict import LiveEnergy, judged
from collectors.meters import MeterInfo, Sampler
from tui.state import LiveState


@dataclass(eq=False)
class WatchedServer:
    """One server of the dashboard: its collector, its meter's sampler (maybe shared) and its state."""

    name: str
    url: str
    collector: Any  # a ServerCollector, AutoCollector or a test fake: anything with poll()
    sampler: Sampler | None
    state: LiveState
    meter_t_s: float | None = None  # the newest meter reading handed to this server's state
    meter_error: str | None = None

    @classmethod
    def of(
        cls,
        url: str,
        collector: Any,
        sampler: Sampler | None,
        energy_window_s: float = 30.0,
        name: str | None = None,
    ) -> WatchedServer:
        """A server to watch, named `name` (its URL by default), its state empty."""
        meter = sampler.meter.info if sampler is not None else None
        return cls(name or url, url, collector, sampler, LiveState(energy_window_s, meter))


class Fleet:
    """The watched servers (one, or several in one dashboard) and the one the panels show."""

    def __init__(self, servers: Sequence[WatchedServer]) -> None:
        self.servers = list(servers)
        self.selected = 0  # the server the source bar, panels and tabs show

    @property
    def several(self) -> bool:
        """Several servers: the summary table is shown."""
        return len(self.servers) > 1

    @property
    def watched(self) -> WatchedServer:
        return self.servers[self.selected]

    @property
    def collector(self) -> Any:
        """The shown server's collector: a ServerCollector, AutoCollector or a test fake (poll())."""
        return self.watched.collector

    @property
    def sampler(self) -> Sampler | None:
        return self.watched.sampler

    @property
    def state(self) -> LiveState:
        return self.watched.state

    @property
    def meter_error(self) -> str | None:
        return self.watched.meter_error

    def meter_info(self) -> MeterInfo | None:
        """The shown server's meter: its sampler's, else the one its state was made with (a replay's)."""
        return self.sampler.meter.info if self.sampler else self.state.ledger.meter

    def energy(self) -> LiveEnergy:
        """The shown server's live energy; with several servers on one meter, its share by tokens."""
        if not self.several:
            return self.state.energy()
        return fleet_energy(self.servers)[self.selected].energy

    def rows(self) -> list[ServerRow]:
        """The summary table's rows."""
        return summary_rows(self.servers)

    def select(self, index: int) -> bool:
        """Show server number `index`; False when there is none such, or it is shown already."""
        if not 0 <= index < len(self.servers) or index == self.selected:
            return False
        self.selected = index
        return True

    def pause(self, paused: bool) -> None:
        """Polling and meter reads stop, and start again, for all servers together."""
        for server in self.servers:
            server.state.paused = paused


@dataclass(frozen=True, slots=True)
class ServerEnergy:
    """A server's live energy, split by tokens when its meter is shared."""

    energy: LiveEnergy
    meter_users: int  # servers read with this meter (0: no meter)
    share: float | None  # this server's part of the meter's joules (1.0 on its own meter)


@dataclass(frozen=True, slots=True)
class ServerRow:
    """One row of the summary table."""

    name: str
    backend: str
    ok: bool | None  # None: not polled yet
    slots_busy: int | None
    slots_total: int | None
    batch: float | None
    tok_s: float | None
    acceptance: float | None
    power_w: float | None
    energy: ServerEnergy


def fleet_energy(servers: Sequence[WatchedServer]) -> list[ServerEnergy]:
    """Each server's LiveEnergy; a shared meter's joules split between its servers by tokens."""
    users = Counter(id(s.sampler) for s in servers if s.sampler is not None)
    rolling = [s.state.ledger.rolling() for s in servers]
    tokens_on: Counter[int] = Counter()
    for server, window in zip(servers, rolling):
        if server.sampler is not None:
            tokens_on[id(server.sampler)] += window.tokens
    out = []
    for server, window in zip(servers, rolling):
        energy = server.state.energy()
        n_users = users[id(server.sampler)] if server.sampler is not None else 0
        if n_users <= 1:
            out.append(ServerEnergy(energy, n_users, 1.0 if n_users else None))
            continue
        ledger = server.state.ledger
        view = FeedView(
            url=server.url,
            meter=ledger.meter,
            snapshot=ledger.latest,
            rolling=window,
            drafting=None,
            idle_w=ledger.idle_w(),
            batch=energy.batch,
            power=ledger.power[-1] if ledger.power else None,
            share_tokens=tokens_on[id(server.sampler)],
        )
        split = dataclasses.replace(
            energy,
            mj_per_token=view.mj_per_token(energy.mj_per_token),
            net_mj_per_token=view.mj_per_token(energy.net_mj_per_token),
        )
        if not server.state.sweep_running and window.meter_problem is None:
            drafting = ledger.latest.drafting if ledger.latest else None
            said, reading = judged(split.mj_per_token, energy.batch, server.state.sweep_summary, drafting)
            split = dataclasses.replace(split, verdict=said, reading=reading)
        out.append(ServerEnergy(split, n_users, view.energy_share()))
    return out


def summary_rows(servers: Sequence[WatchedServer]) -> list[ServerRow]:
    """The summary table's rows, in the servers' order."""
    rows = []
    for server, energy in zip(servers, fleet_energy(servers)):
        state = server.state
        snap, drafting = state.latest, state.drafting()
        rows.append(
            ServerRow(
                name=server.name,
                backend=snap.backend if snap else "—",
                ok=snap.ok if snap else None,
                slots_busy=snap.slots_busy if snap else None,
                slots_total=snap.slots_total if snap else None,
                batch=energy.energy.batch,
                tok_s=state.ledger.recent_tok_s(),  # the throughput panel's figure: over the last 5 s
                acceptance=drafting.acceptance if drafting else None,
                power_w=state.power_w[-1] if state.power_w else None,
                energy=energy,
            )
        )
    return rows
