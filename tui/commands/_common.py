"""Options and helpers shared by the headless commands."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from rich.console import Console
from rich.markup import escape

from collectors.fmt import num

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


def energy_rows(energy: dict[str, Any] | None) -> list[tuple[str, str]]:
    """Table rows for an energy block from collectors.export.energy_dict."""
    if energy is None:
        return [("energy", "no meter (--meter none)")]
    meter = energy["meter"]
    label = "ESTIMATE" if meter["method"] == "estimate" else meter["method"]
    rows = [
        ("meter", f"{escape(meter['name'])} ({label}, {escape(meter['boundary'])})"),
        ("power", num(energy["power_w"], ".1f", " W") + f" over {num(energy['window_s'], '.2f', ' s')}"),
        (
            "mJ/token",
            num(energy["mj_per_token"], ".0f") + (" (estimate)" if meter["method"] == "estimate" else ""),
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


def print_json(body: dict[str, Any]) -> None:
    print(json.dumps(body, indent=2, sort_keys=False))


def console() -> Console:
    return Console(highlight=False)
