"""The simulator speaks the dialect of the real llama-server captures (tests/data/llama-server).

Plain arm against `plain.*`, draft arm against `draft-simple.*`: same JSON keys at every level
(and the same JSON types), same SSE event kinds, same metric names, HELP and TYPE lines.
"""

from __future__ import annotations

import json

import httpx
import pytest

from collectors.simulator import Simulator
from tests.support.captures import read_json, read_text, sse_lines
from tests.support.simulator_clients import PROMPT, data_events, families, shape, stream_lines

ARMS = [("plain", "plain"), ("draft", "draft-simple")]


def _url(sim: Simulator, arm: str) -> str:
    return sim.plain_url if arm == "plain" else sim.draft_url


def _fixture_events(name: str) -> list[dict]:
    return [json.loads(line[6:]) for _, line in sse_lines(name) if line.startswith("data: {")]


@pytest.mark.parametrize(("arm", "prefix"), ARMS)
@pytest.mark.parametrize("endpoint", ["health", "props", "models"])
def test_static_endpoints_match(
    sim: Simulator, client: httpx.Client, arm: str, prefix: str, endpoint: str
) -> None:
    path = {"health": "/health", "props": "/props", "models": "/v1/models"}[endpoint]
    ours = client.get(_url(sim, arm) + path)
    assert ours.status_code == 200
    assert ours.headers["content-type"].startswith("application/json")
    assert shape(ours.json()) == shape(read_json(f"{prefix}.{endpoint}.json"))


@pytest.mark.parametrize(("arm", "prefix"), ARMS)
def test_non_streamed_bodies_match(sim: Simulator, client: httpx.Client, arm: str, prefix: str) -> None:
    url = _url(sim, arm)
    completion = client.post(url + "/completion", json={"prompt": PROMPT, "n_predict": 48, "temperature": 0})
    assert shape(completion.json()) == shape(read_json(f"{prefix}.completion.json"))
    chat = client.post(
        url + "/v1/chat/completions",
        json={"messages": [{"role": "user", "content": PROMPT}], "max_tokens": 48, "temperature": 0},
    )
    assert shape(chat.json()) == shape(read_json(f"{prefix}.chat.json"))


@pytest.mark.parametrize(("arm", "prefix"), ARMS)
def test_completion_stream_matches(sim: Simulator, client: httpx.Client, arm: str, prefix: str) -> None:
    lines = stream_lines(
        client,
        _url(sim, arm) + "/completion",
        {"prompt": PROMPT, "n_predict": 48, "temperature": 0, "stream": True},
    )
    ours, theirs = data_events(lines), _fixture_events(f"{prefix}.completion.sse.jsonl")
    assert all(line.startswith("data: {") for _, line in lines), "native streams end without [DONE]"
    assert len(ours) == 49 == len(theirs)  # one event per token, then the final one
    for mine, real in [(ours[0], theirs[0]), (ours[20], theirs[20]), (ours[-1], theirs[-1])]:
        assert shape(mine) == shape(real)
    assert [e["tokens_predicted"] for e in ours[:-1]] == list(range(1, 49))
    assert all(len(e["tokens"]) == 1 and e["id_slot"] == -1 for e in ours[:-1])


@pytest.mark.parametrize(("arm", "prefix"), ARMS)
def test_chat_stream_matches(sim: Simulator, client: httpx.Client, arm: str, prefix: str) -> None:
    body = {
        "messages": [{"role": "user", "content": PROMPT}],
        "max_tokens": 48,
        "temperature": 0,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    lines = stream_lines(client, _url(sim, arm) + "/v1/chat/completions", body)
    assert lines[-1][1] == "data: [DONE]"
    ours, theirs = data_events(lines), _fixture_events(f"{prefix}.chat.sse.jsonl")
    # role chunk, one content chunk per token, finish, usage (the capture has fewer content chunks
    # than tokens only because its random model emitted incomplete UTF-8, held back by the server)
    assert len(ours) == 48 + 3
    for index in (0, 1, 20, -2, -1):  # role, first content, content, finish, usage
        assert shape(ours[index]) == shape(theirs[index])
    assert ours[-2]["choices"][0]["finish_reason"] == "length"


@pytest.mark.parametrize(("arm", "prefix"), ARMS)
def test_slots_match(arm: str, prefix: str) -> None:
    with Simulator(seed=0, speedup=20, total_slots=4) as fresh, httpx.Client(timeout=30) as client:
        url = _url(fresh, arm)
        idle = client.get(url + "/slots").json()
        assert len(idle) == 4
        never_used = read_json(f"{prefix}.slots.idle.json")[0]
        assert all(shape(slot) == shape(never_used) for slot in idle)
        with client.stream(
            "POST", url + "/completion", json={"prompt": PROMPT, "n_predict": 400, "stream": True}
        ) as response:
            lines = response.iter_lines()  # kept: a dropped line iterator closes the stream
            next(lines)
            busy = [s for s in client.get(url + "/slots").json() if s["is_processing"]]
        real_busy = [s for s in read_json(f"{prefix}.slots.busy.json") if s["is_processing"]][0]
        assert len(busy) == 1 and shape(busy[0]) == shape(real_busy)
        used = [s for s in client.get(url + "/slots").json() if "id_task" in s]
        real_used = read_json("draft-simple.slots.idle.json")[2]  # an idle slot that ran a task
        assert len(used) == 1 and shape(used[0]) == shape(real_used)
        assert used[0]["speculative"] is (arm == "draft")
        expected_types = "none,draft-simple" if arm == "draft" else "none"
        assert used[0]["params"]["speculative.types"] == expected_types


def _metric_contract(text: str) -> dict[str, tuple[str, str, frozenset]]:
    return {
        name: (fam.type, fam.documentation, frozenset(frozenset(s.labels) for s in fam.samples))
        for name, fam in families(text).items()
    }


@pytest.mark.parametrize(("arm", "prefix"), ARMS)
def test_metrics_match(arm: str, prefix: str) -> None:
    with Simulator(seed=0, speedup=20) as fresh, httpx.Client(timeout=30) as client:
        url = _url(fresh, arm)
        before = client.get(url + "/metrics")
        assert before.headers["content-type"] == "text/plain; version=0.0.4"
        assert before.headers["process-start-time-unix"].isdigit()
        if arm == "plain":
            assert _metric_contract(before.text) == _metric_contract(read_text("plain.metrics.before.txt"))
        client.post(url + "/completion", json={"prompt": PROMPT, "n_predict": 64})
        after = client.get(url + "/metrics").text
        assert _metric_contract(after) == _metric_contract(read_text(f"{prefix}.metrics.after.txt"))
        lines = [line for line in after.splitlines() if line.startswith("llamacpp:")]
        assert len(lines) == (15 + 4 if arm == "draft" else 15)  # 15 scalars (+ 4 draft positions)


def test_unknown_route_is_llama_404(sim: Simulator, client: httpx.Client) -> None:
    response = client.get(sim.plain_url + "/slots/0")
    assert response.status_code == 404
    assert response.json() == {"error": {"message": "File Not Found", "type": "not_found_error", "code": 404}}
