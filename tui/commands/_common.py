"""Options and helpers shared by the headless commands."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

import httpx
from rich.console import Console

DEFAULT_SERVER = "http://127.0.0.1:8080"


def add_server_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--server", default=DEFAULT_SERVER, metavar="URL",
                        help=f"base URL of llama-server, vLLM or SGLang (default {DEFAULT_SERVER})")
    parser.add_argument("--api-key", default=None, metavar="KEY",
                        help="API key sent to the server only (default: $SPECTOP_API_KEY)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")


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
