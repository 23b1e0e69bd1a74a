"""Options and helpers shared by the headless commands."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import httpx
from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from collectors.meters import Sampler

DEFAULT_SERVER = "http://127.0.0.1:8080"


def add_server_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--server",
        default=DEFAULT_SERVER,
        metavar="URL",
        help=f"base URL of llama-server, vLLM or SGLang (default {DEFAULT_SERVER})",
    )
    parser.add_argument(
        "--api-key",
        default=None,
        metavar="KEY",
        help="API key sent to the server only (default: $SPECTOP_API_KEY)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")


def add_meter_option(parser: argparse.ArgumentParser) -> None:
    from collectors.meters import METER_SPEC_HELP

    parser.add_argument("--meter", default="auto", metavar="SPEC", help=METER_SPEC_HELP)


@contextmanager
def sampling(spec: str) -> Iterator[Sampler | None]:
    """A started sampler on the meter `spec` names (None for `none`), stopped and closed after."""
    from collectors.meters import Sampler, open_meter

    meter = open_meter(spec)
    sampler = Sampler(meter).start() if meter else None
    try:
        yield sampler
    finally:
        if sampler:
            sampler.stop()
        if meter:
            meter.close()


def energy_rows(energy: dict[str, Any] | None) -> list[tuple[str, str]]:
    """Table rows for an energy block from collectors.export.energy_dict."""
    if energy is None:
        return [("energy", "no meter (--meter none)")]
    meter = energy["meter"]
    label = "ESTIMATE" if meter["method"] == "estimate" else meter["method"]
    rows = [
        ("meter", f"{escape(meter['name'])} ({label}, {escape(meter['boundary'])})"),
        ("power", fmt(energy["power_w"], ".1f", " W") + f" over {fmt(energy['window_s'], '.2f', ' s')}"),
        (
            "mJ/token",
            fmt(energy["mj_per_token"], ".0f") + (" (estimate)" if meter["method"] == "estimate" else ""),
        ),
    ]
    if energy["short_window"]:
        rows.append(
            (
                "note",
                f"the window is shorter than 10 meter update periods ({meter['update_period_s']:g} s): "
                "read it as rough",
            )
        )
    return rows


def api_key(args: argparse.Namespace) -> str | None:
    return args.api_key or os.environ.get("SPECTOP_API_KEY") or None


def http_client(key: str | None, timeout_s: float = 5.0) -> httpx.AsyncClient:
    """One client per command; the key rides in a header to the server and nowhere else."""
    headers = {"Authorization": f"Bearer {key}"} if key else None
    return httpx.AsyncClient(timeout=httpx.Timeout(timeout_s, read=120.0), headers=headers)


def print_json(body: dict[str, Any]) -> None:
    print(json.dumps(body, indent=2, sort_keys=False))


def console() -> Console:
    return Console(highlight=False)


def fmt(value: float | None, spec: str = ".1f", unit: str = "") -> str:
    """A number for a table, or an em dash when there is none."""
    return "—" if value is None else f"{value:{spec}}{unit}"


def pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f} %"
