"""The dashboard's settings: one frozen object built by the CLI (or a test) and handed to the app;
and the servers of a dashboard that watches several, from a small TOML file (`--config FILE`).

Pitfalls handled: a config file that is missing, not TOML, or has a server without a URL, with an
unknown key or named twice stops with one line naming the file and the fix, never a traceback.
"""

from __future__ import annotations

import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from collectors.errors import SpectopError
from collectors.requests.listen import ListenAddress
from collectors.requests.router import RoutePlan
from collectors.servers import check_url
from collectors.sweep.plan import SweepPlan, quick

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found]

MAX_CONFIG_BYTES = 256 << 10  # a list of servers; a file past it is not one
MAX_SERVERS = 64  # watched by one dashboard: each has a poller, a meter sampler and a row
CONFIG_EXAMPLE = '[[server]] name = "gpu0" url = "http://127.0.0.1:8080" meter = "nvml=0"'


@dataclass(frozen=True, slots=True)
class Settings:
    server_url: str = "http://127.0.0.1:8080"
    interval_s: float = 1.0
    energy_window_s: float = 30.0  # rolling window for live mJ/token
    api_key: str | None = None
    plain_url: str | None = None
    plain_cmd: str | None = None
    draft_url: str | None = None
    draft_cmd: str | None = None
    results_root: Path = Path("results")
    sweep_plan: SweepPlan = field(default_factory=SweepPlan)
    quick_plan: SweepPlan = field(default_factory=quick)
    title: str = "spectop"
    server_log: str | None = None  # a llama-server log file to follow, or "-" (a pipe on stdin)
    server_log_fd: int | None = None  # the pipe's descriptor, once stdin is the terminal again
    proxy: ListenAddress | None = None  # --proxy: where the capture proxy listens
    route: RoutePlan | None = None  # --route-by-batch: the proxy routes to a plain and a drafting server
    server_argv: tuple[str, ...] = ()  # the command spectop started the watched server with (watch)
    poll: bool = True  # off in snapshot tests: data then only arrives as posted messages


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """One server of the dashboard: its name in the summary table, its URL and its meter's spec.

    Servers given the same meter spec share one meter (its joules split between them by tokens).
    """

    name: str
    url: str
    meter: str = "auto"


def short_name(url: str) -> str:
    """host:port, the name of a server given by URL alone."""
    return urlsplit(url).netloc or url


def read_fleet(path: Path) -> list[ServerSpec]:
    """The `[[server]]` tables of a TOML file: `name`, `url`, `meter` (default auto) each."""
    try:
        data = tomllib.loads(_bounded_text(path))
    except OSError as exc:
        raise SpectopError(
            f"cannot read --config {path} ({exc.strerror})", "give the config file's path"
        ) from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SpectopError(f"--config {path} is not TOML: {exc}", f"write it like {CONFIG_EXAMPLE}") from exc
    tables = data.get("server")
    if not isinstance(tables, list) or not tables or not all(isinstance(t, dict) for t in tables):
        raise SpectopError(f"--config {path} lists no [[server]] tables", f"write it like {CONFIG_EXAMPLE}")
    servers = []
    for number, table in enumerate(tables, start=1):
        unknown = sorted(set(table) - {"name", "url", "meter"})
        if unknown or not isinstance(table.get("url"), str):
            what = f"unknown key {unknown[0]!r}" if unknown else "no url"
            raise SpectopError(
                f"--config {path}: server {number} has {what}", "give each [[server]] name, url and meter"
            )
        url = check_url(table["url"])
        servers.append(
            ServerSpec(str(table.get("name") or short_name(url)), url, str(table.get("meter", "auto")))
        )
    return at_most(unique(servers))


def _bounded_text(path: Path) -> str:
    """The file's text, read no further than `MAX_CONFIG_BYTES` (`--config /dev/zero` never ends);
    a pipe or a device is refused before it is opened (opening a pipe waits for its writer)."""
    if not stat.S_ISREG(path.stat().st_mode):
        raise SpectopError(
            f"--config {path} is not a file", f"give the config file, written like {CONFIG_EXAMPLE}"
        )
    with path.open("rb") as file:
        data = file.read(MAX_CONFIG_BYTES + 1)
    if len(data) > MAX_CONFIG_BYTES:
        raise SpectopError(
            f"--config {path} is longer than {MAX_CONFIG_BYTES >> 10} KB: no list of servers is",
            f"give the config file, written like {CONFIG_EXAMPLE}",
        )
    return data.decode("utf-8")


def at_most(servers: list[ServerSpec], limit: int = MAX_SERVERS) -> list[ServerSpec]:
    """`servers`, when a dashboard can watch them all (each polls, and has a row and a meter)."""
    if len(servers) > limit:
        raise SpectopError(
            f"{len(servers)} servers: a dashboard watches at most {limit}",
            "split the fleet over several dashboards, or serve it with spectop export and Prometheus",
        )
    return servers


def unique(servers: list[ServerSpec]) -> list[ServerSpec]:
    """`servers`, when no URL or name is given twice (the table's rows would be one server twice)."""
    for key in ("url", "name"):
        values = [getattr(s, key) for s in servers]
        if len(set(values)) < len(values):
            twice = next(v for v in values if values.count(v) > 1)
            raise SpectopError(
                f"the server {key} {twice} is given twice", f"name each server once, by one {key}"
            )
    return servers
