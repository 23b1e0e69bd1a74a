"""llama-server's window figures: G over every step (T − R − A, R from /slots), checked against
each request's own timings in the real captures; counters printed rounded past 10⁶; --no-slots;
a request finishing between the /slots and /metrics reads."""

from __future__ import annotations

import json

import httpx
import pytest

from collectors import promtext
from collectors.energy import ledger
from collectors.servers.base import WindowDelta, window_delta
from collectors.servers.llamacpp import collector as llamacpp
from collectors.servers.llamacpp.slots import finished_requests, slot_states
from collectors.sweep import checks
from tests.support.captures import read_json, sse_lines
from tests.support.polls import llama_at as at
from tests.support.polls import llama_format
from tests.support.polls import llama_page as page
from tests.support.sweep_rows import as_point

URL = "http://127.0.0.1:8080"
# the captures' two windows: before → busy ran the four 48-token requests of the completion and
# chat captures, busy → after the four concurrent ones (metrics: +192 / +347 tokens)
FIRST_FOUR = ("completion", "chat", "completion.sse", "chat.sse")


def slots(*tasks: tuple[int | None, bool]) -> list[dict]:
    """A /slots answer: one slot per (task id, busy)."""
    return [
        {"id": i, "id_task": task, "is_processing": busy, "next_token": [{"n_decoded": 5 if busy else 0}]}
        for i, (task, busy) in enumerate(tasks)
    ]


def poll(metrics: str, slot_list: list[dict] | None, t_s: float) -> llamacpp.RawPoll:
    return llamacpp.RawPoll(
        t_s,
        props=read_json("draft-simple.props.json"),
        slots=slot_list,
        metrics=promtext.parse(metrics),
    )


def final_timings(name: str) -> dict:
    """A capture's final `timings`, read straight from the file."""
    if not name.endswith(".sse"):
        return read_json(f"draft-simple.{name}.json")["timings"]
    lines = [line[5:] for _, line in sse_lines(f"draft-simple.{name}.jsonl") if line.startswith("data: {")]
    return [p["timings"] for p in map(json.loads, lines) if "timings" in p][-1]


def own_steps(timings: dict) -> int:
    """A request's decode steps from its own counts: tokens after the first, less accepted drafts."""
    return timings["predicted_n"] - 1 - timings.get("draft_n_accepted", 0)


def test_g_counts_every_step_of_the_finished_requests():
    # four busy slots at the first poll went idle on the same tasks: exactly 4 requests finished
    snap = llamacpp.derive(
        poll(page("before"), slots((1, True), (2, True), (3, True), (4, True)), 0.0),
        poll(page("busy"), slots((1, False), (2, False), (3, False), (4, False)), 1.0),
        URL,
    )
    timings = [final_timings(name) for name in FIRST_FOUR]
    assert snap.window_finished == 4 and snap.window_steps_exact and not snap.window_approximate
    assert snap.window_steps == sum(own_steps(t) for t in timings) == 32 + 30 + 32 + 30
    accepted = sum(t["draft_n_accepted"] for t in timings)
    assert snap.window_accepted == accepted == 64
    assert snap.mean_advance == pytest.approx(1 + 64 / 124)


def test_p_min_steps_that_drafted_nothing_count_in_g_and_survival():
    # --spec-draft-p-min 0.5: the four concurrent requests drafted on 75 of their 264 steps
    snap = llamacpp.derive(
        poll(page("busy"), slots((5, True), (6, True), (7, True), (8, True)), 0.0),
        poll(page("after"), slots((5, False), (6, False), (7, False), (8, False)), 1.0),
        URL,
    )
    concurrent = read_json("draft-simple.concurrent.timings.json").values()
    assert snap.window_steps == sum(own_steps(t) for t in concurrent) == 7 + 25 + 35 + 197
    assert snap.window_drafted_steps == 208 - 133
    assert snap.mean_advance == pytest.approx(1 + 79 / 264)  # 1.30, where drafted steps read 2.05
    assert snap.advance_per_drafted_step == pytest.approx(1 + 79 / 75)
    assert snap.verified_width == pytest.approx(1 + 101 / 264)
    # S_j over the same steps: 1 + Σ S_j is G, and the first position is 66 of 264 steps, not of 75
    assert snap.survival == pytest.approx((66 / 264, 12 / 264, 1 / 264, 0.0))
    assert 1 + sum(snap.survival) == pytest.approx(snap.mean_advance)


def test_a_window_without_finished_requests_shows_no_lifetime_figures():
    same = slots((9, True))
    snap = llamacpp.derive(poll(page("after"), same, 0.0), poll(page("after"), same, 1.0), URL)
    assert snap.window_drafted == 0 and snap.window_steps == 0
    assert snap.acceptance is None and snap.mean_advance is None and snap.survival == ()
    assert snap.acceptance_lifetime == pytest.approx(216 / 277)


@pytest.mark.parametrize(
    ("before", "after", "count", "exact"),
    [
        ([(7, True)], [(7, True)], 0, True),  # still running
        ([(7, True)], [(7, False)], 1, True),  # finished
        ([(7, False)], [(7, False)], 0, True),  # idle throughout
        ([(7, True)], [(9, True)], 1, False),  # 7 finished, 9 began, others may have run between
        ([(7, False)], [(9, False)], 1, False),  # 9 ran entirely between the polls
        ([(7, True)], [(9, False)], 2, False),
        ([(None, False)], [(None, False)], 0, True),  # never used
    ],
)
def test_finished_requests_from_slots(before, after, count, exact):
    assert finished_requests(slot_states(slots(*before)), slot_states(slots(*after))) == (count, exact)


def test_without_slots_live_tokens_are_a_lower_bound_and_g_is_unknown():
    snap = llamacpp.derive(poll(page("before"), None, 0.0), poll(page("busy"), None, 2.0), URL)
    assert snap.window_tokens == 616 - 424  # finished requests only
    assert snap.live_tok_s == pytest.approx(192 / 2.0) and not snap.live_tok_s_exact
    assert snap.window_finished is None and snap.window_steps is None and snap.mean_advance is None
    assert snap.acceptance == pytest.approx(64 / 72)  # drafted and accepted need no /slots
    assert snap.advance_per_drafted_step == pytest.approx(1 + 64 / 36)


def test_the_formatting_is_llama_servers():
    assert llama_format(1234567) == "1.23457e+06" and llama_format(424) == "424"
    assert "llamacpp:tokens_predicted_total 2.00042e+06" in at(page("before"), tokens_predicted_total=2000424)


def test_a_small_window_on_rounded_counters_is_unknown_not_100_percent():
    # one request: 48 tokens, 19 drafted, 15 accepted, on a server past 2·10⁶ of each
    base = dict(
        tokens_predicted_total=2_000_424,
        spec_decode_num_draft_tokens_total=2_000_104,
        spec_decode_num_accepted_tokens_total=2_000_073,
    )
    after = {k: v + d for (k, v), d in zip(base.items(), (48, 19, 15), strict=True)}
    prev = poll(at(page("before"), **base), slots((1, True)), 0.0)
    cur = poll(at(page("before"), **after), slots((1, False)), 1.0)
    # as printed: 2000420 → 2000470, 2000100 → 2000120, 2000070 → 2000090: 20 drafted, 20 accepted
    assert cur.metric("spec_decode_num_accepted_tokens_total") - prev.metric(
        "spec_decode_num_accepted_tokens_total"
    ) == pytest.approx(20)
    snap = llamacpp.derive(prev, cur, URL)
    assert snap.counters_rounded and snap.window_approximate
    assert snap.window_drafted is None and snap.window_accepted is None
    assert snap.acceptance is None and snap.mean_advance is None
    assert not snap.live_tok_s_exact  # the finished request's tokens are ± 10


def test_a_large_window_on_rounded_counters_is_kept_as_approximate():
    base = dict(spec_decode_num_draft_tokens_total=2_000_104, spec_decode_num_accepted_tokens_total=2_000_073)
    after = dict(
        spec_decode_num_draft_tokens_total=2_004_104, spec_decode_num_accepted_tokens_total=2_003_073
    )
    snap = llamacpp.derive(
        poll(at(page("before"), **base), slots((1, True)), 0.0),
        poll(at(page("before"), **after), slots((1, True)), 1.0),
        URL,
    )
    assert snap.counters_rounded and snap.window_approximate
    assert snap.acceptance == pytest.approx(3000 / 4000, rel=0.01)  # ± 10 on 4000 and 3000


def collector_on(pages: list[str], slot_answers: list[list[dict]]) -> llamacpp.LlamaCppCollector:
    pages_left, slots_left = iter(pages), iter(slot_answers)

    def handler(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path == "/metrics":
            return httpx.Response(200, text=next(pages_left))
        if path == "/slots":
            return httpx.Response(200, json=next(slots_left))
        if path == "/props":
            return httpx.Response(200, json=read_json("draft-simple.props.json"))
        return httpx.Response(200, json={"status": "ok"})

    return llamacpp.LlamaCppCollector(URL, client=httpx.AsyncClient(transport=httpx.MockTransport(handler)))


async def test_a_request_finishing_between_the_reads_makes_the_window_approximate():
    running = slots((1, True), (2, True), (3, True), (4, True))
    done = slots((1, False), (2, False), (3, False), (4, False))
    # /metrics is read with /slots and once more after: equal reads, then a finish between them
    collector = collector_on(
        [page("before"), page("before"), page("busy"), page("busy"), page("busy"), page("after")],
        [running, done, done],
    )
    first, second, third = [await collector.poll() for _ in range(3)]
    assert first.window_s is None
    assert second.window_steps == 124 and second.window_steps_exact
    assert not third.window_steps_exact and third.window_approximate
    await collector.aclose()


def test_steps_fewer_than_the_drafted_ones_mean_the_reads_disagree():
    # /slots saw 5 requests finish but /metrics counted 100 tokens with 90 accepted over 10 drafted
    # steps: 100 - 5 - 90 = 5 steps, fewer than drafted: impossible, so unknown
    prev = poll(page("before"), slots(*[(i, True) for i in range(5)]), 0.0)
    grown = at(
        page("before"),
        tokens_predicted_total=424 + 100,
        spec_decode_num_accepted_tokens_total=73 + 90,
        spec_decode_num_drafts_total=97 + 10,
    )
    cur = poll(grown, slots(*[(i, False) for i in range(5)]), 1.0)
    snap = llamacpp.derive(prev, cur, URL)
    assert snap.window_finished == 5 and snap.window_drafted_steps == 10
    assert snap.window_steps is None and snap.mean_advance is None


def test_steps_from_rounded_tokens_are_unknown_when_the_rounding_could_swamp_them():
    # tokens past 2·10⁶ (± 10 over the window), accepted below 10⁶ (exact): 60 − 1 − 20 = 39 ± 10
    prev = poll(at(page("before"), tokens_predicted_total=2_000_424), slots((1, True)), 0.0)
    grown = at(page("before"), tokens_predicted_total=2_000_484, spec_decode_num_accepted_tokens_total=93)
    snap = llamacpp.derive(prev, poll(grown, slots((1, False)), 1.0), URL)
    assert snap.window_accepted == 20 and snap.window_finished == 1
    assert snap.window_steps is None and snap.counters_rounded


async def test_window_counters_at_2e6_give_the_sweep_its_tolerance():
    values = dict(tokens_predicted_total=2_000_424, spec_decode_num_draft_tokens_total=104)
    pages = iter(
        [at(page("before"), **values), at(page("before"), **(values | {"tokens_predicted_total": 2_000_472}))]
    )

    def metrics(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text=next(pages))

    collector = llamacpp.LlamaCppCollector(
        URL, client=httpx.AsyncClient(transport=httpx.MockTransport(metrics))
    )
    window = window_delta(await collector.window_counters(), await collector.window_counters())
    # printed 2.00042e+06 and 2.00047e+06: 50 read for 48 generated, each read ± 5
    assert window.tokens == 50 and window.tokens_tolerance == 10 and window.rounded
    row = {"server_tokens": window.tokens, "server_tokens_tolerance": window.tokens_tolerance}
    assert checks.other_traffic_flag(as_point(row | {"committed_tokens": 48})) is None
    assert checks.other_traffic_flag(as_point(row | {"committed_tokens": 24})) is not None


@pytest.mark.parametrize(("decodes", "expected"), [(300, None), (3000, pytest.approx(1.0, abs=0.01))])
def test_busy_per_decode_past_2e6_decodes_is_kept_only_when_rounding_cannot_swamp_it(decodes, expected):
    # one slot busy on every decode of the window; Σ busy = mean × n_decode, the mean printed with
    # 6 digits (± 10 busy-decodes at 2·10⁶) and n_decode too (± 5 each read)
    before = dict(n_decode_total=2_000_000, n_busy_slots_per_decode=1.5)
    total = 2_000_000 + decodes
    after = dict(n_decode_total=total, n_busy_slots_per_decode=(3_000_000 + decodes) / total)
    snap = llamacpp.derive(
        poll(at(page("before"), **before), slots((1, True)), 0.0),
        poll(at(page("before"), **after), slots((1, True)), 1.0),
        URL,
    )
    assert snap.busy_slots_per_decode == expected


def test_every_step_count_over_both_capture_windows():
    # before → after: 8 requests, 539 tokens, 143 accepted; their own timings sum to 124 + 264 steps
    timings = [final_timings(name) for name in FIRST_FOUR]
    timings += read_json("draft-simple.concurrent.timings.json").values()
    assert ledger.every_step_count(539, 143, 8) == sum(own_steps(t) for t in timings) == 388


@pytest.mark.parametrize("name", ["tokens", "drafted", "accepted", "steps", "drafted_steps"])
def test_any_one_rounded_count_makes_the_window_approximate(name):
    # each count alone: a rounding error of half a token in it is enough; none anywhere is exact
    assert WindowDelta(errors={name: 0.5}).rounded
    assert not WindowDelta(errors={name: 0.0}).rounded
    assert WindowDelta(errors={name: 0.5}).tokens_tolerance == (1 if name == "tokens" else 0)


def test_a_dialect_without_rounding_errors_is_exact():
    # vLLM's and SGLang's windows carry no errors at all
    assert not WindowDelta(tokens=10).rounded and WindowDelta(tokens=10).tokens_tolerance == 0


async def test_a_page_read_twice_unchanged_is_parsed_once(monkeypatch):
    """A poll reads /metrics twice (a request may finish between the reads); on a real server under
    two streams the two reads were the same page 17 times in 40, and the second parse was a poll's
    largest single cost. Of a page read again unchanged nothing is parsed (promtext.PageBlocks); of
    one whose values moved, nothing either (its lines' values are read alone), and its counters are
    the poll's."""
    from collectors import promtext

    parsed: list[str] = []
    real = promtext.text_string_to_metric_families
    monkeypatch.setattr(
        promtext, "text_string_to_metric_families", lambda text: (parsed.append(text), real(text))[1]
    )
    running = slots((1, True), (2, True), (3, True), (4, True))
    done = slots((1, False), (2, False), (3, False), (4, False))
    collector = collector_on([page("before"), page("before"), page("busy"), page("after")], [running, done])
    first = await collector.poll()
    # every family once (and once more with other values, to learn its shape): the second read
    # parsed nothing
    assert "".join(text for text in parsed if text in page("before")) == page("before")
    assert len(parsed) == 2 * page("before").count("# HELP")
    parsed.clear()
    second = await collector.poll()
    assert parsed == []  # the later pages moved only values: read without the parser
    assert second.tokens_predicted_total == 963  # the later page's ("after"), not "busy"'s 616
    assert not second.window_steps_exact  # the later page's counters are the poll's, and the reads disagree
    assert first.window_s is None
    await collector.aclose()
