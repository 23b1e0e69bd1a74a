"""The batch router: which server a new request goes to, and where its crossover comes from."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.errors import SpectopError
from collectors.requests.router import BatchRouter, Choice, RoutePlan, crossover_from, parse_tag
from collectors.sweep.store import RunStore
from tests.support.manual_clock import ManualClock
from tests.support.sweep_rows import as_point, note25_rows

PLAN = RoutePlan("http://127.0.0.1:8081", "http://127.0.0.1:8082", 3.26, "sweep: crossover 3.26")


def test_requests_draft_until_the_batch_they_join_reaches_the_crossover() -> None:
    router = BatchRouter(PLAN, ManualClock())
    names = []
    for _ in range(5):  # none finishes: the k-th joins a batch of k
        choice = router.choose()
        router.started(choice.name)
        names.append((choice.batch, choice.name))
    # 1, 2, 3 < 3.26 draft; 4 and 5 >= 3.26 go to plain
    assert names == [(1, "draft"), (2, "draft"), (3, "draft"), (4, "plain"), (5, "plain")]
    router.finished("plain")
    router.finished("draft")  # 3 left in flight: the next joins 4
    assert router.choose() == Choice("plain", 4)
    router.finished("draft")
    assert router.choose() == Choice("draft", 3)


def test_requests_the_servers_run_that_the_proxy_did_not_send_count_in_the_batch() -> None:
    router = BatchRouter(PLAN, ManualClock())
    router.started(router.choose().name)
    router.observe_busy(4)  # 4 busy slots, 1 of them the proxy's: 3 others, once a second poll agrees
    assert router.live_batch == 1
    router.observe_busy(3)  # 2 others at both polls: 1 + 2 in flight, a new one joins 4
    assert router.live_batch == 3 and router.choose() == Choice("plain", 4)
    router.observe_busy(4)  # 3 others now, 2 at the poll before
    assert router.live_batch == 3
    router.observe_busy(4)
    assert router.live_batch == 4 and router.choose() == Choice("plain", 5)
    router.observe_busy(0)  # a slot not busy yet (prefill queued): never fewer than the proxy's own
    assert router.live_batch == 1 and router.choose() == Choice("draft", 2)
    router.finished("draft")  # it ended while a poll was under way, which still saw it busy
    router.observe_busy(1, own_before=1)
    assert router.live_batch == 0 and router.choose() == Choice("draft", 1)
    router.observe_busy(1)  # its slot freed a moment after its end: one poll alone sees it
    assert router.live_batch == 0


def test_a_server_that_refused_is_passed_over_until_it_is_tried_again() -> None:
    clock = ManualClock()
    router = BatchRouter(PLAN, clock)
    router.mark_down("draft")
    assert router.choose() == Choice("plain", 1, "draft down")
    clock.advance(2.1)  # DOWN_RETRY_S is 2 s
    assert router.choose() == Choice("draft", 1)
    router.mark_down("draft")
    router.mark_down("plain")  # both down: the batch's own choice, which will fail and say both
    assert router.choose() == Choice("draft", 1)


def test_a_tag_carries_the_server_the_batch_and_the_note() -> None:
    assert Choice("plain", 4, "draft down").tag == "proxy:plain:4:draft down"
    assert parse_tag("proxy:plain:4:draft down") == Choice("plain", 4, "draft down")
    assert parse_tag("proxy:draft:2") == Choice("draft", 2)
    assert parse_tag("proxy") is None and parse_tag("log:slot 3") is None and parse_tag("proxy:x:1") is None


def test_the_crossover_is_a_given_batch_or_a_saved_sweeps(tmp_path: Path) -> None:
    assert crossover_from("4") == (4.0, "batch 4 given")
    store = RunStore(tmp_path)
    for row in note25_rows():
        store.append_point(as_point(row))
    batch, source = crossover_from(str(tmp_path))
    # note 25: the ratio 0.71 at 2 and 1.12 at 4 passes 1.0 at 2 * 2 ** ((1 - 0.714) / (1.118 - 0.714)) = 3.26
    assert batch == pytest.approx(3.26, abs=0.02)
    assert source == f"sweep {tmp_path.name}: crossover 3.26"


def test_a_crossover_that_cannot_be_routed_by_says_why(tmp_path: Path) -> None:
    with pytest.raises(SpectopError, match="the batch must be above 1"):
        crossover_from("1")
    with pytest.raises(SpectopError, match="neither a batch nor a sweep's folder"):
        crossover_from(str(tmp_path / "nothing"))
    saved = Path(__file__).parents[2] / "data" / "sweeps" / "paired-20261201T223229Z"
    with pytest.raises(SpectopError, match="found no crossover") as raised:
        crossover_from(str(saved))  # drafting pays from 2 on in that run: it never starts costing
    assert "--route-by-batch 4" in raised.value.fix
