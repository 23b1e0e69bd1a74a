"""The routing proxy on loopback, in front of the simulator's plain and drafting servers (llama-server's
dialect): pages go to the drafting server and a generation alone drafts, a server that is down hands its requests to
the other with the record saying so, and both down is one 502 naming both."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from collectors.launch.process import free_port
from collectors.requests.proxy_server import ListenAddress, ProxyServer
from collectors.requests.record import RequestRecord
from collectors.requests.router import RoutePlan
from collectors.simulator.simulator import Simulator

LOCAL = ListenAddress("127.0.0.1", 0)
BODY = {"prompt": "hello", "n_predict": 8, "stream": True, "temperature": 0}


@pytest.fixture(scope="module")
def sim() -> Iterator[Simulator]:
    with Simulator(seed=0, speedup=20) as simulator:
        yield simulator


def recorded(records: list[RequestRecord], n: int) -> list[RequestRecord]:
    for _ in range(200):
        if len(records) >= n:
            break
        time.sleep(0.02)
    return records


def nowhere() -> str:
    return f"http://127.0.0.1:{free_port()}"  # a port nothing listens on: connections refused


def test_pages_go_to_the_drafting_server_and_a_request_alone_drafts(sim: Simulator) -> None:
    records: list[RequestRecord] = []
    plan = RoutePlan(sim.plain_url, sim.draft_url, 2.0, "batch 2 given")
    with ProxyServer(sim.draft_url, LOCAL, records.append, route=plan) as proxy:
        with httpx.Client(trust_env=False, timeout=30) as client:
            assert client.get(proxy.url + "/health").status_code == 200
            assert client.get(proxy.url + "/props").status_code == 200
            answer = client.post(proxy.url + "/completion", json=BODY)
        recorded(records, 1)
    # the generation alone joins batch 1, below 2: draft (the pages are no requests of the batch)
    assert answer.status_code == 200
    assert [(r.tag, r.server_url) for r in records] == [("proxy:draft:1", sim.draft_url)]


def test_a_server_that_is_down_hands_its_requests_to_the_other(sim: Simulator) -> None:
    records: list[RequestRecord] = []
    plan = RoutePlan(sim.plain_url, nowhere(), 2.0, "batch 2 given")
    with ProxyServer(plan.draft_url, LOCAL, records.append, route=plan) as proxy:
        with httpx.Client(trust_env=False, timeout=30) as client:
            first = client.post(proxy.url + "/completion", json=BODY)
            second = client.post(proxy.url + "/completion", json=BODY)
        recorded(records, 2)
    assert first.status_code == second.status_code == 200
    # the first found the drafting server refusing; the second, within 2 s, was sent to plain at once
    assert [(r.tag, r.server_url, r.committed_tokens) for r in records] == [
        ("proxy:plain:1:draft down", sim.plain_url, 8),
        ("proxy:plain:1:draft down", sim.plain_url, 8),
    ]


def test_both_down_is_one_error_naming_both() -> None:
    records: list[RequestRecord] = []
    plan = RoutePlan(nowhere(), nowhere(), 2.0, "batch 2 given")
    with ProxyServer(plan.draft_url, LOCAL, records.append, route=plan) as proxy:
        answer = httpx.post(proxy.url + "/completion", json=BODY, trust_env=False, timeout=30)
        recorded(records, 1)
    assert answer.status_code == 502
    message = answer.json()["error"]["message"]
    assert message == (
        f"spectop proxy cannot reach the drafting server {plan.draft_url} or the plain server {plan.plain_url}"
    )
    assert (
        records[0].error
        == f"cannot reach the drafting server {plan.draft_url} or the plain server {plan.plain_url}"
    )
