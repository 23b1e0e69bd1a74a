"""SGLang's native /generate: a request's verify passes, drafted and accepted tokens come from its
last `meta_info`, named per release (tests/support/sglang_native.py cites the source lines).

By hand: 40 tokens, the first from prefill, then 13 verify passes of 4-token width (3 drafts
each, 39 drafted) that accepted 26 drafts: 1 + 13 + 26 = 40 tokens; steps 13, G = 1 + 26 / 13 = 3.
"""

from __future__ import annotations

import httpx
import pytest

from collectors.errors import SpectopError
from collectors.requests import streams
from collectors.requests.client import RequestSpec, request_body, stream_request
from tests.support.sglang_native import generate_stream

COUNTS = [1, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40]


def replay(body: bytes) -> streams.StreamState:
    state = streams.StreamState()
    for i, line in enumerate(body.decode().splitlines()):
        streams.feed_line(state, i / 100, line, native=True)
    return state


@pytest.mark.parametrize("version", ["0.5.9", "0.5.10", "0.5.11", "0.5.23"])
def test_drafted_accepted_and_steps_from_the_last_meta_info(version):
    state = replay(generate_stream(version, COUNTS, verify=13, accepted=26))
    assert state.done and state.finish_reason == "length"
    assert (state.committed_tokens, state.prompt_tokens) == (40, 12)
    assert (state.draft_n, state.draft_n_accepted, state.steps()) == (39, 26, 13)
    assert state.text == "".join(f"t{j} " for j in range(40))  # the cumulative text, once
    assert sum(e.n_tokens for e in state.events) == 40


@pytest.mark.parametrize("version", ["0.4.10", "0.5.4"])
def test_old_releases_give_verify_passes_only(version):
    state = replay(generate_stream(version, COUNTS, verify=13, accepted=26))
    assert state.steps() == 13 and state.spec_reported
    assert state.draft_n is None and state.draft_n_accepted is None  # no count to read, none invented


def test_incremental_text_is_appended():
    body = b'data: {"text": "ab", "meta_info": {"completion_tokens": 1}}\n\ndata: {"text": "cd", "meta_info": {"completion_tokens": 2}}\n\n'
    assert replay(body).text == "abcd"


def test_a_mistyped_meta_info_is_one_clear_error():
    with pytest.raises(SpectopError, match="spec_verify_ct"):
        replay(b'data: {"text": "a", "meta_info": {"spec_verify_ct": "13"}}\n\n')


def test_the_completion_route_to_sglang_is_its_native_generate():
    spec = RequestSpec(prompt="hi", max_tokens=40, route="completion", dialect="sglang", ignore_eos=True)
    path, body = request_body(spec)
    assert path == "/generate"
    assert body == {
        "text": "hi",
        "sampling_params": {"max_new_tokens": 40, "temperature": spec.temperature, "ignore_eos": True},
        "stream": True,
    }


async def test_a_request_record_carries_the_servers_counts():
    def answer(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/generate"
        body = generate_stream("0.5.11", COUNTS, verify=13, accepted=26)
        return httpx.Response(200, content=body, headers={"Content-Type": "text/event-stream"})

    spec = RequestSpec(prompt="hi", max_tokens=40, route="completion", dialect="sglang")
    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
        record = await stream_request(client, "http://sglang:30000", spec)
    assert (record.draft_n, record.draft_n_accepted, record.server_steps) == (39, 26, 13)
