"""The summary table of a dashboard watching several servers: one row per server, pick one to see its panels.

Every cell is Rich Text, never markup: a server's name comes from the command line or a config
file and its backend from the server itself. Cells are updated in place (the cursor stays where
the user left it) and only when their text or style changed. A meter shared by several servers is
said so in the meter column, with the server's share of its joules (split by tokens, tui/fleet.py).
Its servers' mJ/token columns say "shared meter" instead of a figure: joules split by tokens give
every server on the meter the same mJ/token, which would read as a comparison it is not; tokens/s,
acceptance and the share are what tells them apart.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.message import Message
from textual.widgets import DataTable

from collectors.fmt import num, pct
from tui.fleet import ServerRow
from tui.widgets.energy_panel import verdict_style

COLUMNS = (
    ("name", "server"),
    ("backend", "backend"),
    ("slots", "busy/slots"),
    ("batch", "batch"),
    ("tok_s", "tok/s"),
    ("acceptance", "accept"),
    ("power", "W"),
    ("gross", "mJ/tok"),
    ("net", "net"),
    ("meter", "meter"),
    ("verdict", "verdict"),
)


def meter_cell(row: ServerRow) -> Text:
    energy = row.energy
    if energy.meter_users == 0:
        return Text("none", style="yellow")
    if energy.meter_users == 1:
        return Text("own", style="dim")
    share = pct(energy.share) if energy.share is not None else "—"
    return Text(f"shared ×{energy.meter_users}, {share} by tokens", style="yellow")


def energy_cells(row: ServerRow) -> tuple[Text, Text]:
    """Gross and net mJ/token; on a shared meter the same for each of its servers, so not a figure."""
    energy = row.energy.energy
    if row.energy.meter_users > 1:
        return Text("shared meter", style="yellow"), Text("—", style="dim")
    return Text(num(energy.mj_per_token, ".0f"), style="bold"), Text(num(energy.net_mj_per_token, ".0f"))


def cells(row: ServerRow, selected: bool) -> list[Text]:
    energy = row.energy.energy
    backend_style = {True: "", False: "red", None: "dim"}[row.ok]
    return [
        Text(("▶ " if selected else "  ") + row.name, style="bold" if selected else ""),
        Text(row.backend if row.ok is not False else f"{row.backend} ✗", style=backend_style),
        Text(f"{num(row.slots_busy, 'd')}/{num(row.slots_total, 'd')}"),
        Text(num(row.batch, ".2f")),
        Text(num(row.tok_s, ".1f")),
        Text(pct(row.acceptance, 1)),  # as the drafting panel shows it
        Text(num(row.power_w, ".1f")),
        *energy_cells(row),
        meter_cell(row),
        Text(energy.verdict, style=verdict_style(energy.reading)),
    ]


class ServersTable(DataTable):
    DEFAULT_CSS = """
    ServersTable { height: auto; max-height: 10; }
    """

    class Chosen(Message):
        """The user picked server number `index` (Enter or a click on its row)."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, names: Sequence[str], *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=False)
        self._shown: dict[tuple[int, str], tuple[str, str]] = {}
        for key, label in COLUMNS:
            self.add_column(label, key=key)
        for index, name in enumerate(names):
            blank = [Text("—", style="dim")] * len(COLUMNS)
            blank[0] = Text("  " + name)
            self.add_row(*blank, key=str(index))

    def show(self, rows: Sequence[ServerRow], selected: int) -> None:
        for index, row in enumerate(rows):
            for (key, _), cell in zip(COLUMNS, cells(row, index == selected)):
                seen = (cell.plain, str(cell.style))
                if self._shown.get((index, key)) != seen:
                    self._shown[index, key] = seen
                    self.update_cell(str(index), key, cell, update_width=True)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value is not None:
            self.post_message(self.Chosen(int(event.row_key.value)))
