"""Captured streams of a real llama-server parse into the server's own counts."""

from __future__ import annotations

import pytest

from collectors.requests import latency, streams
from tests.support.captures import PREFIXES, read_json, sse_lines


def replay(name: str, native: bool) -> streams.StreamState:
    state = streams.StreamState()
    for t_s, line in sse_lines(name):
        streams.feed_line(state, t_s, line, native)
    return state


@pytest.mark.parametrize("prefix", PREFIXES)
def test_native_stream_counts_match_timings(prefix):
    state = replay(f"{prefix}.completion.sse.jsonl", native=True)
    assert state.done and state.error is None
    assert state.committed_tokens == 48
    # events can carry two tokens (incomplete UTF-8), so the sum, not the count, matches
    assert sum(e.n_tokens for e in state.events) == state.committed_tokens
    assert state.model == "tiny-target.gguf"
    assert state.finish_reason == "limit"
    if prefix == "draft-simple":
        assert (state.draft_n, state.draft_n_accepted) == (19, 15)
    else:
        assert state.draft_n is None


def test_draft_stream_bursts_give_verify_steps():
    state = replay("draft-simple.completion.sse.jsonl", native=True)
    prof = latency.profile(state.events, 0.0, drafting=True)
    # 48 tokens = 1 from prefill + 32 steps committing 1 + accepted each; 15 accepted in all
    assert sum(prof.burst_sizes) == 48
    assert len(prof.burst_sizes) - 1 == 32
    assert sum(size - 1 for size in prof.burst_sizes[1:]) == state.draft_n_accepted


@pytest.mark.parametrize("prefix", ["plain", "void"])
def test_plain_streams_have_one_token_steps(prefix):
    state = replay(f"{prefix}.completion.sse.jsonl", native=True)
    prof = latency.profile(state.events, 0.0, drafting=False)
    assert prof.burst_sizes == tuple(e.n_tokens for e in state.events)


@pytest.mark.parametrize("prefix", PREFIXES)
def test_chat_stream_takes_usage_and_timings(prefix):
    state = replay(f"{prefix}.chat.sse.jsonl", native=False)
    assert state.done and state.error is None
    assert state.committed_tokens == 48
    assert state.finish_reason == "length"
    # without timings_per_token a chat stream has no per-chunk counts: say so
    assert not state.tokens_per_event_exact
    assert 0 < sum(e.n_tokens for e in state.events) <= 48
    if prefix == "draft-simple":
        assert (state.draft_n, state.draft_n_accepted) == (17, 17)
    else:
        assert state.draft_n is None


@pytest.mark.parametrize("prefix", PREFIXES)
def test_text_hash_equals_non_stream_content(prefix):
    # The streamed text is the non-streamed content of an identical request at temperature 0.
    state = replay(f"{prefix}.completion.sse.jsonl", native=True)
    assert state.text == read_json(f"{prefix}.completion.json")["content"]


def test_timings_per_token_gives_exact_step_keys():
    # Events of one verify step share predicted_ms (collectors/docs/servers.md, llama-server).
    state = streams.StreamState()
    lines = [
        (
            0.000,
            {"content": "a", "tokens_predicted": 1, "timings": {"predicted_ms": 0.001, "predicted_n": 1}},
        ),
        (0.005, {"content": "b", "tokens_predicted": 2, "timings": {"predicted_ms": 5.4, "predicted_n": 2}}),
        (0.006, {"content": "c", "tokens_predicted": 3, "timings": {"predicted_ms": 5.4, "predicted_n": 3}}),
        (0.011, {"content": "d", "tokens_predicted": 4, "timings": {"predicted_ms": 11.1, "predicted_n": 4}}),
    ]
    import json

    for t_s, payload in lines:
        streams.feed_line(state, t_s, "data: " + json.dumps(payload), native=True)
    assert [len(b) for b in latency.split_bursts(state.events)] == [1, 2, 1]


def test_error_event_and_junk_are_reported():
    state = streams.StreamState()
    streams.feed_line(state, 0.0, 'data: {"error": {"code": 500, "message": "boom"}}', native=True)
    assert state.error == "boom" and state.done
    junk = streams.StreamState()
    streams.feed_line(junk, 0.0, "data: <html>", native=True)
    assert "not JSON" in junk.error
    ignored = streams.StreamState()
    for line in [":", "", "event: ping", "data: null"]:
        streams.feed_line(ignored, 0.0, line, native=True)
    assert ignored.events == [] and ignored.error is None


def test_vllm_and_sglang_spec_details():
    vllm = streams.StreamState()
    streams.feed_openai(
        vllm,
        0.0,
        {
            "choices": [],
            "usage": {"completion_tokens": 100, "prompt_tokens": 9},
            "metrics": {
                "speculative_decoding": {
                    "num_draft_tokens": 90,
                    "num_accepted_draft_tokens": 60,
                    "num_spec_steps": 30,
                }
            },
        },
    )
    assert (vllm.draft_n, vllm.draft_n_accepted, vllm.drafted_steps, vllm.committed_tokens) == (
        90,
        60,
        30,
        100,
    )
    # num_spec_steps counts the steps that drafted; every step: 99 tokens after the first, 60 accepted
    assert vllm.steps() == 100 - 1 - 60
    sglang = streams.StreamState()
    streams.feed_openai(
        sglang,
        0.0,
        {
            "choices": [],
            "sglext": {
                "spec_tokens_details": {
                    "spec_verify_ct": 20,
                    "spec_num_correct_drafts": 25,
                    "spec_num_proposed_drafts": 60,
                }
            },
        },
    )
    assert (sglang.draft_n, sglang.draft_n_accepted, sglang.steps()) == (60, 25, 20)  # every verify pass


def test_vllm_steps_are_never_fewer_than_the_steps_that_drafted():
    # the last step accepted drafts past max_tokens: they count as accepted, not as committed
    state = streams.StreamState()
    metrics = {"num_draft_tokens": 90, "num_accepted_draft_tokens": 70, "num_spec_steps": 30}
    streams.feed_openai(
        state,
        0.0,
        {"choices": [], "usage": {"completion_tokens": 100}, "metrics": {"speculative_decoding": metrics}},
    )
    assert state.steps() == 30


@pytest.mark.parametrize(
    ("name", "native", "steps", "bursts"),
    [
        ("draft-simple.completion", True, 48 - 1 - 15, 32),
        ("draft-simple.chat", False, 48 - 1 - 17, 27),  # chat events carry no token counts
        ("plain.chat", False, 48 - 1, 44),  # nothing drafted: one token per step
    ],
)
def test_llama_server_steps_come_from_its_timings_not_from_bursts(name, native, steps, bursts):
    state = streams.StreamState()
    for t_s, line in sse_lines(f"{name}.sse.jsonl"):
        streams.feed_line(state, t_s, line, native=native)
    assert state.spec_reported and state.steps() == steps
    profile = latency.profile(state.events, 0.0, drafting=bool(state.draft_n))
    assert len(profile.burst_sizes) - 1 == bursts  # what the stream's gaps alone would say


def test_a_stream_without_the_servers_counts_has_no_steps():
    state = streams.StreamState()
    streams.feed_openai(
        state, 0.0, {"choices": [{"delta": {"content": "hi"}}], "usage": {"completion_tokens": 1}}
    )
    assert not state.spec_reported and state.steps() is None


def test_vllm_continuous_usage_counts_multi_token_chunks():
    state = streams.StreamState()
    for t_s, text, cumulative in [(0.1, "Hello", 1), (0.2, " big world", 3), (0.3, "!", 4)]:
        streams.feed_openai(
            state,
            t_s,
            {"choices": [{"delta": {"content": text}}], "usage": {"completion_tokens": cumulative}},
        )
    assert [e.n_tokens for e in state.events] == [1, 2, 1]
    assert state.tokens_per_event_exact


def feed(native: bool, *payloads: dict, t0: float = 0.0) -> streams.StreamState:
    import json

    state = streams.StreamState()
    for i, payload in enumerate(payloads):
        streams.feed_line(state, t0 + i / 100, "data: " + json.dumps(payload), native=native)
    return state


def test_native_stream_keeps_the_servers_counts_and_prompt():
    state = replay("draft-simple.completion.sse.jsonl", native=True)
    assert state.tokens_per_event_exact is True and len(state.events) == 48
    assert state.prompt_tokens == 57  # tokens_evaluated of the stop event (timings: 1 new + 56 cached)
    # the stop event can carry the last text; its count comes from tokens_predicted, and so does a 2-token event
    state = feed(
        True,
        {"content": "a", "tokens_predicted": 1},
        {"content": "bc", "tokens_predicted": 3, "timings": {"predicted_ms": 7.5}},
        {
            "content": "!",
            "tokens_predicted": 4,
            "stop": True,
            "stop_type": "word",
            "timings": {"predicted_ms": 9.0},
        },
    )
    assert [(e.n_tokens, e.step_key) for e in state.events] == [(1, None), (2, 7.5), (1, 9.0)]
    assert state.tokens_per_event_exact is True and state.text == "abc!"
    # a stop event without content adds no text
    assert (
        feed(True, {"content": "a", "tokens_predicted": 1}, {"stop": True, "tokens_predicted": 1}).text == "a"
    )


def test_one_token_request_has_no_step_and_accepted_past_the_end_gives_none_below_zero():
    one = feed(True, {"stop": True, "content": "a", "tokens_predicted": 1, "timings": {"predicted_n": 1}})
    assert one.spec_reported and one.steps() == 0
    past_end = streams.StreamState(committed_tokens=1, draft_n=8, draft_n_accepted=5, spec_reported=True)
    assert past_end.steps() == 0


def test_timings_give_prompt_tokens_and_accepted_defaults_to_none_accepted():
    state = feed(
        False,
        {
            "choices": [{"delta": {"content": "a"}}],
            "timings": {"predicted_n": 1, "prompt_n": 4, "cache_n": 40},
        },
        {
            "choices": [{"delta": {"content": "b"}}],
            "timings": {"predicted_n": 2, "prompt_n": 4, "cache_n": 40},
        },
        {"choices": [], "timings": {"predicted_n": 2, "draft_n": 3}},
    )
    assert state.prompt_tokens == 44 and (state.draft_n, state.draft_n_accepted) == (3, 0)
    assert state.tokens_per_event_exact and [e.n_tokens for e in state.events] == [1, 1]
    assert feed(False, {"choices": [], "timings": {"predicted_n": 2, "prompt_n": 4}}).prompt_tokens == 4


def test_openai_chunks_model_text_usage_and_step_keys():
    state = feed(
        False,
        {
            "model": "m",
            "choices": [{"delta": {"reasoning_content": "think"}}],
            "timings": {"predicted_n": 1, "predicted_ms": 2.5},
        },
        {"choices": [{"text": "done"}, {"text": "!"}], "usage": {"completion_tokens": 3, "prompt_tokens": 9}},
        {"choices": [], "usage": {"completion_tokens": 3}},
    )
    assert state.model == "m"  # chunks without a model keep it
    assert state.text == "thinkdone!"
    assert state.events[0].step_key == 2.5
    assert (state.committed_tokens, state.prompt_tokens) == (3, 9)
    chat = replay("draft-simple.chat.sse.jsonl", native=False)
    assert chat.model == "tiny-target.gguf" and chat.tokens_per_event_exact is False


def test_vllm_and_sglang_details_without_every_field_read_as_zero():
    vllm = feed(False, {"choices": [], "metrics": {"speculative_decoding": {"num_spec_steps": 2}}})
    assert vllm.spec_reported and (vllm.draft_n, vllm.draft_n_accepted, vllm.drafted_steps) == (0, 0, 2)
    vllm = feed(False, {"choices": [], "metrics": {"speculative_decoding": {"num_draft_tokens": 3}}})
    assert (vllm.draft_n, vllm.drafted_steps) == (3, 0)
    sglang = feed(False, {"choices": [], "sglext": {"spec_tokens_details": {"spec_verify_ct": 7}}})
    assert sglang.spec_reported is True and (sglang.draft_n, sglang.draft_n_accepted) == (0, 0)
    zero = feed(False, {"choices": [], "sglext": {"spec_tokens_details": {"spec_num_correct_drafts": 1}}})
    assert zero.verify_steps == 0


def test_errors_and_lines_without_a_space():
    state = streams.StreamState()
    streams.feed_line(state, 0.0, 'data: {"error": {"message": "overloaded"}}', native=False)
    assert state.error == "overloaded" and state.done
    state = streams.StreamState()
    streams.feed_line(state, 0.0, 'data: {"error": "plain text"}', native=False)
    assert state.error == "plain text"
    tight = streams.StreamState()
    streams.feed_line(tight, 0.0, 'data:{"content":"a","tokens_predicted":1}', native=True)
    assert tight.text == "a" and tight.error is None
    junk = streams.StreamState()
    streams.feed_line(junk, 0.0, "data: " + "x" * 100, native=True)
    assert junk.error == "server sent a line that is not JSON: " + repr("x" * 80)


def test_native_prompt_tokens_from_tokens_evaluated_and_events_without_content():
    state = feed(True, {"tokens_predicted": 0}, {"stop": True, "tokens_predicted": 0, "tokens_evaluated": 57})
    assert state.prompt_tokens == 57 and state.text == "" and state.events == []
