"""The llama-server log parser on real captures (tests/fixtures/llama-server-logs, see its README).

Expected counts are read off the captured lines by hand and checked against the `/metrics`
counter deltas captured beside each log, never from the parser.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collectors.servers.llamacpp.log import LogParser, parse_line, parse_text

LOGS = Path(__file__).resolve().parents[3] / "fixtures" / "llama-server-logs"


def read(name: str) -> str:
    return (LOGS / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["plain", "draft", "ngram", "draft-4-slots"])
def test_every_capture_sums_to_the_servers_counters(name: str) -> None:
    requests = parse_text(read(f"{name}.log"))
    deltas = json.loads(read(f"{name}.metrics.json"))
    assert len(requests) == 4  # the capture sent four requests
    assert sum(r.draft_n or 0 for r in requests) == deltas["spec_decode_num_draft_tokens_total"]
    assert sum(r.draft_n_accepted or 0 for r in requests) == deltas["spec_decode_num_accepted_tokens_total"]


def test_plain_capture_without_stamps_gives_each_requests_timings() -> None:
    requests = parse_text(read("plain.log"))
    first = requests[0]
    # I slot print_timing: id  3 | task 1 | prompt eval time =      11.52 ms /    21 tokens (...)
    assert (first.slot_id, first.task_id, first.prompt_tokens, first.prompt_ms) == (3, 1, 21, 11.52)
    assert (first.generated_tokens, first.eval_ms) == (24, 70.31)
    assert first.draft_n is None and first.draft_n_accepted is None and first.stamp_s is None
    assert [r.generated_tokens for r in requests] == [24, 32, 40, 48]  # n_predict 24 + 8 i


def test_interleaved_slots_are_kept_apart_by_slot_and_task() -> None:
    requests = parse_text(read("draft-4-slots.log"))
    by_task = {(r.slot_id, r.task_id): r for r in requests}
    assert len(by_task) == 4
    for r in requests:  # each block's own lines, not a neighbour's
        assert r.total_ms == pytest.approx(r.prompt_ms + r.eval_ms, abs=0.02)
        assert r.context_tokens == r.prompt_tokens + r.generated_tokens - 1
        assert r.stamp_s is not None and r.draft_n and r.mean_len
        # the log's mean len is 1 + accepted / drafting steps: at most 1 + drafted / accepted-ish bound
        assert 1.0 <= r.mean_len <= 1 + 4  # --spec-draft-n-max 4


def test_stamped_draft_line_as_captured() -> None:
    line = (
        "0.16.258.195 I slot print_timing: id  2 | task 3 | draft acceptance = 0.48780 "
        "(   20 accepted /    41 generated), mean len =  2.82"
    )
    parsed = parse_line(line)
    assert parsed is not None and (parsed.slot_id, parsed.task_id) == (2, 3)
    assert parsed.stamp_s == pytest.approx(16.258195)
    assert parse_line("0.00.018.842 I srv  llama_server: initializing ...") is None
    long_up = parse_line(
        "180.05.123.456 I slot      release: id 12 | task 90210 | stop processing: n_tokens = 5, truncated = 0"
    )
    assert long_up is not None and long_up.stamp_s == pytest.approx(180 * 60 + 5.123456)


def colour(line: str) -> str:
    """`line` as --log-colors writes it: the stamp blue, the level green, each reset after
    (common/log.cpp: "%s%d.%02d.%03d.%03d%s " and "%sI %s" with g_col's escapes)."""
    stamp, level, rest = line.split(" ", 2)
    return f"\x1b[34m{stamp}\x1b[0m \x1b[32m{level} \x1b[0m{rest}"


def test_colours_around_the_stamp_and_level_are_read_through():
    # draft.log's first block (task 1 on slot 3), coloured; its release says truncated = 1
    lines = [line for line in read("draft.log").splitlines() if "| task 1 |" in line]
    lines[-1] = lines[-1].replace("truncated = 0", "truncated = 1")
    (r,) = parse_text("\n".join(colour(line) for line in lines))
    # eval time = 401.14 ms / 24 tokens; draft acceptance = 0.23404 (11 accepted / 47 generated),
    # mean len = 1.92; release at 0.00.961.446 = 0.961446 s
    assert (r.generated_tokens, r.eval_ms, r.total_ms) == (24, 401.14, 417.19)
    assert (r.draft_n, r.draft_n_accepted, r.mean_len, r.truncated) == (47, 11, 1.92, True)
    assert r.stamp_s == pytest.approx(0.961446)
    # older formats are tested on lines built from their releases' source: test_llamacpp_older_logs.py


def test_a_block_ends_at_its_release_line() -> None:
    parser = LogParser()
    lines = read("draft.log").splitlines()
    finished = [(i, r.task_id) for i, line in enumerate(lines) for r in parser.feed(line)]
    release_at = [i for i, line in enumerate(lines) if "stop processing" in line]
    assert [i for i, _ in finished] == release_at


def test_a_block_cut_by_rotation_is_dropped_not_misread() -> None:
    lines = read("draft.log").splitlines()
    first_total = next(i for i, line in enumerate(lines) if "total time" in line)
    # the new file starts after the first block's totals: its draft and release lines alone
    requests = parse_text("\n".join(lines[first_total + 1 :]))
    assert len(requests) == 3
