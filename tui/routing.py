"""The dashboard of a routed pair: `spectop --plain URL --draft URL --proxy PORT --route-by-batch RESULTS|B`.

The capture proxy sends each new request to the drafting server while the batch it joins is under
the crossover, to the plain one from it (collectors/requests/router.py). The dashboard watches both
servers, as a fleet of two on one meter (their panels' energy split by tokens, tui/fleet.py), and
its Requests tab lists every routed request, whichever server is shown, with the server that
served it.

Pitfalls handled: the meter sees both servers, so every routed request is in one attribution book
shared by the two states: a request's joules are the meter's split over all requests in flight on
either server, never each server's book charging its own requests the other's energy too. That
book reads no one server's token counts as "unseen traffic" (the other server's requests would
look unseen to one; tui/state.py stops reading them once a routed record comes): traffic spectop
did not route is told from both servers' busy slots summed, poll by poll (the `*` of the mJ/token
cell).
"""

from __future__ import annotations

from collectors.energy.attribution import AttributionBook
from collectors.meters import Sampler
from collectors.requests.proxy_record import with_busy
from collectors.requests.record import RequestRecord
from collectors.requests.router import DRAFT, PLAIN, RoutePlan, parse_tag
from collectors.servers.auto import AutoCollector
from tui.config import Settings
from tui.fleet import Fleet, WatchedServer
from tui.state import MAX_REQUEST_ROWS


def routed_servers(settings: Settings, sampler: Sampler | None) -> list[WatchedServer]:
    """The drafting and the plain server, on one meter, with one attribution book between them."""
    plan = settings.route
    assert plan is not None
    book = AttributionBook(MAX_REQUEST_ROWS)
    servers = []
    for name in (DRAFT, PLAIN):
        url = plan.url_of(name)
        collector = AutoCollector(url, api_key=settings.api_key)
        server = WatchedServer.of(url, collector, sampler, settings.energy_window_s, name=name)
        server.state.book = book
        servers.append(server)
    return servers


def route_line(plan: RoutePlan, settings: Settings) -> str:
    """The source bar's line: where the proxy listens and how it routes."""
    listen = settings.proxy.url if settings.proxy else "the proxy"
    return f"routing {listen}: draft below batch {plan.crossover_batch:.3g}, plain from it ({plan.source})"


def with_fleet_busy(fleet: Fleet, record: RequestRecord) -> RequestRecord:
    """A proxied record with the busy slots polled while it ran; routed, both servers' summed poll
    by poll (they are polled together)."""
    states = [s.state for s in fleet.servers] if parse_tag(record.tag) else [fleet.state]
    samples = [s.ledger.busy_slots_during(record.t_send_s, record.t_done_s) for s in states]
    return with_busy(record, [sum(polled) for polled in zip(*samples)])
