"""A sweep outlives one bad answer (the point is shown retrying and measured again), and whatever
ends it early, a second failure or a server it cannot read, it ends with its error and a summary of
the points measured, never with an exception."""

from __future__ import annotations

import json

from collectors.sweep.arms import make_arms
from collectors.sweep.events import PointDone, PointProgressed, SweepEnded
from collectors.sweep.plan import SweepPlan
from collectors.sweep.runner import run_sweep
from tests.support.captures import read_json
from tests.support.fault_server import FaultServer, Reply, Script, Stream, events, llama_routes

PLAN = SweepPlan(batches=(1,), max_tokens=48, passes=1, idle_s=0.0, warmup_tokens=4)
GOOD = llama_routes()["/completion"]
BAD = Stream(events("42"))


def sweep(plain: FaultServer, draft: FaultServer, tmp_path) -> list:
    return list(run_sweep(PLAN, make_arms(plain.url, draft.url), None, tmp_path))


def test_one_bad_stream_is_retried_and_the_sweep_completes(tmp_path):
    # the draft arm's warm-up gets a malformed stream once; every later request a good one
    with FaultServer() as plain, FaultServer({"/completion": Script(BAD, GOOD)}) as draft:
        events_ = sweep(plain, draft, tmp_path)
    retried = [e for e in events_ if isinstance(e, PointProgressed) and e.state.startswith("retrying")]
    assert len(retried) == 1 and retried[0].key.arm == "draft"
    assert "/completion streamed an event that is not a JSON object" in retried[0].state
    ended = events_[-1]
    assert isinstance(ended, SweepEnded) and ended.error is None
    assert len([e for e in events_ if isinstance(e, PointDone)]) == 3  # plain, draft, plain


def test_a_point_that_fails_twice_ends_the_sweep_with_its_summary(tmp_path):
    with FaultServer() as plain, FaultServer({"/completion": BAD}) as draft:
        events_ = sweep(plain, draft, tmp_path)
    ended = events_[-1]
    assert isinstance(ended, SweepEnded) and not ended.cancelled
    assert "/completion streamed an event that is not a JSON object" in ended.error
    assert ended.summary.points == 1  # the plain point before it is kept
    saved = json.loads((ended.run_dir / "summary.json").read_text())
    assert saved["points"] == 1


def test_a_server_of_the_wrong_shape_ends_the_sweep_before_it_measures(tmp_path):
    props = {**read_json("draft-simple.props.json"), "total_slots": "four"}
    with FaultServer({"/props": Reply(props)}) as plain, FaultServer() as draft:
        events_ = sweep(plain, draft, tmp_path)
    ended = events_[-1]
    assert isinstance(ended, SweepEnded) and ended.summary.points == 0
    assert ended.error.startswith(f"the plain server at {plain.url}: /props answered a `total_slots`")
    assert (ended.run_dir / "summary.json").is_file()


def test_a_bug_in_a_point_still_ends_with_a_summary(tmp_path, monkeypatch):
    from collectors.sweep import session

    def broken(*args, **kwargs):
        raise ZeroDivisionError("division by zero")

    with FaultServer() as plain, FaultServer() as draft:
        monkeypatch.setattr(session.SweepSession, "point_row", broken)
        events_ = sweep(plain, draft, tmp_path)
    ended = events_[-1]
    assert isinstance(ended, SweepEnded) and ended.error == "ZeroDivisionError: division by zero"
    assert (ended.run_dir / "summary.json").is_file()
