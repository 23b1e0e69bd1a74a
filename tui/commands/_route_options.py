"""`--route-by-batch RESULTS|B`: the capture proxy routes by the live batch (collectors/requests/router.py),
and the dashboard watches the two servers it routes to (tui/routing.py)."""

from __future__ import annotations

import argparse

from collectors.errors import SpectopError
from collectors.requests.router import RoutePlan, crossover_from
from collectors.servers import check_url
from tui.commands import _common as opts

ROUTE_EXAMPLE = "spectop --plain URL --draft URL --proxy 8081 --route-by-batch RESULTS|B"


def add_route_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--route-by-batch",
        default=None,
        metavar="RESULTS|B",
        help="with --proxy, --plain URL and --draft URL: send each new request to the drafting server "
        "while the batch it joins is under the crossover (a saved paired sweep's folder, or a batch B), "
        "to the plain one from it; the dashboard watches both",
    )


def route_plan(args: argparse.Namespace) -> RoutePlan | None:
    """The routing `--route-by-batch` asks for, checked against the options it goes with."""
    if args.route_by_batch is None:
        return None
    fix = f"run {ROUTE_EXAMPLE}"
    if args.proxy is None:
        raise SpectopError(
            "--route-by-batch routes the capture proxy's requests, and --proxy is not given", fix
        )
    if args.plain is None or args.draft is None:
        raise SpectopError(
            "--route-by-batch needs a running plain and drafting server (--plain URL --draft URL)", fix
        )
    if args.plain_cmd or args.draft_cmd:
        raise SpectopError(
            "--route-by-batch routes to running servers: --plain-cmd/--draft-cmd start none", fix
        )
    if args.server != [opts.DEFAULT_SERVER] or args.config is not None:
        raise SpectopError(
            "--route-by-batch watches --plain and --draft: --server/--config is not taken", fix
        )
    if args.server_log:
        raise SpectopError("--server-log follows one server's log, and --route-by-batch serves two", fix)
    if len(args.meter) > 1:
        raise SpectopError("--route-by-batch's two servers share one --meter", "give --meter once")
    plain_url, draft_url = check_url(args.plain), check_url(args.draft)
    if plain_url.rstrip("/") == draft_url.rstrip("/"):
        raise SpectopError(
            f"--route-by-batch: --plain and --draft are both {plain_url}",
            "give the plain server's URL and the drafting server's",
        )
    batch, source = crossover_from(args.route_by_batch)
    return RoutePlan(plain_url, draft_url, batch, source)
