"""The server log's reader says how it stands in the source bar for as long as that lasts: a log
it cannot read (a device, a folder, one not there yet), and what it skipped while reading."""

from __future__ import annotations

import os

from tests.support import synthetic
from tests.support.dashboard import FakeCollector, FakeSampler, text_of, wait_until
from tui.app import SpectopApp
from tui.config import Settings
from tui.widgets.source_bar import SourceBar

LOGS = os.path.join(os.path.dirname(__file__), "..", "fixtures", "llama-server-logs")


def app_on(log: str) -> SpectopApp:
    settings = Settings(server_url=synthetic.URL, poll=False, server_log=log)
    return SpectopApp(settings, FakeCollector(synthetic.snapshots()), FakeSampler(synthetic.METER))


async def bar_text(app, pilot, wanted: str) -> str:
    bar = app.query_one(SourceBar)
    await wait_until(pilot, lambda: wanted in text_of(bar), timeout_s=20)
    return text_of(bar)


async def test_a_log_that_is_no_file_is_said_in_the_source_bar_and_tried_again(tmp_path):
    app = app_on("/dev/zero")
    async with app.run_test(size=(160, 45)) as pilot:
        text = await bar_text(app, pilot, "server log:")
        assert "⚠ server log: --server-log /dev/zero is not a file" in text


async def test_a_log_not_there_yet_is_waited_for_then_read_and_what_it_skips_is_counted(tmp_path):
    log = tmp_path / "server.log"
    app = app_on(str(log))
    async with app.run_test(size=(160, 45)) as pilot:
        assert f"waiting for {log} to appear" in await bar_text(app, pilot, "waiting for")
        lines = open(os.path.join(LOGS, "draft.log"), encoding="utf-8").read().splitlines()
        broken = next(line for line in lines if "prompt eval time" in line).replace(" ms /", ".2.3 ms /", 1)
        log.write_text(broken + "\n", encoding="utf-8")
        text = await bar_text(app, pilot, "unreadable lines skipped")
        assert f"server log reading {log} (1 unreadable lines skipped)" in text
        assert "⚠ server log" not in text
