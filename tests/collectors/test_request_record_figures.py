"""A request's own figures (RequestRecord's properties), stated by hand on records built by hand;
each assertion kills a one-line break of the property that mutmut itself cannot reach
(tests/mutation/properties.py)."""

from __future__ import annotations

import dataclasses

import pytest

from collectors.requests import latency
from collectors.requests.record import RequestRecord


def made(bursts: tuple[int, ...], t_send_s: float = 10.0, t_done_s: float = 12.5, **counts) -> RequestRecord:
    """Tokens in `bursts` (the first from prefill), 0.1 s apart from t_send + 0.5 s."""
    events = tuple(latency.ChunkEvent(t_send_s + 0.5 + 0.1 * i, n) for i, n in enumerate(bursts))
    return RequestRecord(
        request_id="r",
        server_url="http://s",
        route="/completion",
        t_send_s=t_send_s,
        t_done_s=t_done_s,
        events=events,
        latency=latency.profile(events, t_send_s, drafting=True),
        committed_tokens=sum(bursts),
        **counts,
    )


def test_duration_and_rates_over_the_request_and_after_its_first_token():
    r = made((1, 3, 2, 4))  # 10 tokens, sent at 10.0, done at 12.5, first token at 10.5
    assert r.duration_s == pytest.approx(2.5)
    assert r.tok_s == pytest.approx(10 / 2.5)
    assert r.decode_tok_s == pytest.approx(9 / 2.0)  # nine tokens after the first, over 2.5 - 0.5 s
    two = made((1, 1), t_done_s=11.0)  # two tokens: one after the first, over 1.0 - 0.5 s
    assert two.decode_tok_s == pytest.approx(1 / 0.5)
    assert made((1,)).decode_tok_s is None  # one token: nothing after the first
    last_is_first = made((2,), t_done_s=10.5)  # both tokens in the first event, at the end: no decode time
    assert last_is_first.decode_tok_s is None
    instant = made((1, 1), t_done_s=10.0)
    assert instant.tok_s is None and instant.decode_tok_s is None  # no time: no rate, not a crash


def test_drafted_is_whether_the_server_drafted_anything():
    assert made((1, 2), draft_n=4).drafted is True
    assert made((1, 2), draft_n=0).drafted is False and made((1, 2)).drafted is False


def test_acceptance_needs_both_counts():
    assert made((1, 3), draft_n=10, draft_n_accepted=7).acceptance == pytest.approx(0.7)
    assert made((1, 3), draft_n=10).acceptance is None
    assert made((1, 3), draft_n_accepted=7).acceptance is None
    assert made((1, 3)).acceptance is None


def test_steps_and_g_from_bursts_without_the_servers_counts():
    r = made((1, 3, 1, 4))  # three steps after prefill, committing 3, 1 and 4: 5 accepted drafts
    assert not r.steps_exact and r.steps == 3
    assert r.mean_advance == pytest.approx(1 + (8 - 3) / 3)
    assert r.verified_width is None  # drafted positions are unknown without counts
    assert made((1,)).steps == 0 and made(()).steps == 0


def test_steps_and_g_from_the_servers_counts():
    r = made((1, 3, 2, 4), draft_n=12, draft_n_accepted=6, server_steps=3)
    assert r.steps_exact and r.steps == 3
    assert r.mean_advance == pytest.approx(1 + 6 / 3) and r.verified_width == pytest.approx(1 + 12 / 3)
    again = dataclasses.replace(r, server_steps=4)  # the server's count wins over the bursts'
    assert again.steps == 4 and again.mean_advance == pytest.approx(1 + 6 / 4)
    nothing_accepted = dataclasses.replace(r, draft_n_accepted=None)  # counted steps, no acceptances
    assert nothing_accepted.mean_advance == pytest.approx(1.0)
