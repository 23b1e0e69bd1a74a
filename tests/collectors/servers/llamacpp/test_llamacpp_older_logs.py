"""Older llama-server log formats, read from lines built from llama.cpp's own source.

Each fixture in tests/fixtures/llama-server-logs/older/ names the llama-cpp-python release whose
sdist vendors that llama.cpp, and the file and line of every format string it uses. The expected
figures are worked by hand from the lines, with the project's definitions (collectors/docs/figures.md):
steps = tokens − 1 − accepted, G = 1 + accepted / steps, acceptance = accepted / drafted.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.servers.llamacpp.log import parse_text
from collectors.servers.llamacpp.log_requests import LogReader, to_record

OLDER = Path(__file__).resolve().parents[3] / "fixtures" / "llama-server-logs" / "older"


def read(version: str) -> str:
    # newline="": the carriage returns 0.3.2 writes stay in the text, as in the file
    return (OLDER / f"llama-cpp-python-{version}.log").open(encoding="utf-8", newline="").read()


def rows(version: str) -> list[tuple[object, ...]]:
    """(slot, task, tokens, drafted, accepted, acceptance, G) per request, as the dashboard's rows."""
    reader = LogReader(clock=lambda: 1000.0)
    # lines as the log follower hands them: split at newlines, a trailing carriage return removed
    timed = reader.feed(line.rstrip("\r") for line in read(version).split("\n"))
    out = []
    for t in timed:
        r = to_record(t, "http://127.0.0.1:8080")
        g = None if r.mean_advance is None else round(r.mean_advance, 3)
        out.append(
            (
                t.logged.slot_id,
                t.logged.task_id,
                r.committed_tokens,
                r.draft_n,
                r.draft_n_accepted,
                r.acceptance,
                g,
            )
        )
    return out


def test_0_3_16_draft_acceptance_rate_line_is_read_as_drafting():
    # task 0: 64 tokens, 45 of 100 accepted: steps 64 − 1 − 45 = 18, G = 1 + 45/18 = 3.5
    # task 2: 32 tokens, 10 of 40: steps 21, G = 1 + 10/21 = 1.476
    # task 4: no draft line, where this build prints one whenever it drafted (server.cpp:1550):
    #   nothing drafted, steps 15, G 1.00
    # the access line that lands between task 0's timings and its draft line does not split them
    assert rows("0.3.16") == [
        (0, 0, 64, 100, 45, 0.45, 3.5),
        (1, 2, 32, 40, 10, 0.25, 1.476),
        (0, 4, 16, None, None, None, 1.0),
    ]


def test_0_3_8_drafting_without_a_draft_line_is_unknown_not_plain():
    # a draft model is loaded, and print_timings (server.cpp:1417-1424) has no draft line: each
    # request's tokens are known, its drafting is not (acceptance and G unknown, never G 1.00)
    assert rows("0.3.8") == [
        (0, 0, 64, None, None, None, None),
        (0, 2, 40, None, None, None, None),
    ]


@pytest.mark.parametrize("version", ["0.3.2", "0.2.90"])
def test_logs_before_speculative_decoding_give_each_request(version: str):
    # slot 1 finishes first: 30 prompt tokens in 21.00 ms, 16 tokens in 96.00 ms, total 117.00 ms,
    # n_past 45 at release; then slot 0: 10 in 8.00 ms, 48 in 240.00 ms, 248.00 ms, n_past 57.
    # No draft model: G = 1 + 0/steps = 1.00
    assert rows(version) == [(1, 1, 16, None, None, None, 1.0), (0, 0, 48, None, None, None, 1.0)]
    requests = parse_text(read(version))  # a whole capture: 0.3.2's carriage returns split lines
    assert [(r.prompt_tokens, r.prompt_ms, r.total_ms, r.context_tokens) for r in requests] == [
        (30, 21.0, 117.0, 45),
        (10, 8.0, 240.0 + 8.0, 57),
    ]


@pytest.mark.parametrize("version", ["0.3.16", "0.3.8", "0.3.2", "0.2.90"])
def test_every_request_is_read_whatever_the_log_is_cut_into(version: str):
    # the follower hands lines over as they arrive: one at a time gives the same requests
    reader = LogReader(clock=lambda: 1000.0)
    one_by_one = [t.logged for line in read(version).split("\n") for t in reader.feed([line.rstrip("\r")])]
    assert one_by_one == parse_text(read(version))
