"""Every capture of the real llama-server goes through spectop's own parsers and says what it should."""

from __future__ import annotations

import json

import pytest

from collectors import promtext
from collectors.requests import streams
from collectors.servers.llamacpp import collector as llamacpp
from collectors.servers.llamacpp import stream as llamacpp_stream
from tests.support.captures import FIXTURES, read_json, read_text

FILES = sorted(p.name for p in FIXTURES.iterdir() if p.name != "README.md")


def prefix_of(name: str) -> str:
    return name.split(".")[0]


def check_metrics(name: str) -> None:
    raw = llamacpp.RawPoll(0.0, metrics=promtext.parse(read_text(name)))
    assert raw.metric("n_decode_total") >= 0 and raw.metric("requests_processing") is not None
    drafted = raw.metric("spec_decode_num_draft_tokens_total")
    if prefix_of(name) == "draft-simple":
        assert drafted > 0 and sum(raw.per_position()) == raw.metric("spec_decode_num_accepted_tokens_total")
    else:
        assert drafted == 0 and raw.per_position() == ()


def check_slots(name: str) -> None:
    slots = llamacpp.RawPoll(0.0, slots=read_json(name)).slot_states()
    assert len(slots) == 4
    assert any(s.busy for s in slots.values()) == name.endswith("busy.json")
    assert {s["speculative"] for s in read_json(name)} == {prefix_of(name) == "draft-simple"}


def check_props(name: str) -> None:
    snap = llamacpp.derive(None, llamacpp.RawPoll(0.0, props=read_json(name)), "http://x")
    assert snap.model == "tiny-target.gguf" and snap.slots_total == 4 and snap.build


def check_models(name: str) -> None:
    assert read_json(name)["data"][0]["id"] == read_json(f"{prefix_of(name)}.props.json")["model_alias"]


def check_health(name: str) -> None:
    assert read_json(name) == {"status": "ok"}


def check_answer(name: str) -> None:
    state = streams.StreamState()
    body = read_json(name)
    (streams.feed_native if name.endswith("completion.json") else streams.feed_openai)(state, 0.0, body)
    assert state.committed_tokens == body.get(
        "tokens_predicted", body.get("usage", {}).get("completion_tokens")
    )
    assert state.text and (state.draft_n is not None) == (prefix_of(name) == "draft-simple")


def check_stream(name: str) -> None:
    state = streams.StreamState()
    for line in read_text(name).splitlines():
        row = json.loads(line)
        streams.feed_line(state, row["t_s"], row["line"], native="completion" in name)
    assert state.done and state.error is None and state.committed_tokens == 48


def check_concurrent(name: str) -> None:
    states = []
    for timings in read_json(name).values():
        state = streams.StreamState()
        llamacpp_stream.take_timings(state, timings)
        states.append(state)
    assert len(states) == 4 and all(s.committed_tokens for s in states)
    drafting = [s.draft_n is not None for s in states]
    assert all(drafting) if prefix_of(name) == "draft-simple" else not any(drafting)


CHECKS = {
    ".metrics.": check_metrics,
    ".slots.": check_slots,
    ".props.": check_props,
    ".models.": check_models,
    ".health.": check_health,
    ".completion.json": check_answer,
    ".chat.json": check_answer,
    ".sse.jsonl": check_stream,
    ".concurrent.": check_concurrent,
}


def test_every_file_has_a_check():
    assert len(FILES) == 39
    assert all(any(key in name for key in CHECKS) for name in FILES)


@pytest.mark.parametrize("name", FILES)
def test_fixture(name):
    for key, check in CHECKS.items():
        if key in name:
            check(name)
            return
    pytest.fail(f"no parser for {name}")
