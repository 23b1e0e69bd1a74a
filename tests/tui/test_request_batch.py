"""A request's batch is the server's busy slots while it ran; a request alone ran at batch 1.

The fault: a probe alone showed `batch 0.9`. The client samples the server's busy slots every
0.1 s from the moment it sends until its stream closes; the first sample can be answered before
the server admits the request and the last after it released it, and both read 0 busy slots
(measured on the simulator: 15 samples of 16 read 1, mean 0.94). A running request holds a slot,
so a sample reading none missed it and is left out; the same rule served the log's rows already,
and now every record: the probe's, the sweep's, the proxy's.
"""

from __future__ import annotations

from collectors.requests.proxy_record import with_busy
from collectors.requests.record import busy_figures
from tests.support import synthetic
from tests.support.dashboard import FakeCollector, FakeSampler, text_of, wait_until
from tui.app import SpectopApp
from tui.config import Settings
from tui.widgets.requests_table import RequestsTable

ALONE = (0,) + (1,) * 14 + (0,)  # a probe alone: its first and last samples missed it


def test_samples_that_read_no_busy_slot_missed_the_request():
    assert busy_figures(ALONE) == (1.0, 1)  # not 14 / 16 = 0.875
    assert busy_figures([0, 2, 3, 2, 0]) == (7 / 3, 3)  # (2 + 3 + 2) / 3
    assert busy_figures([0, 0]) == (None, None) and busy_figures([]) == (None, None)


def batch_shown(table: RequestsTable, request_id: str) -> str:
    """The batch column of a request's row, as the screen shows it."""
    (line,) = [line for line in text_of(table).splitlines() if line.split()[:1] == [request_id]]
    header = text_of(table).splitlines()[0]
    start = header.index("batch")
    return line[start : start + len("batch")].strip()


async def test_a_probe_alone_and_a_proxied_request_alone_show_batch_1():
    settings = Settings(server_url=synthetic.URL, poll=False)
    app = SpectopApp(settings, FakeCollector(synthetic.snapshots()), FakeSampler(synthetic.METER))
    async with app.run_test(size=(140, 42)) as pilot:
        probe = synthetic.record(request_id="probe1", busy_samples=ALONE)
        proxied = with_busy(synthetic.record(request_id="proxied1", tag="proxy", busy_samples=()), ALONE)
        app.add_records([probe, proxied])
        table = app.query_one(RequestsTable)
        await wait_until(pilot, lambda: "proxied1" in text_of(table) and "probe1" in text_of(table))
        assert batch_shown(table, "probe1") == "1.0"
        assert batch_shown(table, "proxied1") == "1.0"
