"""`spectop report DIR`: a saved sweep's per-request figures below its tables: per arm and batch
(and class), requests, joules per request, tokens per joule, mean energy-delay product and the
acceptance over its requests as a ten-bin sparkline; then each drafting arm's acceptance histogram
over all its requests as text bars (collectors/sweep/per_request.py has the definitions)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group
from rich.table import Table
from rich.text import Text

from collectors.fmt import num
from collectors.requests.per_request import acceptance_histogram
from collectors.sweep.per_request import ArmRequests, per_request_rows
from collectors.sweep.point import SweepPoint
from tui.widgets.figures import count_bars

SPARKS = "▁▂▃▄▅▆▇█"
BAR_CELLS = 30


def sparkline(counts: Sequence[int]) -> str:
    """One character per bin, scaled to the largest; an empty bin is a dot, so each bin keeps its place."""
    top = max(counts, default=0)
    if not top:
        return "—"
    return "".join("·" if c == 0 else SPARKS[max(0, round(c / top * len(SPARKS)) - 1)] for c in counts)


def per_request_view(points: Sequence[SweepPoint]) -> Group:
    rows = per_request_rows(points)
    classes = any(r.prompt_class for r in rows)
    table = Table(
        title="per request",
        caption="J: each point's joules split by its requests' tokens; EDP: J × e2e s, the mean; "
        "acceptance: requests per tenth, 0 → 100 %",
        header_style="bold",
    )
    header = [*(["class"] if classes else []), "batch", "arm", "requests", "J/request", "tok/J", "EDP J·s"]
    for name in [*header, "acceptance"]:
        table.add_column(name, justify="left" if name in ("class", "arm", "acceptance") else "right")
    for r in rows:
        cells = [
            *([r.prompt_class or ""] if classes else []),
            str(r.batch),
            r.arm,
            str(r.requests),
            num(r.energy_j_per_request, ".2f"),
            num(r.tokens_per_j, ".2f"),
            num(r.edp_js_mean, ".3f"),
            sparkline(r.acceptance.counts),
        ]
        table.add_row(*(Text(c) for c in cells), style="" if r.trusted else "yellow")
    return Group(table, *histograms(rows))


def histograms(rows: Sequence[ArmRequests]) -> list[Text]:
    """Each drafting arm's acceptance over all its requests, every batch and class pooled."""
    lines: list[Text] = []
    for arm in dict.fromkeys(r.arm for r in rows):
        mine = [r for r in rows if r.arm == arm]
        counts = [sum(c) for c in zip(*(r.acceptance.counts for r in mine))]
        if not sum(counts):
            continue  # plain, or an arm whose server gave no drafted counts
        labels = acceptance_histogram(()).labels()
        lines.append(Text(f"acceptance over requests, {arm} (every batch, {sum(counts)} requests)", "bold"))
        lines += count_bars(labels, counts, BAR_CELLS)
    return lines
