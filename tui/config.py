"""The dashboard's settings: one frozen object built by the CLI (or a test) and handed to the app."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from collectors.proxy_server import ListenAddress
from collectors.sweep.plan import SweepPlan, quick


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
    poll: bool = True  # off in snapshot tests: data then only arrives as posted messages
