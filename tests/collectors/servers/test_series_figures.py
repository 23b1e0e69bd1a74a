"""Labelled Prometheus series: sums, deltas and restarts, with the filters each caller passes."""

from __future__ import annotations

from collectors.promtext import Sample
from collectors.servers import series


def page(name: str, *rows: tuple[dict[str, str], float]) -> dict[str, list[Sample]]:
    return {name: [Sample(name, labels, value) for labels, value in rows]}


N = "vllm:generation_tokens_total"
ENGINE_0 = {"engine": "0", "model_name": "m"}
ENGINE_1 = {"engine": "1", "model_name": "m"}


def only_engine_0(labels) -> bool:
    return labels.get("engine") == "0"


def test_every_reader_applies_keep_and_dedupe():
    before = page(N, (ENGINE_0, 100.0), (ENGINE_1, 1000.0), ({**ENGINE_0, "tp_rank": "1"}, 100.0))
    after = page(N, (ENGINE_0, 150.0), (ENGINE_1, 900.0), ({**ENGINE_0, "tp_rank": "1"}, 150.0))
    # engine 1 went back (a restart) and tp_rank copies engine 0's figure: neither counts here
    assert series.total(after, N, only_engine_0, ("tp_rank",)) == 150.0
    assert series.by_label(after, N, "engine", only_engine_0, ("tp_rank",)) == {"0": 150.0}
    assert series.delta(before, after, N, only_engine_0, ("tp_rank",)) == 50.0
    assert not series.went_back(before, after, [N], only_engine_0, ("tp_rank",))
    assert series.went_back(before, after, [N])
    # a copy that went back is a copy: deduped, the first of the equal series counts
    copy_back = page(N, (ENGINE_0, 150.0), ({**ENGINE_0, "tp_rank": "1"}, 10.0))
    assert not series.went_back(after, copy_back, [N], only_engine_0, ("tp_rank",))


def test_by_label_puts_series_without_the_label_under_the_empty_name():
    rows = page(N, ({"position": "0"}, 5.0), ({}, 2.0), ({"position": "1"}, 3.0))
    assert series.by_label(rows, N, "position") == {"0": 5.0, "": 2.0, "1": 3.0}


def test_one_missing_scrape_gives_no_delta_and_no_restart():
    cur = page(N, (ENGINE_0, 150.0))
    assert series.delta(None, cur, N) is None  # not the lifetime count
    assert series.delta(cur, None, N) is None
    assert not series.went_back(None, cur, [N]) and not series.went_back(cur, None, [N])
    assert not series.stamps_changed(None, cur, "vllm:") and not series.stamps_changed(cur, None, "vllm:")


def test_a_new_process_start_time_is_a_restart():
    stamp = "process_start_time_seconds"
    assert series.stamps_changed(page(stamp, ({}, 100.0)), page(stamp, ({}, 200.0)), "vllm:")
    assert not series.stamps_changed(page(stamp, ({}, 100.0)), page(stamp, ({}, 100.0)), "vllm:")


def test_a_restart_is_seen_through_copies_that_all_carry_their_rank():
    # SGLang with --enable-metrics-for-all-schedulers: every series has a tp_rank, each a copy of the figure
    before = page(N, ({"tp_rank": "0"}, 100.0), ({"tp_rank": "1"}, 100.0))
    after = page(N, ({"tp_rank": "0"}, 40.0), ({"tp_rank": "1"}, 40.0))
    assert series.went_back(before, after, [N], dedupe=("tp_rank",))
    assert series.delta(before, after, N, dedupe=("tp_rank",)) == -60.0  # one figure, not two copies
