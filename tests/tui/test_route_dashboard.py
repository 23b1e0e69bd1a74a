"""`spectop --plain URL --draft URL --proxy PORT --route-by-batch RESULTS|B`: the dashboard of a routed pair.

The Requests tab says which server served each request (read from the rendered table), whichever
of the two servers is shown; one meter's joules are split once over the requests of both.
"""

from __future__ import annotations

import argparse

import httpx
import pytest

from collectors.errors import SpectopError
from collectors.launch.process import free_port
from collectors.recording.writer import Recorder
from collectors.requests.listen import ListenAddress
from collectors.requests.router import RoutePlan
from collectors.simulator.simulator import Simulator
from tests.support import synthetic
from tests.support.dashboard import FakeSampler, text_of, wait_until
from tui.app import SpectopApp
from tui.cli import main
from tui.commands import dashboard
from tui.commands._route_options import route_plan
from tui.config import Settings
from tui.routing import routed_servers
from tui.widgets.request_detail import detail_lines
from tui.widgets.requests_table import RequestsTable
from tui.widgets.source_bar import SourceBar

PLAIN, DRAFT = "http://127.0.0.1:8081", "http://127.0.0.1:8082"


def args_of(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    dashboard.add_options(parser)
    return parser.parse_args(argv)


def test_routing_takes_a_proxy_and_two_running_servers() -> None:
    given = ["--proxy", "9000", "--plain", PLAIN, "--draft", DRAFT, "--route-by-batch", "4"]
    assert route_plan(args_of(given)) == RoutePlan(PLAIN, DRAFT, 4.0, "batch 4 given")
    assert route_plan(args_of(given[:-2])) is None
    wrong = {
        "--proxy is not given": given[2:],
        r"needs a running plain and drafting server \(--plain URL --draft URL\)": given[:2] + given[4:],
        "--plain-cmd/--draft-cmd start none": [*given, "--plain-cmd", "llama-server -m t.gguf"],
        "--server/--config is not taken": [*given, "--server", PLAIN],
        "--server-log follows one server's log": [*given, "--server-log", "x.log"],
        "share one --meter": [*given, "--meter", "nvml", "--meter", "rapl"],
        "--plain and --draft are both": [*given[:4], "--draft", PLAIN, "--route-by-batch", "4"],
    }
    for said, argv in wrong.items():
        with pytest.raises(SpectopError, match=said) as raised:
            route_plan(args_of(argv))
        assert "--route-by-batch" in str(raised.value)


def test_one_meter_under_both_servers_is_split_once_over_all_their_requests() -> None:
    plan = RoutePlan(PLAIN, DRAFT, 2.0, "batch 2 given")
    settings = Settings(server_url=DRAFT, poll=False, route=plan)
    draft, plain = routed_servers(settings, FakeSampler(synthetic.METER))  # type: ignore[arg-type]
    on_draft = synthetic.record("draft-simple", "d1", 100.2, tag="proxy:draft:1")
    on_plain = synthetic.record("plain", "q1", 100.25, tag="proxy:plain:2")
    draft.state.add_record(on_draft)
    plain.state.add_record(on_plain)
    for reading in synthetic.readings():
        draft.state.add_reading(reading)
    for poll in synthetic.snapshots():  # the drafting server's own counts: 4 busy slots' tokens
        draft.state.add_snapshot(poll)
    shares = plain.state.attribution()  # the plain server's state sees both requests
    assert set(shares) == {"d1", "q1"} and shares is draft.state.attribution()
    # 40 W until 101 s, and the two requests overlap: the meter's joules from the first send to
    # the last end, once, are all theirs (each server's own book would have charged both the whole,
    # and one server's counts would have given a share to traffic that was the other's requests)
    end_s = max(on_draft.t_done_s, on_plain.t_done_s)
    assert end_s < 101.0
    assert sum(a.energy_j for a in shares.values()) == pytest.approx(40.0 * (end_s - 100.2), rel=1e-6)


async def stream(client: httpx.AsyncClient, url: str, n_predict: int) -> None:
    body = {"prompt": "hello", "n_predict": n_predict, "stream": True, "temperature": 0}
    async with client.stream("POST", url + "/completion", json=body) as answer:
        async for _ in answer.aiter_lines():
            pass


async def test_the_requests_tab_and_a_recording_say_which_server_served_each_routed_request(
    tmp_path, capsys
) -> None:
    with Simulator(seed=0, speedup=2) as sim:
        address = ListenAddress("127.0.0.1", free_port())
        plan = RoutePlan(sim.plain_url, sim.draft_url, 2.0, "batch 2 given")
        settings = Settings(server_url=sim.draft_url, poll=False, proxy=address, route=plan)
        recorder = Recorder(tmp_path / "routed.jsonl", server_url=sim.draft_url, meter=None)
        app = SpectopApp(settings, None, None, fleet=routed_servers(settings, None), recorder=recorder)
        async with app.run_test(size=(140, 42)) as pilot:
            async with httpx.AsyncClient(trust_env=False, timeout=60) as client:
                for _ in range(100):  # the proxy's thread is listening soon after mount
                    try:
                        await client.get(address.url + "/health")
                        break
                    except httpx.ConnectError:
                        await pilot.pause(0.1)
                long = app.run_worker(stream(client, address.url, 300))  # alone: joins batch 1, drafts
                await pilot.pause(0.5)
                await stream(client, address.url, 8)  # beside it: joins batch 2, plain
                await long.wait()
                await stream(client, address.url, 8)  # alone again: draft
            table = app.query_one(RequestsTable)
            await wait_until(pilot, lambda: len(app.state.records) == 3)
            rows = [line.split() for line in text_of(table).splitlines()[1:] if line.strip()]
            who = sorted(row[1] for row in rows if row[1].startswith("proxy"))
            assert who == ["proxy→draft", "proxy→draft", "proxy→plain"]
            served = sorted((r.tag, r.server_url) for r in app.state.records.values())
            assert served == [
                ("proxy:draft:1", sim.draft_url),
                ("proxy:draft:1", sim.draft_url),
                ("proxy:plain:2", sim.plain_url),
            ]
            assert sorted(r.committed_tokens for r in app.state.records.values()) == [8, 8, 300]
            assert (
                "proxy routing " + address.url + ": draft below batch 2, plain from it (batch 2 given)"
                in " ".join(text_of(app.query_one(SourceBar)).split())
            )
            app.fleet.select(1)  # the plain server shown: the same routed requests
            assert len(app.fleet.state.records) == 3
    recorder.close()
    assert main(["report", str(tmp_path / "routed.jsonl")]) == 0
    said = capsys.readouterr().out
    assert said.count("proxy→draft") == 2 and said.count("proxy→plain") == 1


def test_a_routed_requests_detail_says_which_server_served_it_and_why() -> None:
    rerouted = synthetic.record(request_id="p1", tag="proxy:plain:1:draft down")
    said = dict(detail_lines(rerouted, None))["source"]
    assert said == f"proxy, served by plain ({synthetic.URL}) joining batch 1; draft down"
    assert dict(detail_lines(synthetic.record(tag="proxy"), None))["source"] == "proxy"


def test_watch_starts_one_server_and_says_how_to_route_instead(capsys) -> None:
    assert main(["watch", "--route-by-batch", "4", "--", "llama-server", "-m", "t.gguf"]) == 2
    err = capsys.readouterr().err
    assert "spectop watch starts one server, and --route-by-batch routes between two" in err
    assert "spectop --plain URL --draft URL --proxy 8081 --route-by-batch RESULTS|B" in err
