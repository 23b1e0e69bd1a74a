"""The options several commands share, each defined once here (name, default, help), and their helpers.

Pitfalls handled: the API key falls back to $SPECTOP_API_KEY when the command runs, so the key never
shows as a default in --help; server text in energy rows is escaped before Rich reads it as markup;
energy the meter did not cover is shown as a lower bound ("≥ X J"), never as the energy. Numeric
options are read by `whole` and `seconds` (argparse types): NaN, infinities, negatives and absurdly
large values stop with one line naming the option, its range and an example (SpectopError passes
through argparse to `tui.cli.main`, which prints it and exits 2), never a traceback or a sweep that
sleeps for ever; `--json` never prints NaN or Infinity.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from collectors.errors import SpectopError
from collectors.export import json_forms
from collectors.fmt import num, number_in
from collectors.requests.listen import listen_address

DEFAULT_SERVER = "http://127.0.0.1:8080"
SERVER_HELP = "base URL of llama-server, vLLM or SGLang"
METER_HELP = "power meter (default auto); every SPEC and what it reads: spectop help meters"
METERS_HELP = (
    "power meter (default auto), once for all servers or one per --server; every SPEC: spectop help meters"
)


def add_server_option(parser: argparse.ArgumentParser, *, optional: bool = False) -> None:
    """`--server URL`; optional (doctor) means no default: the server is checked only when named."""
    if optional:
        parser.add_argument(
            "--server", default=None, metavar="URL", help=f"also check this server: {SERVER_HELP}"
        )
    else:
        parser.add_argument(
            "--server",
            default=DEFAULT_SERVER,
            metavar="URL",
            help=f"{SERVER_HELP} (default {DEFAULT_SERVER})",
        )


class Repeated(argparse.Action):
    """A repeatable option whose default is dropped, not added to, once the option is given."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        given = getattr(namespace, self.dest)
        setattr(namespace, self.dest, [*([] if given is self.default else given), values])


def add_servers_option(parser: argparse.ArgumentParser) -> None:
    """`--server URL`, repeatable: several servers in one dashboard or exporter."""
    parser.add_argument(
        "--server",
        action=Repeated,
        default=[DEFAULT_SERVER],
        metavar="URL",
        help=f"{SERVER_HELP}; repeat for several (default {DEFAULT_SERVER})",
    )


def add_meters_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--meter",
        action=Repeated,
        default=["auto"],
        metavar="SPEC",
        help=METERS_HELP,
    )


def meters_for(servers: list[str], meters: list[str]) -> list[str]:
    """The meter spec each server is read with: one for all, or one each, in order."""
    if len(meters) == 1 or len(meters) == len(servers):
        return meters
    raise SpectopError(
        f"{len(meters)} --meter for {len(servers)} --server",
        "give one --meter for all servers (shared) or one per --server, in the same order",
    )


def add_api_key_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--api-key",
        default=None,
        metavar="KEY",
        help="API key sent to the server only (default: $SPECTOP_API_KEY)",
    )


def api_key(args: argparse.Namespace) -> str | None:
    """--api-key, else $SPECTOP_API_KEY, else None."""
    return args.api_key or os.environ.get("SPECTOP_API_KEY") or None


def add_meter_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--meter", default="auto", metavar="SPEC", help=METER_HELP)


def add_json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")


MAX_SECONDS = 86_400.0  # a day: any longer wait or window is a typo, not a plan


def whole(option: str, low: int, high: int, example: int) -> Callable[[str], int]:
    """An argparse type: a whole number from `low` to `high`, else one line naming `option`."""

    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            value = None
        if value is None or not low <= value <= high:
            raise SpectopError(
                f"{option} must be a whole number from {low} to {high:,}, not {text!r}",
                f"e.g. {option} {example}",
            )
        return value

    return parse


def seconds(
    option: str, low: float, high: float, example: float, *, above_low: bool = False, unit: str = "seconds"
) -> Callable[[str], float]:
    """An argparse type: a finite number from `low` (or above it, `above_low`) to `high`."""

    def parse(text: str) -> float:
        value = number_in(text, low, high, above_low=above_low)
        if value is None:
            lowest = f"above {low:g}" if above_low else f"from {low:g}"
            raise SpectopError(
                f"{option} must be {unit} {lowest} to {high:,g}, not {text!r}", f"e.g. {option} {example:g}"
            )
        return value

    return parse


def add_interval_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--interval",
        type=seconds("--interval", 0.01, 3600.0, 1.0),
        default=1.0,
        metavar="S",
        help="seconds between polls (default 1)",
    )


def add_arm_options(parser: argparse.ArgumentParser, title: str) -> None:
    """The sweep's two arms: a running server's URL, or a command spectop starts."""
    arms = parser.add_argument_group(title)
    arms.add_argument("--plain", metavar="URL", help="a running server without drafting")
    arms.add_argument("--draft", metavar="URL", help="a running server with drafting")
    arms.add_argument("--plain-cmd", metavar="CMD", help="command that starts the plain server")
    arms.add_argument(
        "--draft-cmd",
        metavar="CMD",
        help="command that starts the drafting server; without a plain arm, the plain command "
        "is this one minus its speculative flags",
    )


def add_results_option(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    help: str = "where sweep run folders go (default ./results)",
) -> None:
    parser.add_argument("--results", type=Path, default=Path("results"), metavar="DIR", help=help)


def add_server_log_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--server-log",
        default=None,
        metavar="FILE",
        help="follow llama-server's log (like tail -F; - reads a pipe: llama-server ... 2>&1 | "
        "spectop --server-log -) and show every request it serves",
    )


def add_proxy_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--proxy",
        type=listen_address,
        default=None,
        metavar="[HOST:]PORT",
        help="also listen here (loopback unless HOST is given) and forward every request to the "
        "server unchanged, showing each one with its drafted/accepted counts and gap tails",
    )


def add_record_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--record",
        type=Path,
        default=None,
        metavar="FILE",
        help="write every poll, meter reading, request and sweep event to FILE as JSON lines "
        "(64 MiB, then FILE.1; no API key); play it back with spectop replay FILE",
    )


SHARED_OPTIONS = {
    "server": add_server_option,
    "servers": add_servers_option,
    "meters": add_meters_option,
    "api-key": add_api_key_option,
    "meter": add_meter_option,
    "json": add_json_option,
    "interval": add_interval_option,
    "results": add_results_option,
    "server-log": add_server_log_option,
    "proxy": add_proxy_option,
    "record": add_record_option,
}


def add_options(parser: argparse.ArgumentParser, *names: str) -> None:
    """The shared options `names` names (keys of SHARED_OPTIONS), in that order in --help."""
    for name in names:
        SHARED_OPTIONS[name](parser)


def energy_rows(energy: dict[str, Any] | None) -> list[tuple[str, str]]:
    """Table rows for an energy block from collectors.export.json_forms.energy_dict."""
    if energy is None:
        return [("energy", "no meter (--meter none)")]
    meter = energy["meter"]
    label = "ESTIMATE" if meter["method"] == "estimate" else meter["method"]
    rows = [("meter", f"{escape(meter['name'])} ({label}, {escape(meter['boundary'])})")]
    if not energy["covered"]:
        # what the samples cover is a lower bound: never shown as the energy, W or mJ/token
        rows += [
            (
                "energy",
                f"≥ {num(energy['energy_j'], '.1f', ' J')}, the meter did not cover the "
                f"{num(energy['window_s'], '.2f', ' s')} window",
            ),
            ("mJ/token", num(None)),
        ]
    else:
        rows += [
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


def print_json(body: dict[str, Any]) -> None:
    print(json_forms.dumps(body, indent=2, sort_keys=False))


FILE_WIDTH = 1000  # columns of a table written to a file or a pipe: whole, never cut with "…"


def console() -> Console:
    """Rich's console for a command's output: the terminal's width on a terminal; redirected to a
    file or a CI log, wide enough that no table is cut (Rich would take 80 columns, or COLUMNS)."""
    if sys.stdout.isatty():
        return Console(highlight=False)
    return Console(highlight=False, width=FILE_WIDTH)
