"""What the simulated server does, beyond its shapes: counters, slots, bursts, determinism."""

from __future__ import annotations

import contextlib
import json
import statistics
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from collectors.simulator import Simulator
from tests.support.manual_clock import ManualClock, run_until, ticking
from tests.support.simulator_clients import PROMPT, data_events, families, metric, stream_lines

STALL_S = 0.01  # how far the manual clock moves at a time: a fraction of a step

SCALARS = (
    "tokens_predicted_total",
    "spec_decode_num_draft_tokens_total",
    "spec_decode_num_accepted_tokens_total",
    "spec_decode_num_drafts_total",
)


def _counters(client: httpx.Client, url: str) -> dict[str, float]:
    text = client.get(url + "/metrics").text
    return {name: metric(text, f"llamacpp:{name}") for name in SCALARS}


def _read_to(lines: Iterator[str], tokens_predicted: int) -> dict:
    """Consume a /completion stream up to the event of its `tokens_predicted`-th token."""
    for line in lines:
        if line.startswith("data: "):
            event = json.loads(line[6:])
            if event.get("stop") or event["tokens_predicted"] >= tokens_predicted:
                return event
    raise AssertionError("the stream ended early")


def test_counters_move_only_when_a_request_finishes_and_slots_grow_live(client: httpx.Client) -> None:
    clock = ManualClock()  # the request advances only as far as the test moves time
    with Simulator(seed=3, clock=clock) as sim:
        url, accel = sim.draft_url, sim.accelerator
        before = _counters(client, url)
        body = {"prompt": PROMPT, "n_predict": 160, "temperature": 0, "ignore_eos": True, "stream": True}
        seen: list[int] = []
        with (
            httpx.Client(timeout=30) as streamer,
            streamer.stream("POST", url + "/completion", json=body) as r,
        ):
            lines = r.iter_lines()
            for n in (20, 80):
                run_until(accel, clock, lambda n=n: sim.draft.live().committed_tokens >= n, STALL_S)
                assert _read_to(lines, n)["tokens_predicted"] == n
                assert _counters(client, url) == before  # nothing counted while streaming
                text = client.get(url + "/metrics").text
                assert metric(text, "llamacpp:requests_processing") == 1
                busy = [s for s in client.get(url + "/slots").json() if s["is_processing"]]
                assert len(busy) == 1 and busy[0]["next_token"][0]["has_next_token"] is True
                seen.append(busy[0]["next_token"][0]["n_decoded"])
            with ticking(accel, clock):
                final = _read_to(lines, 161)
        assert final["stop"] is True
        assert seen[0] >= 20 and seen[1] >= 80 and seen[1] > seen[0]  # n_decoded grows live
        after = _counters(client, url)
        timings = final["timings"]
        assert after["tokens_predicted_total"] - before["tokens_predicted_total"] == 160
        assert (
            after["spec_decode_num_draft_tokens_total"] - before["spec_decode_num_draft_tokens_total"]
            == timings["draft_n"]
        )
        assert (
            after["spec_decode_num_accepted_tokens_total"] - before["spec_decode_num_accepted_tokens_total"]
            == timings["draft_n_accepted"]
        )
        idle = [s for s in client.get(url + "/slots").json() if "id_task" in s]
        assert idle[0]["is_processing"] is False and idle[0]["next_token"][0]["n_decoded"] == 0


def test_metric_deltas_equal_the_sums_over_concurrent_requests(client: httpx.Client) -> None:
    clock = ManualClock()
    with Simulator(seed=5, clock=clock) as sim:
        url, accel = sim.draft_url, sim.accelerator
        with ticking(accel, clock):
            client.post(url + "/completion", json={"prompt": "warm", "n_predict": 8})
        text0 = client.get(url + "/metrics").text
        prompts = [PROMPT, "Write a haiku about voltage.", "Summarise Ohm's law.", PROMPT]
        body = {"n_predict": 96, "stream": True}
        with contextlib.ExitStack() as stack:
            # time stands still while the four arrive, so they all run before any finishes
            streams = [
                stack.enter_context(client.stream("POST", url + "/completion", json={**body, "prompt": p}))
                for p in prompts
            ]
            with ticking(accel, clock):
                results = [_read_to(r.iter_lines(), 97) for r in streams]
        text1 = client.get(url + "/metrics").text

        def delta(name: str) -> float:
            return metric(text1, f"llamacpp:{name}") - metric(text0, f"llamacpp:{name}")

        assert delta("tokens_predicted_total") == sum(r["tokens_predicted"] for r in results) == 4 * 96
        assert delta("spec_decode_num_draft_tokens_total") == sum(r["timings"]["draft_n"] for r in results)
        accepted = sum(r["timings"]["draft_n_accepted"] for r in results)
        assert delta("spec_decode_num_accepted_tokens_total") == accepted

        def positions(text: str) -> list[float]:
            fam = families(text)["llamacpp:spec_decode_num_accepted_tokens_per_pos"]
            return [s.value for s in sorted(fam.samples, key=lambda s: int(s.labels["position"]))]

        per_pos = [b - a for a, b in zip(positions(text0), positions(text1))]
        assert len(per_pos) == 4 and sum(per_pos) == accepted
        assert per_pos == sorted(per_pos, reverse=True)  # survival never grows with position
        steps = delta("spec_decode_num_drafts_total")
        assert 0 < steps <= 4 * 96
        decodes = delta("n_decode_total")
        busy = metric(text1, "llamacpp:n_busy_slots_per_decode") * metric(
            text1, "llamacpp:n_decode_total"
        ) - metric(text0, "llamacpp:n_busy_slots_per_decode") * metric(text0, "llamacpp:n_decode_total")
        # a request is in one step for its prompt and one per verify, each committing 1 + accepted:
        # n - A steps of its n tokens. The mean per decode is printed with 6 significant digits.
        assert busy == pytest.approx(4 * 96 - accepted, rel=1e-5)
        assert 1.0 < busy / decodes <= 4.0  # requests overlapped on the server


def test_requests_beyond_the_slots_are_deferred(client: httpx.Client) -> None:
    clock = ManualClock()  # no request finishes until the test moves time
    with Simulator(seed=1, total_slots=2, clock=clock) as sim:
        url, accel = sim.plain_url, sim.accelerator
        assert client.get(url + "/props").json()["total_slots"] == 2
        body = {"prompt": PROMPT, "n_predict": 60, "stream": True}
        with contextlib.ExitStack() as stack:
            streams = [
                stack.enter_context(client.stream("POST", url + "/completion", json=body)) for _ in range(2)
            ]
            # the second may have arrived during the first's first step: it gets its slot after it
            run_until(accel, clock, lambda: sim.plain.live().busy_slots == 2, STALL_S)
            results: list[dict] = []
            third = threading.Thread(
                target=lambda: results.append(
                    client.post(url + "/completion", json={**body, "stream": False}).json()
                )
            )
            third.start()
            deadline = time.monotonic() + 30
            while metric(client.get(url + "/metrics").text, "llamacpp:requests_deferred") != 1:
                assert time.monotonic() < deadline, "the third request was never deferred"
                time.sleep(0.005)
            text = client.get(url + "/metrics").text
            assert metric(text, "llamacpp:requests_processing") == 2
            assert client.get(url + "/slots?fail_on_no_slot=1").status_code == 503
            with ticking(accel, clock):
                results += [_read_to(r.iter_lines(), 61) for r in streams]
                third.join()
        assert sorted(r["tokens_predicted"] for r in results) == [60, 60, 60]
        assert client.get(url + "/slots?fail_on_no_slot=1").status_code == 200


def test_a_verify_step_streams_as_a_burst_of_one_plus_accepted_events(client: httpx.Client) -> None:
    clock = ManualClock()
    with Simulator(seed=2, clock=clock) as sim:
        body = {
            "prompt": PROMPT,
            "n_predict": 120,
            "temperature": 0,
            "ignore_eos": True,
            "stream": True,
            "timings_per_token": True,
        }
        # time moves a third of a step every 10 ms: steps end tens of ms apart, however loaded
        with ticking(sim.accelerator, clock, stall_s=0.015, pause_s=0.01):
            lines = stream_lines(client, sim.draft_url + "/completion", body)
        partials = data_events(lines)[:-1]
        times = [t for t, line in lines][:-1]
        assert [e["tokens_predicted"] for e in partials] == list(range(1, 121))
        bursts: list[list[int]] = []
        for i, event in enumerate(partials):
            key = event["timings"]["predicted_ms"]
            if i and key == partials[i - 1]["timings"]["predicted_ms"]:
                bursts[-1].append(i)
            else:
                bursts.append([i])
        accepted = [partials[b[0]]["timings"].get("draft_n_accepted", 0) for b in bursts]
        sizes = [len(b) for b in bursts]
        assert sizes[0] == 1  # the first token comes from the prompt
        assert sizes[1:] == [1 + accepted[i] - accepted[i - 1] for i in range(1, len(bursts))]
        assert max(sizes) <= 5 and len(set(sizes)) > 2  # drafts of up to 4, varied
        inside = [times[b[j]] - times[b[j - 1]] for b in bursts for j in range(1, len(b))]
        between = [times[b[0]] - times[bursts[k - 1][-1]] for k, b in enumerate(bursts) if k]
        # a burst's events leave at once (a Nagle or delayed-ACK stall would hold each for ~40 ms)
        assert statistics.median(inside) < 0.01 < 0.02 < statistics.median(between)

        with ticking(sim.accelerator, clock):
            plain = data_events(stream_lines(client, sim.plain_url + "/completion", body))[:-1]
        assert len({e["timings"]["predicted_ms"] for e in plain}) == 120  # one token per step
        assert all("draft_n" not in e["timings"] for e in plain)


def test_greedy_output_is_the_same_on_both_arms_and_seeds_repeat(client: httpx.Client) -> None:
    body = {"prompt": PROMPT, "n_predict": 64, "temperature": 0}
    with (
        Simulator(seed=7, speedup=20) as a,
        Simulator(seed=7, speedup=20) as b,
        Simulator(seed=8, speedup=20) as c,
    ):
        plain = client.post(a.plain_url + "/completion", json=body).json()
        draft = client.post(a.draft_url + "/completion", json=body).json()
        assert plain["content"] == draft["content"] and len(plain["content"]) > 100
        other = client.post(a.draft_url + "/completion", json={**body, "prompt": "Another prompt."}).json()
        assert other["content"] != draft["content"]
        again = client.post(b.draft_url + "/completion", json=body).json()
        assert again["content"] == draft["content"]
        assert again["timings"]["draft_n"] == draft["timings"]["draft_n"]
        assert again["timings"]["draft_n_accepted"] == draft["timings"]["draft_n_accepted"]
        drafts = {
            client.post(c.draft_url + "/completion", json={**body, "prompt": f"q{i}"}).json()["timings"][
                "draft_n_accepted"
            ]
            for i in range(4)
        }
        assert len(drafts) > 1  # acceptance is drawn, not constant
        chat = client.post(
            a.draft_url + "/v1/chat/completions",
            json={"messages": [{"role": "user", "content": PROMPT}], "max_tokens": 32, "temperature": 0},
        ).json()
        chat_plain = client.post(
            a.plain_url + "/v1/chat/completions",
            json={"messages": [{"role": "user", "content": PROMPT}], "max_tokens": 32, "temperature": 0},
        ).json()
        assert chat["choices"][0]["message"]["content"] == chat_plain["choices"][0]["message"]["content"]


def test_eos_limit_and_bad_requests(client: httpx.Client) -> None:
    with Simulator(seed=0, speedup=100) as sim:
        _eos_limit_and_bad_requests(sim, client)


def _eos_limit_and_bad_requests(sim: Simulator, client: httpx.Client) -> None:
    natural = client.post(
        sim.plain_url + "/completion", json={"prompt": "stop early", "n_predict": 5000}
    ).json()
    assert natural["stop_type"] == "eos" and 300 <= natural["tokens_predicted"] < 1200
    forced = client.post(
        sim.plain_url + "/completion", json={"prompt": "stop early", "n_predict": 1300, "ignore_eos": True}
    ).json()
    assert forced["stop_type"] == "limit" and forced["tokens_predicted"] == 1300
    chat = client.post(
        sim.plain_url + "/v1/chat/completions", json={"messages": [{"role": "user", "content": "stop early"}]}
    ).json()
    assert chat["choices"][0]["finish_reason"] == "stop"
    bad = client.post(sim.plain_url + "/completion", content=b"{not json")
    assert bad.status_code == 400 and bad.json()["error"]["type"] == "invalid_request_error"
    assert client.post(sim.plain_url + "/completion", json={"n_predict": 4}).status_code == 400
    assert client.post(sim.plain_url + "/v1/chat/completions", json={"messages": "hi"}).status_code == 400
    huge = client.post(sim.plain_url + "/completion", json={"prompt": "word " * 5000})
    assert huge.status_code == 400 and huge.json()["error"]["type"] == "exceed_context_size_error"


def test_a_client_that_goes_away_frees_its_slot(client: httpx.Client) -> None:
    with Simulator(seed=4, speedup=2) as sim:
        url = sim.draft_url
        with (
            httpx.Client(timeout=30) as c,
            c.stream(
                "POST", url + "/completion", json={"prompt": PROMPT, "n_predict": 2000, "stream": True}
            ) as r,
        ):
            lines = r.iter_lines()
            for _ in range(5):
                next(lines)
        deadline = time.monotonic() + 5
        while metric(client.get(url + "/metrics").text, "llamacpp:requests_processing") != 0:
            assert time.monotonic() < deadline, "the abandoned request kept its slot"
            time.sleep(0.02)
        counted = metric(client.get(url + "/metrics").text, "llamacpp:tokens_predicted_total")
        assert 5 <= counted < 2000  # what it generated still counts, as on llama-server


@pytest.mark.parametrize(
    ("prompt", "low", "high"),
    [
        ("Implement a Python function that parses a CSV file.", 0.64, 0.72),
        ("Write a short story about the sea.", 0.41, 0.49),
        ("Rewrite this file with type hints: def f(x): return x", 0.95, 1.0),
    ],
)
def test_classes_profile_routes_prompts_to_their_acceptance(
    client: httpx.Client, prompt: str, low: float, high: float
) -> None:
    with Simulator("classes", seed=0, speedup=20) as sim:
        timings = client.post(
            sim.draft_url + "/completion", json={"prompt": prompt, "n_predict": 256, "ignore_eos": True}
        ).json()["timings"]
        assert low <= timings["draft_n_accepted"] / timings["draft_n"] <= high
