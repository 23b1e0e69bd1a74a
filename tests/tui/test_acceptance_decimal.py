"""Acceptance is shown with one decimal, per request and in the drafting panel (vLLM's own tools
show one; a whole percent hid changes of under a point)."""

from __future__ import annotations

from tests.support import synthetic
from tests.support.dashboard import FakeCollector, FakeSampler, text_of, wait_until
from tui import messages
from tui.app import SpectopApp
from tui.config import Settings
from tui.widgets.request_detail import RequestDetail
from tui.widgets.requests_table import RequestsTable


async def test_acceptance_has_one_decimal_in_the_requests_table_its_detail_and_the_drafting_panel():
    settings = Settings(server_url=synthetic.URL, poll=False)
    app = SpectopApp(settings, FakeCollector(synthetic.snapshots()), FakeSampler(synthetic.METER))
    async with app.run_test(size=(140, 42)) as pilot:
        # the captured draft-simple stream's last event: timings draft_n 19, draft_n_accepted 15,
        # so 15 / 19 = 78.947... %: "78.9 %" (a whole percent showed "79 %")
        app.add_records([synthetic.record(request_id="r1")])
        # the captured busy poll: /metrics drafted 176 - 104 = 72, accepted 137 - 73 = 64 since the
        # one before, 64 / 72 = 88.888... %: "88.9 %"
        app.post_message(messages.ServerPolled(synthetic.snapshots()[1]))
        table = app.query_one(RequestsTable)
        drafting = app.query_one("#drafting")
        await wait_until(pilot, lambda: "r1" in text_of(table) and "acceptance" in text_of(drafting))
        (row,) = [line for line in text_of(table).splitlines() if line.split()[:1] == ["r1"]]
        assert "78.9 %" in row
        assert "acceptance 88.9 %" in text_of(drafting)
        table.focus()
        await pilot.press("enter")  # the row's detail
        await wait_until(pilot, lambda: isinstance(app.screen, RequestDetail))
        assert "accepted 15 (78.9 %)" in " ".join(text_of(w) for w in app.screen.query("*") if w.size.height)
