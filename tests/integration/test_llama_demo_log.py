"""`spectop demo --llama` follows the draft llama-server's own log, as `watch` does: its Requests
tab shows each request the server logged, with acceptance, G and mJ/token."""

from __future__ import annotations

import asyncio

import pytest

from tests.support.dashboard import text_of, wait_until
from tui.commands import dashboard
from tui.demo_llama import run_llama_demo
from tui.widgets.requests_table import RequestsTable

pytestmark = pytest.mark.llama


def test_the_llama_demo_shows_the_requests_its_draft_server_logged(llama_server_binary, monkeypatch):
    rows: list[list[str]] = []

    def drive(app) -> int:  # run_app's place: the demo's own app, under Pilot
        async def go() -> None:
            async with app.run_test(size=(160, 45)) as pilot:
                table = app.query_one(RequestsTable)
                await wait_until(pilot, lambda: " log s" in text_of(table), timeout_s=120)
                rows.extend(line.split() for line in text_of(table).splitlines() if " log s" in line)

        asyncio.run(go())
        return 0

    monkeypatch.setattr(dashboard, "run_app", drive)
    assert run_llama_demo("estimate", 4.0, 32) == 0
    # id (2 words), who (2), tokens, acceptance and "%", width, batch, G: drafted, so figures, not dashes
    row = rows[0]
    assert row[2] == "log" and row[4] == "32" and row[6] == "%" and "—" not in (row[5], row[7], row[9])
