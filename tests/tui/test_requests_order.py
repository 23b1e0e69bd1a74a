"""The Requests tab's order until a header is clicked: requests newest first, then the server's
slots by slot id. The fault: slot rows came out 2, 3, 0, 1 (in the order the slots were first
seen busy), and a request that arrived later was appended below the older ones."""

from __future__ import annotations

import dataclasses

from tests.support import synthetic
from tests.support.dashboard import FakeCollector, FakeSampler, text_of, wait_until
from tui import messages
from tui.app import SpectopApp
from tui.config import Settings
from tui.widgets.requests_table import RequestsTable


def shown_ids(table: RequestsTable) -> list[str]:
    """The id column, top to bottom, as the screen shows it."""
    lines = text_of(table).splitlines()[1:]
    return [" ".join(line.split()[:2]) for line in lines if line.strip()]


async def test_requests_come_newest_first_and_slots_by_id_whatever_order_they_arrive_in():
    settings = Settings(server_url=synthetic.URL, poll=False)
    app = SpectopApp(settings, FakeCollector(synthetic.snapshots()), FakeSampler(synthetic.METER))
    async with app.run_test(size=(140, 42)) as pilot:
        busy = synthetic.snapshots()[1]

        def on(*slots: int):
            return dataclasses.replace(busy, slots_total=16, busy_slot_tokens=tuple((s, 40) for s in slots))

        app.post_message(messages.ServerPolled(on(2, 3)))  # slots 2 and 3 busy first
        app.post_message(messages.ServerPolled(on(0, 1, 2, 3)))
        app.post_message(messages.ServerPolled(on(10, 0)))  # a tenth: after slot 3, not after slot 1
        older = synthetic.record(request_id="older", t_send_s=100.0)
        newer = synthetic.record(request_id="newer", t_send_s=200.0)
        app.add_records([older])
        await pilot.pause()
        app.add_records([newer])  # arrives later, ended later: on top
        table = app.query_one(RequestsTable)
        await wait_until(pilot, lambda: len(shown_ids(table)) == 7)
        slots = [f"slot {n}" for n in (0, 1, 2, 3, 10)]
        assert shown_ids(table) == ["newer probe", "older probe", *slots]
