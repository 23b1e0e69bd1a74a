"""The dashboard against servers that answer badly: it keeps running, keeps polling, and the top bar
shows the problem (never a stale "ok") until the server answers well again."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from textual.worker import WorkerState

from collectors.servers.auto import AutoCollector
from tests.support import synthetic
from tests.support.captures import read_json
from tests.support.dashboard import FakeCollector, text_of, wait_until
from tests.support.fault_server import FaultServer, Hang, Reply, Stream, endless
from tests.support.ngram_llama import ngram_server
from tui.app import SpectopApp
from tui.config import Settings
from tui.widgets.source_bar import SourceBar

PROPS = read_json("draft-simple.props.json")


def dashboard(url: str, collector=None) -> SpectopApp:
    return SpectopApp(Settings(server_url=url, interval_s=0.05), collector or AutoCollector(url), None)


def bar(app: SpectopApp) -> str:
    return text_of(app.query_one(SourceBar))


def latest_status(app: SpectopApp) -> str | None:
    return app.state.latest.status if app.state.latest else None


async def test_wrongly_typed_props_show_in_the_top_bar_and_polling_goes_on():
    with FaultServer({"/props": Reply({**PROPS, "total_slots": "four"})}) as server:
        app = dashboard(server.url)
        async with app.run_test(size=(160, 40)) as pilot:
            await wait_until(pilot, lambda: latest_status(app) == "error")
            assert "● error" in bar(app) and "/props answered a `total_slots`" in bar(app)
            server.set("/props", Reply(PROPS))  # the server answers well again
            await wait_until(pilot, lambda: latest_status(app) == "ok")
            assert "● ok" in bar(app) and "tiny-target.gguf" in bar(app)
            assert app.is_running


async def test_junk_metrics_then_a_server_gone_never_leave_the_bar_at_ok():
    with FaultServer({"/metrics": Reply("<html>", content_type="text/html")}) as server:
        app = dashboard(server.url)
        async with app.run_test(size=(160, 40)) as pilot:
            await wait_until(pilot, lambda: app.state.latest is not None and app.state.latest.ok)
            assert "/metrics unreadable" in bar(app)
            server.stop()
            await wait_until(pilot, lambda: latest_status(app) == "unreachable")
            assert "● unreachable" in bar(app) and "cannot reach" in bar(app)


@pytest.mark.slow
async def test_a_server_that_stops_answering_shows_a_timeout_and_polling_goes_on():
    with FaultServer() as server:
        app = dashboard(server.url)
        async with app.run_test(size=(160, 40)) as pilot:
            await wait_until(pilot, lambda: latest_status(app) == "ok")
            metrics = server.answers["/metrics"]
            server.set("/metrics", Hang())  # accepts the connection, never answers
            await wait_until(pilot, lambda: latest_status(app) == "error")
            assert "● error" in bar(
                app
            ) and "/metrics accepted the connection but did not answer within 3 s" in bar(app)
            server.set("/metrics", metrics)
            await wait_until(pilot, lambda: latest_status(app) == "ok")
            assert "● ok" in bar(app) and app.is_running


class RaisingOnce(FakeCollector):
    """Replays snapshots, but its second poll raises what no parser expected."""

    async def poll(self):
        if self.polls == 1:
            self.polls += 1
            raise KeyError("id")
        return await super().poll()


async def test_a_poll_that_raises_is_shown_and_polling_goes_on():
    collector = RaisingOnce(synthetic.snapshots())
    app = dashboard(synthetic.URL, collector)
    seen = []
    add = app.state.add_snapshot
    app.state.add_snapshot = lambda snap: (seen.append(snap), add(snap))[1]  # type: ignore[method-assign]
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, lambda: len(seen) >= 4)
        assert app.is_running and latest_status(app) == "ok"
    assert [s.status for s in seen[:3]] == ["ok", "error", "ok"]
    assert seen[1].error == "KeyError: 'id'" and seen[1].url == synthetic.URL


async def test_a_poller_that_fails_does_not_leave_the_bar_at_ok():
    app = dashboard(synthetic.URL, FakeCollector(synthetic.snapshots()))
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, lambda: latest_status(app) == "ok")
        app.workers.cancel_group(app, "poll-server")  # the poller is gone; then it is told as failed
        failed = SimpleNamespace(group="poll-server", error=RuntimeError("event loop closed"))
        app.report_worker_error(SimpleNamespace(state=WorkerState.ERROR, worker=failed))
        await wait_until(pilot, lambda: latest_status(app) == "error")
        assert "● error" in bar(app) and "RuntimeError: event loop closed" in bar(app)


async def test_a_probe_of_an_endless_stream_is_told_and_the_dashboard_runs_on():
    token = {"content": "x", "tokens_predicted": 1, "stop": False}
    with FaultServer({"/completion": Stream(endless(token))}) as server:
        app = dashboard(server.url)
        told: list[str] = []
        notify = app.notify
        app.notify = lambda message, **kw: (told.append(str(message)), notify(message, **kw))[1]  # type: ignore[method-assign]
        async with app.run_test(size=(160, 40)) as pilot:
            await wait_until(pilot, lambda: latest_status(app) == "ok")
            await pilot.press("r")
            await wait_until(pilot, lambda: any("sent more than" in m for m in told))
            assert app.is_running and latest_status(app) == "ok"
    assert any("/completion sent more than 576 events for 128 tokens" in m for m in told)


async def test_ngram_simple_g_on_the_dashboard_is_every_steps():
    # the drafts counter stays at 1 (tests/collectors/servers/test_llamacpp_ngram.py): G 1.03, never 18 or 20
    with ngram_server() as server:
        app = dashboard(server.url)
        async with app.run_test(size=(160, 40)) as pilot:
            await wait_until(pilot, lambda: "G 1.03" in text_of(app.query_one("#drafting")))
            assert "width 1.07" in text_of(app.query_one("#drafting"))
