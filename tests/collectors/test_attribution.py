"""Per-request energy from the set of records and the meter series, whatever order records arrive in."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.energy import ledger
from collectors.energy.attribution import AttributionBook, attribute_records, shared_with_unseen
from collectors.meters import MeterReading
from collectors.requests.record import RequestRecord
from tests.support.records import record


def steady_meter(power_w: float, until_s: float, period_s: float = 0.5) -> list[MeterReading]:
    n = round(until_s / period_s)
    return [MeterReading(i * period_s, power_w * i * period_s, power_w) for i in range(n + 1)]


FOUR = [record(f"r{i}", 0.0, 10.0, 100, concurrency_max=4) for i in range(4)]


@pytest.mark.parametrize("order", list(itertools.permutations(range(4))))
def test_four_identical_concurrent_requests_read_1000_whatever_the_order(order):
    # the example: 40 W for 10 s shared by four requests of 100 tokens: 400 J, 1000 mJ/token each
    book = AttributionBook()
    meter = steady_meter(40.0, 11.0)
    for i in order:  # a sweep point's records arrive one at a time, the table redrawn after each
        book.add(FOUR[i])
        book.settle(meter)
    assert [book.results[r.request_id].mj_per_token for r in FOUR] == [pytest.approx(1000.0)] * 4
    assert sum(a.energy_j for a in book.results.values()) == pytest.approx(400.0)
    assert not any(a.shared for a in book.results.values())  # the server's 4 busy slots were all ours


def test_a_record_arriving_later_changes_an_earlier_ones_figure():
    book = AttributionBook()
    meter = steady_meter(40.0, 11.0)
    book.add(record("a", 0.0, 10.0, 200))
    assert book.settle(meter)
    assert book.results["a"].mj_per_token == pytest.approx(2000.0)  # alone: all 400 J
    book.add(record("b", 5.0, 10.0, 100))  # b took half of the second half: 100 tokens each there
    assert book.settle(meter)
    # 0-5 s: a alone, 200 J. 5-10 s: 200 J, a and b 100 tokens each: 100 J each
    assert book.results["a"].energy_j == pytest.approx(300.0)
    assert book.results["b"].mj_per_token == pytest.approx(1000.0)
    assert not book.settle(meter)  # nothing new: nothing recomputed


def test_a_figure_waits_for_the_meter_to_read_past_the_request():
    book = AttributionBook()
    book.add(record("a", 0.0, 10.0, 100))
    book.settle(steady_meter(40.0, 8.0))  # the meter has read only to 8 s
    assert book.results["a"].mj_per_token is None and not book.results["a"].covered
    assert not book.pending(9.5) and not book.settle(steady_meter(40.0, 9.5))
    assert book.pending(10.0)
    assert book.settle(steady_meter(40.0, 10.5))
    assert book.results["a"].covered and book.results["a"].mj_per_token == pytest.approx(4000.0)
    assert not book.pending(10.5)


def test_the_meter_starting_late_leaves_the_figure_unknown():
    book = AttributionBook()
    book.add(record("a", 0.0, 10.0, 100))
    late = [r for r in steady_meter(40.0, 11.0) if r.t_s >= 2.0]
    book.settle(late)
    assert book.results["a"].energy_j == pytest.approx(320.0)  # a lower bound: 2-10 s only
    assert book.results["a"].mj_per_token is None


def test_shared_when_the_server_was_busier_than_spectops_own_requests():
    assert shared_with_unseen(3, 2) and not shared_with_unseen(2, 2)
    assert not shared_with_unseen(None, 1)  # never sampled: nothing to say
    meter = steady_meter(40.0, 21.0)
    probe = record("probe", 0.0, 10.0, 100, concurrency_max=2)  # one of ours running, the server saw two
    results = attribute_records([probe], [m.t_s for m in meter], [m.energy_j for m in meter])
    assert results["probe"].own_concurrency == 1 and results["probe"].shared
    # a, b and c overlap a, but never all at once: at most two of ours ran together
    a = record("a", 0.0, 20.0, 100, concurrency_max=2)
    b = record("b", 2.0, 8.0, 50, concurrency_max=2)
    c = record("c", 12.0, 18.0, 50, concurrency_max=3)
    results = attribute_records([a, b, c], [m.t_s for m in meter], [m.energy_j for m in meter])
    assert results["a"].own_concurrency == 2 and not results["a"].shared
    assert results["c"].own_concurrency == 2 and results["c"].shared


def test_a_dropped_record_still_takes_its_share_from_those_it_overlapped():
    book = AttributionBook(max_records=2)
    meter = steady_meter(40.0, 31.0)
    a, b = record("a", 0.0, 10.0, 100), record("b", 0.0, 10.0, 100)
    book.add(a)
    book.add(b)
    book.add(record("c", 20.0, 30.0, 100))  # a leaves the table
    book.add(record("d", 5.0, 10.0, 100))  # b's group is recomputed: a still ran beside it
    book.settle(meter)
    assert list(book.records) == ["c", "d"] and "a" not in book.results
    times, energies = [m.t_s for m in meter], [m.energy_j for m in meter]
    d_with_a = attribute_records([a, b, record("d", 5.0, 10.0, 100)], times, energies)["d"]
    assert book.results["d"] == d_with_a


spans = st.lists(
    st.tuples(
        st.floats(0.0, 15.0),  # send time
        st.floats(0.05, 8.0),  # duration
        st.integers(0, 40),  # committed tokens
        st.one_of(st.none(), st.integers(1, 6)),  # server busy max
    ),
    min_size=1,
    max_size=7,
)


def records_from(raw) -> list[RequestRecord]:
    return [record(f"q{i}", t, t + d, n, busy) for i, (t, d, n, busy) in enumerate(raw)]


@settings(max_examples=60)
@given(spans, st.data())
def test_any_arrival_order_gives_the_figures_of_the_whole_set(raw, data):
    records = records_from(raw)
    meter = [MeterReading(t / 4, 30.0 * t / 4 + (t % 3), None) for t in range(0, 101)]  # uneven power
    order = data.draw(st.permutations(records))
    book = AttributionBook()
    for r in order:
        book.add(r)
        if data.draw(st.booleans()):  # sometimes the table redraws between arrivals
            book.settle(meter)
    book.settle(meter)
    whole = attribute_records(records, [m.t_s for m in meter], [m.energy_j for m in meter])
    assert set(book.results) == set(whole)
    for key, expected in whole.items():
        got = book.results[key]
        assert got.energy_j == pytest.approx(expected.energy_j, abs=1e-9)
        assert (got.covered, got.own_concurrency, got.shared) == (
            expected.covered,
            expected.own_concurrency,
            expected.shared,
        )


@settings(max_examples=60)
@given(spans)
def test_the_parts_add_up_to_the_energy_spent_while_requests_ran(raw):
    records = records_from(raw)
    meter = [MeterReading(t / 4, 30.0 * t / 4 + (t % 3), None) for t in range(0, 101)]
    times, energies = [m.t_s for m in meter], [m.energy_j for m in meter]
    results = attribute_records(records, times, energies)
    _, unattributed = ledger.attribute_energy_j(times, energies, [])
    assert unattributed == pytest.approx(energies[-1])
    # the energy of the union of the spans, from the meter alone
    union_j, end_s = 0.0, float("-inf")
    for r in sorted(records, key=lambda r: r.t_send_s):
        t0, t1 = max(r.t_send_s, end_s), r.t_done_s
        if t1 > t0:
            union_j += ledger.window_energy_j(times, energies, t0, t1) or 0.0
        end_s = max(end_s, t1)
    assert sum(a.energy_j for a in results.values()) == pytest.approx(union_j, abs=1e-6)


def test_own_concurrency_counts_the_most_at_once_after_one_has_ended():
    # a runs 0-20; b 2-8 ends before c 10-16 and d 12-18 start: three of ours at once from 12 s, never four
    a = record("a", 0.0, 20.0, 100, concurrency_max=3)
    others = [record("b", 2.0, 8.0, 10), record("c", 10.0, 16.0, 10), record("d", 12.0, 18.0, 10)]
    meter = steady_meter(40.0, 21.0)
    results = attribute_records([a, *others], [m.t_s for m in meter], [m.energy_j for m in meter])
    assert results["a"].own_concurrency == 3 and not results["a"].shared


def test_no_meter_reading_leaves_the_figure_unknown():
    result = attribute_records([record("a", 0.0, 10.0, 100)], [], [])["a"]
    assert result.energy_j == 0.0 and not result.covered and result.mj_per_token is None
    book = AttributionBook()
    book.add(record("a", 0.0, 10.0, 100))
    book.settle([])
    assert book.results["a"].mj_per_token is None and book.pending(10.0)


def test_a_meter_reading_exactly_at_the_end_covers_the_request():
    book = AttributionBook()
    book.add(record("a", 0.0, 10.0, 100))
    book.settle(steady_meter(40.0, 8.0))  # waiting for the meter
    assert book.settle(steady_meter(40.0, 10.0))  # the last reading is at the request's end
    assert book.results["a"].mj_per_token == pytest.approx(4000.0)
    assert not book.pending(10.0)
    fresh = AttributionBook()
    fresh.add(record("b", 0.0, 10.0, 100))
    fresh.settle(steady_meter(40.0, 10.0))
    assert fresh.results["b"].covered and not fresh.pending(10.0)


def test_a_replaced_record_gives_back_what_it_took_from_its_old_neighbours():
    book = AttributionBook()
    meter = steady_meter(40.0, 31.0)
    book.add(record("a", 0.0, 10.0, 100))
    book.add(record("b", 0.0, 10.0, 100))
    book.settle(meter)
    assert book.results["b"].energy_j == pytest.approx(200.0)
    book.add(record("a", 20.0, 30.0, 100))  # the same id again, now at 20-30 s
    assert book.settle(meter)
    assert book.results["b"].energy_j == pytest.approx(400.0)  # b ran alone after all
    book.add(record("a", 20.0, 30.0, 100))  # identical again: recomputed, nothing changes
    assert book.settle(meter) is False


def test_a_dropped_record_leaves_the_results_and_the_books_stay_bounded():
    book = AttributionBook(max_records=2)
    book.add(record("a", 0.0, 10.0, 100))
    book.settle(steady_meter(40.0, 5.0))  # a waits for the meter
    book.add(record("b", 20.0, 30.0, 100))
    book.add(record("c", 40.0, 50.0, 100))  # a leaves the table
    book.settle(steady_meter(40.0, 51.0))
    assert set(book.results) == {"b", "c"}
    assert not book.pending(60.0)
    for i in range(50):  # disjoint records: none keeps a dropped one as an input
        book.add(record(f"q{i}", 100.0 + 20 * i, 110.0 + 20 * i, 10))
    assert len(book._inputs) == 2
