"""`--proxy` in the dashboard: its option, its rows (marked `proxy`), and one row per request when
the server's log reports a proxied request too."""

from __future__ import annotations

import argparse
import socket

import httpx
import pytest

from collectors.errors import SpectopError
from collectors.launch.process import free_port
from collectors.requests.listen import ListenAddress, check_port, listen_address
from collectors.servers.llamacpp.log import LoggedRequest
from collectors.servers.server_log import TimedRequest
from collectors.simulator.simulator import Simulator
from tests.support import synthetic
from tests.support.dashboard import FakeCollector, FakeSampler, wait_until
from tui import messages
from tui.app import SpectopApp
from tui.commands import dashboard, watch
from tui.config import Settings


def test_proxy_listens_on_loopback_unless_a_host_is_named() -> None:
    assert listen_address("8081") == ListenAddress("127.0.0.1", 8081)
    assert listen_address("0.0.0.0:9000") == ListenAddress("0.0.0.0", 9000)
    assert listen_address("[::1]:9000").url == "http://[::1]:9000"
    for bad in ("", "abc", "70000", "0", ":8081", "host:port"):
        with pytest.raises(SpectopError, match="--proxy must be"):
            listen_address(bad)


def test_both_commands_take_proxy() -> None:
    for command in (dashboard, watch):
        parser = argparse.ArgumentParser()
        command.add_options(parser)
        assert parser.parse_args(["--proxy", "8081"]).proxy == ListenAddress("127.0.0.1", 8081)
    assert dashboard.settings_from(parser_for(["--proxy", "9"])).proxy == ListenAddress("127.0.0.1", 9)


def parser_for(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    dashboard.add_options(parser)
    return parser.parse_args(argv)


def test_a_taken_port_is_one_line_before_the_dashboard_starts() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(SpectopError, match="--proxy cannot listen on 127.0.0.1"):
            check_port(ListenAddress("127.0.0.1", taken.getsockname()[1]))


def logged_like(record, slot_id: int = 2, task_id: int = 7) -> TimedRequest:
    """The server log's block for `record`'s request (same tokens and draft counts, same end)."""
    total_ms = 1000 * record.duration_s
    logged = LoggedRequest(
        slot_id, task_id, 1, 3.0, record.committed_tokens, total_ms - 3.0, total_ms,
        record.draft_n, record.draft_n_accepted,
    )  # fmt: skip
    return TimedRequest(logged, record.t_done_s + 0.2)


async def test_a_proxied_request_is_one_proxy_row_even_when_the_log_reports_it() -> None:
    app = SpectopApp(
        Settings(server_url=synthetic.URL, poll=False),
        FakeCollector(synthetic.snapshots()),
        FakeSampler(synthetic.METER),
    )
    proxied = synthetic.record("draft-simple", "p1", 100.2, tag="proxy")
    other = synthetic.record("draft-simple", "r9", 300.0, tag="proxy")
    async with app.run_test(size=(140, 42)) as pilot:
        app.post_message(messages.ProxyRequestRecorded(proxied))
        await wait_until(pilot, lambda: "p1" in app.state.records)
        # the log's block of the same request, and of one the proxy did not see
        unseen = logged_like(other, task_id=8)
        app.post_message(messages.LogRequestsRead([logged_like(proxied), unseen]))
        await wait_until(pilot, lambda: len(app.state.records) == 2)
        table = app.query_one("RequestsTable")
        assert sorted(app.state.records) == ["p1", "s2 t8"]
        assert str(table.get_cell("p1", "who")) == "proxy"
        assert table.get_cell("p1", "p99") != "—"  # the proxy row keeps its gap tails


async def test_the_dashboard_shows_a_request_sent_through_its_proxy() -> None:
    with Simulator(seed=0, speedup=20) as sim:
        address = ListenAddress("127.0.0.1", free_port())
        settings = Settings(server_url=sim.draft_url, poll=False, proxy=address)
        app = SpectopApp(settings, FakeCollector(synthetic.snapshots()), None)
        async with app.run_test(size=(140, 42)) as pilot:
            body = {"prompt": "hello", "n_predict": 16, "stream": True, "temperature": 0}
            async with httpx.AsyncClient(trust_env=False, timeout=30) as client:
                for _ in range(100):  # the proxy's thread is listening soon after mount
                    try:
                        answer = await client.post(address.url + "/completion", json=body)
                        break
                    except httpx.ConnectError:
                        await pilot.pause(0.1)
            assert answer.status_code == 200
            await wait_until(pilot, lambda: any(r.tag == "proxy" for r in app.state.records.values()))
            [record] = app.state.records.values()
            assert record.committed_tokens == 16 and record.draft_n
            table = app.query_one("RequestsTable")
            assert str(table.get_cell(record.request_id, "who")) == "proxy"
