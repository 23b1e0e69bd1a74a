"""Routing by the live batch (`--proxy PORT --route-by-batch RESULTS|B --plain URL --draft URL`):
each new request goes to the drafting server while the batch it joins is under the crossover, to
the plain server at or above it. For a server that cannot switch drafting off per request
(llama-server: `speculative.n_max: 0` in a body is accepted and ignored), two servers are the switch.

The live batch is the requests in flight through the proxy, plus those the servers run that the
proxy did not send: their busy slots, polled (`poll_busy`), less the proxy's own in flight at the
poll, seen by two polls in a row. A request joining it makes it one more: with the crossover at 3.26, batches 1 to 3 draft and
the fourth request in flight goes to plain. The crossover is a sweep's (where the energy ratio rises
through 1.0, collectors/sweep/rule.py `Crossover.batch_at_1`) or a batch given.

Pitfalls handled: a server that refuses connections is marked down for `DOWN_RETRY_S` and its
requests go to the other one, the record saying so; both down is one error naming both. A
request is only sent again to the other server when none of its body was sent yet.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from collectors.errors import SpectopError

DRAFT, PLAIN = "draft", "plain"
DOWN_RETRY_S = 2.0  # a server that refused a connection is tried again after this long
POLL_S = 0.5  # the servers' busy slots are read this often
ROUTE_FIX = "e.g. --route-by-batch results/paired-20261201T223229Z, or --route-by-batch 4"


@dataclass(frozen=True, slots=True)
class RoutePlan:
    """The two servers the proxy may send to (no other), and the batch from which plain serves."""

    plain_url: str
    draft_url: str
    crossover_batch: float
    source: str  # where the crossover came from, said on the screen and in --help's words

    def url_of(self, name: str) -> str:
        return self.draft_url if name == DRAFT else self.plain_url


@dataclass(frozen=True, slots=True)
class Choice:
    """Where one request goes: the server's name (`draft`/`plain`), the batch it joins, and why not
    the other (a note when the other was down)."""

    name: str
    batch: int
    note: str = ""

    @property
    def tag(self) -> str:
        """The record's tag: `proxy:draft:3`, or `proxy:plain:2:draft down`."""
        return f"proxy:{self.name}:{self.batch}" + (f":{self.note}" if self.note else "")


def parse_tag(tag: str) -> Choice | None:
    """The routing a record's tag carries; None for a record the router did not route."""
    parts = tag.split(":", 3)
    if len(parts) < 3 or parts[0] != "proxy" or parts[1] not in (DRAFT, PLAIN) or not parts[2].isdigit():
        return None
    return Choice(parts[1], int(parts[2]), parts[3] if len(parts) == 4 else "")


def crossover_from(spec: str) -> tuple[float, str]:
    """`--route-by-batch`'s value: a batch (a number > 1), or a saved sweep's folder and its crossover."""
    try:
        batch = float(spec)
    except ValueError:
        return _from_sweep(Path(spec))
    if not batch > 1:
        raise SpectopError(
            f"--route-by-batch {spec}: the batch must be above 1 (every request would go to plain)",
            ROUTE_FIX,
        )
    return batch, f"batch {spec} given"


def _from_sweep(run_dir: Path) -> tuple[float, str]:
    from collectors.sweep.records import PairedSummary  # the sweep's code loads only for a folder
    from collectors.sweep.summary import summarize_saved

    if not run_dir.is_dir():
        raise SpectopError(f"--route-by-batch {run_dir} is neither a batch nor a sweep's folder", ROUTE_FIX)
    summary = summarize_saved(run_dir)
    if not isinstance(summary, PairedSummary):
        raise SpectopError(
            f"--route-by-batch {run_dir} is a multi-arm sweep, with no one crossover",
            "give a paired sweep's folder, or the batch: --route-by-batch 4",
        )
    crossover = summary.crossover
    if crossover is None:
        raise SpectopError(
            f"the sweep in {run_dir} found no crossover ({summary.recommendation}): "
            "routing would send every request to one server",
            "serve from that one server, or give the batch: --route-by-batch 4",
        )
    if crossover.batch_at_1 is None:
        return float(
            crossover.lowest_batch
        ), f"sweep {run_dir.name}: drafting costs from batch {crossover.lowest_batch}"
    return crossover.batch_at_1, f"sweep {run_dir.name}: crossover {crossover.batch_at_1:.2f}"


class BatchRouter:
    """Counts the requests in flight and picks each new one's server; used on the proxy's loop only."""

    def __init__(self, plan: RoutePlan, clock: Callable[[], float]) -> None:
        self.plan = plan
        self.clock = clock
        self.in_flight = {DRAFT: 0, PLAIN: 0}
        self.others = 0  # requests the servers ran at the last two polls that the proxy did not send
        self._others_polled = 0  # at the last poll alone
        self.down_until_s = {DRAFT: float("-inf"), PLAIN: float("-inf")}

    @property
    def live_batch(self) -> int:
        return sum(self.in_flight.values()) + self.others

    def choose(self) -> Choice:
        """The server for a new request, by the batch it joins; the other when that one is down."""
        batch = self.live_batch + 1
        name = DRAFT if batch < self.plan.crossover_batch else PLAIN
        other = PLAIN if name == DRAFT else DRAFT
        if self.is_down(name) and not self.is_down(other):
            return Choice(other, batch, f"{name} down")
        return Choice(name, batch)

    def other(self, choice: Choice) -> Choice:
        """The fallback once `choice`'s server refused the connection."""
        name = PLAIN if choice.name == DRAFT else DRAFT
        return Choice(name, choice.batch, f"{choice.name} down")

    def is_down(self, name: str) -> bool:
        return self.clock() < self.down_until_s[name]

    def mark_down(self, name: str) -> None:
        self.down_until_s[name] = self.clock() + DOWN_RETRY_S

    def started(self, name: str) -> None:
        self.in_flight[name] += 1

    def finished(self, name: str) -> None:
        self.in_flight[name] -= 1

    def observe_busy(self, busy: int, own_before: int = 0) -> None:
        """Both servers' busy slots, just polled: what is beyond the proxy's own in flight is others'.

        `own_before`: the proxy's own in flight when the poll was sent; a request of its own that
        ended (or began) while the poll was under way may be among the busy, so the larger count is
        taken off. Others count once two polls in a row see them: a server frees a slot a moment
        after its answer's end, which one poll can see as a request the proxy did not send."""
        polled = max(0, busy - max(own_before, sum(self.in_flight.values())))
        self.others, self._others_polled = min(polled, self._others_polled), polled


async def poll_busy(router: BatchRouter, api_key: str | None, stopped: Callable[[], bool]) -> None:
    """Read both servers' busy slots every `POLL_S` into `router.others`, until `stopped()`."""
    from collectors.servers.auto import AutoCollector  # the dialects load only for a routing proxy

    collectors = [AutoCollector(router.plan.url_of(name), api_key) for name in (DRAFT, PLAIN)]
    try:
        while not stopped():
            own_before = sum(router.in_flight.values())
            counts = await asyncio.gather(*(_busy(c) for c in collectors))
            router.observe_busy(sum(n for n in counts if n is not None), own_before)
            await asyncio.sleep(POLL_S)
    finally:
        for collector in collectors:
            await collector.aclose()


async def _busy(collector: Any) -> int | None:
    busy: int | None = await collector.busy_slots()
    if busy is None:  # not detected yet (or down): a poll detects it, for the next read
        await collector.poll()
    return busy
