"""`spectop demo`'s dashboard as a user opens it: its Requests tab shows what `watch` shows on a real
server, every request the server logged with its acceptance, width, G and mJ/token."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import pytest

from tests.support.dashboard import text_of, wait_until
from tui import cli
from tui.commands import dashboard, demo
from tui.widgets.requests_table import RequestsTable

pytestmark = pytest.mark.slow  # the whole demo: simulator, meter, traffic and dashboard


def _filled_log_rows(table: RequestsTable) -> list[list[str]]:
    """The rows on screen that the server's log gave (`log s<slot>`), with acceptance, width, G and
    mJ/token all shown: id, who, tokens, acceptance, width, batch, G, tok/s, mJ/tok, as words."""
    rows = []
    for line in text_of(table).splitlines():
        words = line.split()
        if words[2:3] != ["log"] or len(words) < 12 or words[6] != "%":
            continue  # not a logged request, or its acceptance is a dash
        row = [" ".join(words[0:2]), " ".join(words[2:4]), words[4], " ".join(words[5:7]), *words[7:12]]
        if "—" not in (row[4], row[6], row[8]):
            rows.append(row)
    return rows


def logged_figures(log_text: str, slot: int, task: int) -> tuple[int, int, int]:
    """(tokens T, drafted D, accepted A) of one request, read off its llama-server log lines."""
    mine = [line for line in log_text.splitlines() if f"id {slot:2d} | task {task} |" in line]
    (tokens,) = [
        int(m[1]) for line in mine if (m := re.search(r"\s{2}eval time = .* ms /\s*(\d+) tokens", line))
    ]
    ((accepted, drafted),) = [
        (int(m[1]), int(m[2]))
        for line in mine
        if (m := re.search(r"\(\s*(\d+) accepted /\s*(\d+) generated", line))
    ]
    return tokens, drafted, accepted


def test_the_demo_requests_tab_shows_each_logged_request_with_its_figures(monkeypatch):
    seen: dict[str, object] = {}

    def drive(app) -> int:  # run_app's place: the demo's own app, under Pilot instead of a terminal
        async def go() -> None:
            async with app.run_test(size=(160, 45)) as pilot:
                t0 = time.monotonic()
                table = app.query_one(RequestsTable)
                await wait_until(pilot, lambda: _filled_log_rows(table), timeout_s=90)
                seen["after_s"] = time.monotonic() - t0
                seen["rows"] = _filled_log_rows(table)
                seen["log"] = Path(app.settings.server_log).read_text()

        asyncio.run(go())
        return 0

    monkeypatch.setattr(dashboard, "run_app", drive)
    monkeypatch.setattr(demo, "_signals_as_interrupt", lambda: None)  # pytest keeps its own handlers
    args = cli.parse(["demo", "--seed", "3", "--tokens", "64"])
    assert args.run(args) == 0
    # the promise: figures within 20 s of opening (about 6 s here: idle, then one request)
    assert seen["after_s"] <= 20, seen["after_s"]
    row = seen["rows"][0]
    slot, task = (int(word[1:]) for word in row[0].split())  # the log's row id: "s<slot> t<task>"
    tokens, drafted, accepted = logged_figures(seen["log"], slot, task)
    # by hand: steps after the first token T - 1 - A; G = 1 + A / steps; width = 1 + D / steps
    steps = tokens - 1 - accepted
    assert row[2] == str(tokens)
    assert row[3] == f"{100 * accepted / drafted:.1f} %"  # one decimal, as vLLM's tools show it
    assert row[4] == f"{1 + drafted / steps:.2f}" and row[6] == f"{1 + accepted / steps:.2f}"
    # the demo's first phase: one request at a time; "—" when no poll fell inside a request shorter
    # than the poll interval (a logged row's batch is the polls' busy slots)
    assert row[5] in ("1.0", "—")
    assert float(row[8].rstrip("*")) > 0  # its share of the meter's joules per token
