"""Logged requests as RequestRecords: figures from the captured block, times on spectop's clock,
spectop's own requests left out, energy split like spectop's own requests."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.energy.attribution import attribute_records
from collectors.servers.server_log import LogReader, LogRecords, to_record
from tests.support.manual_clock import ManualClock
from tests.support.records import record as make_record

LOGS = Path(__file__).resolve().parents[3] / "fixtures" / "llama-server-logs"


def draft_lines() -> list[str]:
    return (LOGS / "draft.log").read_text(encoding="utf-8").splitlines()


def test_record_figures_from_the_captured_draft_block() -> None:
    clock = ManualClock(1000.0)
    timed = LogReader(clock).feed(draft_lines())
    first = to_record(timed[0], "http://x", busy_samples=[1, 2, 1])
    # draft.log, task 1: eval 24 tokens, draft acceptance (  9 accepted /  30 generated) -- read below
    block = [line for line in draft_lines() if "| task 1 |" in line]
    assert any("eval time" in line and "/    24 tokens" in line for line in block)
    drafted_line = next(line for line in block if "draft acceptance" in line)
    accepted = int(drafted_line.split("(")[1].split("accepted")[0])
    drafted = int(drafted_line.split("/")[1].split("generated")[0])
    assert (first.committed_tokens, first.draft_n, first.draft_n_accepted) == (24, drafted, accepted)
    assert first.acceptance == pytest.approx(accepted / drafted)
    # every decode step, as for a stream: 24 tokens = 1 from prefill + steps + accepted
    assert first.mean_advance == pytest.approx(1 + accepted / (24 - 1 - accepted))
    assert first.concurrency_mean == pytest.approx(4 / 3) and first.concurrency_max == 2
    assert sum(e.n_tokens for e in first.events) == 24
    assert first.tag.startswith("log") and first.latency.chunk_gaps.count == 0  # no gaps invented


def test_polls_that_saw_no_busy_slot_missed_the_logged_request() -> None:
    timed = LogReader(ManualClock(1000.0)).feed(draft_lines())
    # the request ran, so a poll reading 0 came before or after it (its window is the log's, shifted)
    edges = to_record(timed[0], "http://x", busy_samples=[0, 3, 1, 0])
    assert (edges.concurrency_mean, edges.concurrency_max) == (2.0, 3)
    missed = to_record(timed[0], "http://x", busy_samples=[0, 0])
    assert (missed.concurrency_mean, missed.concurrency_max) == (None, None)


def test_stamps_place_requests_by_the_least_delayed_line() -> None:
    clock = ManualClock(500.0)
    reader = LogReader(clock)
    lines = draft_lines()
    launch = next(i for i, line in enumerate(lines) if "launch_slot_" in line)
    reader.feed(lines[: launch + 1])  # read as it was written: the launch line came at once
    clock.advance(30.0)  # the rest sat in a pipe's buffer for half a minute
    timed = reader.feed(lines[launch + 1 :])
    stamp = lambda s: int(s[0]) * 60 + int(s[1]) + int(s[2]) / 1e3 + int(s[3]) / 1e6  # noqa: E731
    launched_at = stamp(lines[launch].split()[0].split("."))
    released_at = stamp(next(line for line in lines if "release" in line).split()[0].split("."))
    assert timed[0].t_done_s == pytest.approx(500.0 + released_at - launched_at, abs=1e-6)


def test_hold_lets_an_own_request_arrive_first_and_it_keeps_one_row() -> None:
    clock = ManualClock(100.0)
    reader = LogReader(clock, hold_s=1.5)
    lines = [line.split(" ", 1)[1] for line in draft_lines() if line[:1].isdigit()]  # stamps cut off
    assert reader.feed(lines) == []  # held
    clock.advance(2.0)
    timed = reader.feed([])
    assert len(timed) == 4
    book = LogRecords("http://x")
    logged = to_record(timed[0], "http://x")
    own = make_record("probe-1", logged.t_send_s + 0.01, logged.t_done_s + 0.2, logged.committed_tokens or 0)
    records = book.new_records(timed, [own], lambda a, b: [])
    assert len(records) == 3 and timed[0].logged.task_id not in {
        int(r.request_id.split("t")[1]) for r in records
    }
    assert book.new_records(timed[1:2], [], lambda a, b: [])[0].request_id.endswith("#2")  # a restart's ids


def test_energy_is_split_by_paced_tokens_like_own_requests() -> None:
    clock = ManualClock(10.0)
    timed = LogReader(clock).feed([line.split(" ", 1)[1] for line in draft_lines() if line[:1].isdigit()])
    one = to_record(timed[0], "http://x")
    # a constant 100 W over the request, alone: all of its joules are its own
    t0, t1 = one.t_send_s - 1, one.t_done_s + 1
    result = attribute_records([one], [t0, t1], [0.0, 100.0 * (t1 - t0)])[one.request_id]
    assert result.energy_j == pytest.approx(100.0 * one.duration_s)
    assert result.mj_per_token == pytest.approx(1000 * 100.0 * one.duration_s / 24)


def block_of(task: int, lines: list[str]) -> list[str]:
    """draft.log's block of task 1, retold as task `task`."""
    return [line.replace("| task 1 |", f"| task {task} |") for line in lines if "| task 1 |" in line]


def test_a_malformed_number_skips_its_line_and_the_log_is_read_on() -> None:
    lines = draft_lines()
    broken = [
        line.replace("16.06 ms", "1.2.3 ms").replace("| task 1 |", "| task 7 |")
        for line in lines
        if "| task 1 |" in line and "prompt eval" in line
    ]
    huge_slot = lines[11].replace("id  3 |", f"id  {'9' * 5000} |")  # past Python's int() digit limit
    reader = LogReader(ManualClock(1000.0))
    timed = reader.feed([*broken, huge_slot, *block_of(8, lines)])
    assert reader.skipped_lines == 2
    assert [t.logged.task_id for t in timed] == [8]  # the next block is read whole
    assert timed[0].logged.generated_tokens == 24


@pytest.mark.slow
def test_one_id_repeated_many_times_keeps_a_row_each_in_linear_time() -> None:
    lines = draft_lines()
    reader = LogReader(ManualClock(1000.0))
    timed = reader.feed(block_of(5, lines) * 20_000)  # the server restarted 20,000 times, as it were
    records = LogRecords("http://x").new_records(timed, [], lambda t0, t1: [])
    ids = [r.request_id for r in records]
    assert len(ids) == len(set(ids)) == 20_000
    assert ids[:3] == ["s3 t5", "s3 t5 #2", "s3 t5 #3"] and ids[-1] == "s3 t5 #20000"
