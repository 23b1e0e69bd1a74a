"""The Requests tab's detail: a request's joules, tokens per joule, energy-delay product, and its
verify steps by tokens accepted as text bars (issue 27 item 4)."""

from __future__ import annotations

import dataclasses

import pytest

from collectors.meters import MeterReading
from collectors.requests import latency
from collectors.requests.record import RequestRecord
from tests.support import synthetic
from tests.support.dashboard import FakeCollector, FakeSampler, text_of, wait_until
from tui import messages
from tui.app import SpectopApp
from tui.config import Settings
from tui.widgets.request_detail import RequestDetail, accepted_per_step_lines
from tui.widgets.requests_table import RequestsTable

# steps by tokens accepted: 20 accepted none, 12 one, 17 two, 6 three; each step also commits its own
# token, so the steps commit 20 + 12·2 + 17·3 + 6·4 = 119 tokens, 120 with prefill's first
STEP_SIZES = [1] * 20 + [2] * 12 + [3] * 17 + [4] * 6


def drafted_record(request_id: str = "r1", t_send_s: float = 10.0, t_done_s: float = 14.0) -> RequestRecord:
    """120 tokens over 4 s: prefill's token at 10.2 s, then the 55 steps 0.06 s apart, sizes mixed."""
    sizes = [1] + [STEP_SIZES[(7 * i) % len(STEP_SIZES)] for i in range(len(STEP_SIZES))]  # a mixed order
    events = tuple(latency.ChunkEvent(t_send_s + 0.2 + 0.06 * i, n) for i, n in enumerate(sizes))
    return RequestRecord(
        request_id=request_id,
        server_url=synthetic.URL,
        route="/completion",
        t_send_s=t_send_s,
        t_done_s=t_done_s,
        events=events,
        latency=latency.profile(events, t_send_s, drafting=True),
        committed_tokens=120,
        draft_n=165,  # 3 drafted per step
        draft_n_accepted=12 + 2 * 17 + 3 * 6,  # 64
        server_steps=55,
        tag="probe",
    )


def test_the_shuffle_keeps_every_step_once():
    # 7 is prime to 55, so i -> 7i mod 55 visits every step size once: the bars' truths hold
    assert sorted(STEP_SIZES[(7 * i) % 55] for i in range(55)) == sorted(STEP_SIZES)


def test_steps_by_tokens_accepted_are_text_bars_from_the_stream():
    text = accepted_per_step_lines(drafted_record()).plain.splitlines()
    # the widest bin (20 steps) fills 16 cells; 12 / 20 of 16 is 9.6 cells: 9 full and a 5/8 block
    assert text[1] == "0 acc " + "█" * 16 + " 20"
    assert text[2] == "1 acc " + "█" * 9 + "▋" + " " * 6 + " 12"
    assert text[3].endswith(" 17") and text[4].endswith(" 6")
    assert text[-1] == "(from stream bursts)"


async def test_the_detail_shows_a_requests_joules_tokens_per_joule_and_energy_delay_product():
    app = SpectopApp(
        Settings(server_url=synthetic.URL, poll=False),
        FakeCollector(synthetic.snapshots()),
        FakeSampler(synthetic.METER),
    )
    async with app.run_test(size=(140, 44)) as pilot:
        # a steady 7.5 W from 9 s to 15 s; the request alone ran from 10 s to 14 s
        readings = [MeterReading(9.0 + k / 10, 7.5 * k / 10, 7.5) for k in range(61)]
        app.post_message(messages.MeterRead(readings))
        await pilot.pause()
        app.add_records([drafted_record()])
        table = app.query_one(RequestsTable)
        await wait_until(pilot, lambda: "r1" in text_of(table) and table.get_cell("r1", "mj") != "—")
        table.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, RequestDetail))
        shown = "\n".join(text_of(w) for w in app.screen.query("Static") if w.size.height)
        # 7.5 W × 4 s = 30 J over 120 tokens: 250 mJ/token, 120 / 30 = 4 tokens per joule;
        # EDP = 30 J × 4 s end to end = 120 J·s
        assert "250" in shown
        assert "30.00 J, 4.00 tokens/J" in shown
        assert "120.00 J·s (30.00 J × 4.00 s e2e)" in shown
        assert "verify steps by tokens accepted" in shown and "(from stream bursts)" in shown
        (zero,) = [ln for ln in shown.splitlines() if "0 acc" in ln]
        assert zero.rstrip().endswith("█ 20")


async def test_a_request_the_meter_has_not_covered_has_no_energy_yet():
    app = SpectopApp(
        Settings(server_url=synthetic.URL, poll=False),
        FakeCollector(synthetic.snapshots()),
        FakeSampler(synthetic.METER),
    )
    async with app.run_test(size=(140, 44)) as pilot:
        # the meter stops at 12 s, mid-request: its joules so far are a lower bound, not its energy
        readings = [MeterReading(9.0 + k / 10, 7.5 * k / 10, 7.5) for k in range(31)]
        app.post_message(messages.MeterRead(readings))
        app.add_records([drafted_record()])
        table = app.query_one(RequestsTable)
        await wait_until(pilot, lambda: "r1" in text_of(table))
        table.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, RequestDetail))
        shown = "\n".join(text_of(w) for w in app.screen.query("Static") if w.size.height)
        (energy,) = [ln for ln in shown.splitlines() if ln.strip().startswith("energy ")]
        assert energy.split()[1:] == ["—"]
        assert "J·s" not in shown


def test_a_logged_request_or_one_that_drafted_nothing_says_so_instead_of_bars():
    # the server's log gives counts only: no events, so no bursts to read steps from
    logged = dataclasses.replace(
        drafted_record(), events=(), latency=latency.profile((), 10.0, drafting=True)
    )
    assert "the server's log" in accepted_per_step_lines(logged).plain
    # a plain server's request: its steps are the server's and nothing was drafted
    plain = dataclasses.replace(drafted_record(), draft_n=None, draft_n_accepted=None)
    assert accepted_per_step_lines(plain).plain.splitlines()[1:] == ["nothing drafted"]


@pytest.mark.parametrize(("width", "shown"), [(140, True), (100, False)])
async def test_the_steps_bars_show_beside_the_figures_from_110_columns(width, shown):
    # under 110 columns the bars would squeeze the figures into wrapped lines; the figures keep it all
    app = SpectopApp(
        Settings(server_url=synthetic.URL, poll=False),
        FakeCollector(synthetic.snapshots()),
        FakeSampler(synthetic.METER),
    )
    async with app.run_test(size=(width, 44)) as pilot:
        app.add_records([drafted_record()])
        table = app.query_one(RequestsTable)
        await wait_until(pilot, lambda: "r1" in text_of(table))
        table.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, RequestDetail))
        shown_text = "\n".join(text_of(w) for w in app.screen.query("Static") if w.size.height)
        assert ("verify steps by tokens accepted" in shown_text) is shown
        (tokens,) = [ln for ln in shown_text.splitlines() if "committed," in ln]
        assert tokens.strip() == "tokens  120 committed, — prompt"  # one line, not wrapped
