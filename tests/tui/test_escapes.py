"""No control character a server sends reaches the terminal, and no server text is read as markup.

The CLI runs as a user runs it (a subprocess whose stdout and stderr are pipes) against hostile
servers (tests/support/hostile_server.py); the dashboard runs under Pilot against the same servers,
and what it would draw is read back from the screen.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from textual.widgets import Input

from collectors.errors import SpectopError
from collectors.export.exporter import SpectopExporter
from collectors.meters import MeterInfo
from collectors.servers.auto import AutoCollector
from collectors.sweep.events import SweepEnded
from collectors.sweep.summary import summary_of
from tests.support import synthetic
from tests.support.dashboard import FakeCollector, FakeSampler
from tests.support.hostile_server import SHOWN, TEXT, HostileLlama, hostile_prometheus, hostile_vllm, serving
from tests.support.sweep_rows import note25_rows, points
from tui import messages
from tui.app import SpectopApp
from tui.config import Settings
from tui.widgets.sweep_dialog import SweepDialog

ROOT = Path(__file__).resolve().parents[2]
ESC_SHOWN = "\\x1b]0;pwned\\x07"  # the retitling attack, as spectop shows it


def spectop(*args: str) -> tuple[int, str]:
    """Exit code and everything the command wrote (stdout, then stderr), decoded."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPECTOP_", "FORCE_COLOR", "TTY_"))}
    env["COLUMNS"] = "400"  # no wrapping: each field on one line
    done = subprocess.run(
        [sys.executable, "-m", "tui", *args], capture_output=True, cwd=ROOT, env=env, timeout=120
    )
    return done.returncode, (done.stdout + done.stderr).decode("utf-8")


def controls(text: str) -> list[str]:
    """Control characters other than the newlines between lines (C0, DEL and C1 are category Cc)."""
    return [ch for ch in text if unicodedata.category(ch) == "Cc" and ch != "\n"]


def assert_shown_safely(output: str) -> None:
    assert controls(output) == [], output
    assert "Traceback" not in output
    assert ESC_SHOWN in output  # made visible, not dropped
    assert "[/x] [bold" in output  # markup shown as typed, never parsed


@pytest.mark.slow
@pytest.mark.parametrize(
    ("stream", "code"),
    [("ok", 0), ("sse-error", 1), ("http-error", 2)],
)
def test_probe(stream, code):
    with serving(HostileLlama(stream=stream)) as url:
        exit_code, output = spectop("probe", "--server", url, "--tokens", "8", "--meter", "none")
    assert exit_code == code, output
    assert_shown_safely(output)


@pytest.mark.slow
@pytest.mark.parametrize("routes", [HostileLlama(), hostile_vllm()], ids=["llama-server", "vllm"])
def test_snapshot(routes):
    with serving(routes) as url:
        exit_code, output = spectop("snapshot", "--server", url, "--window", "0.2", "--meter", "none")
        assert exit_code == 0, output
        assert_shown_safely(output)
        exit_code, output = spectop("snapshot", "--server", url, "--window", "0", "--meter", "none", "--json")
    assert exit_code == 0 and controls(output) == []
    assert json.loads(output)["model"] == SHOWN


@pytest.mark.slow
@pytest.mark.parametrize("health", [200, 503])
def test_doctor(health):
    with serving(HostileLlama(health_status=health)) as url:
        exit_code, output = spectop("doctor", "--server", url, "--meter", "none")
    assert exit_code == (0 if health == 200 else 1), output
    assert_shown_safely(output)


@pytest.mark.slow
@pytest.mark.parametrize(("stream", "code"), [("sse-error", 0), ("http-error", 1)])
def test_sweep_progress_and_summary(stream, code, tmp_path):
    with serving(HostileLlama(stream=stream)) as url:
        exit_code, output = spectop(
            *("sweep", "--plain", url, "--draft", url, "--batches", "1", "--passes", "1", "--tokens", "8"),
            *("--idle", "0", "--meter", "none", "--results", str(tmp_path)),
        )
    # 3: finished, but the hostile server's points are no trustworthy pair (tui/commands/sweep.py)
    assert exit_code == code or (code == 0 and exit_code == 3), output
    assert_shown_safely(output)


@pytest.mark.slow
@pytest.mark.parametrize("command", ["snapshot", "probe", "doctor"])
def test_a_meter_error_quoting_its_exporter(command):
    with serving(hostile_prometheus()) as prometheus, serving(HostileLlama()) as url:
        exit_code, output = spectop(command, "--server", url, "--meter", f"prometheus={prometheus}")
    assert exit_code in (1, 2), output  # doctor: the meter failed; the others: bad input, one line
    assert_shown_safely(output)


@pytest.mark.slow
def test_a_launched_server_that_dies_printing_attacks(tmp_path):
    # the sweep quotes the last lines of a launched server's log when it dies before it is ready
    dies = f"import sys; sys.stdout.write({TEXT!r}); sys.exit(3)"
    command = shlex.join(
        [sys.executable, "-c", dies, "-md", "d.gguf", "--spec-type", "draft-simple", "--port", "9"]
    )
    exit_code, output = spectop(
        "sweep",
        "--draft-cmd",
        command,
        "--batches",
        "1",
        "--idle",
        "0",
        "--meter",
        "none",
        "--results",
        str(tmp_path),
    )
    assert exit_code == 1 and "exited with code 3" in output, output
    assert_shown_safely(output)


@pytest.mark.slow
@pytest.mark.parametrize("form", ["table", "csv", "markdown", "json"])
def test_report_of_a_saved_run_with_server_text(form, tmp_path):
    rows = note25_rows()
    rows[1]["flags"] = [{"code": TEXT, "message": TEXT}]
    rows[1]["server"] = {"model": TEXT, "build": TEXT}
    (tmp_path / "meta.json").write_text(json.dumps({"idle_flag": {"code": "idle", "message": TEXT}}))
    (tmp_path / "points.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    exit_code, output = spectop("report", str(tmp_path), "--format", form)
    assert exit_code == 0, output
    assert controls(output) == [] and "Traceback" not in output
    assert "pwned" in output


# -- the dashboard -------------------------------------------------------------------------------


def screen_text(app) -> str:
    """Every line the dashboard would draw now: panels, tables, notifications."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def wait_until(pilot, condition, timeout_s: float = 15.0) -> None:
    for _ in range(int(timeout_s / 0.02)):
        if condition():
            await pilot.pause()
            return
        await pilot.pause(0.02)
    raise AssertionError("timed out waiting for the app")


def hostile_app(url: str, sampler=None) -> SpectopApp:
    settings = Settings(server_url=url, interval_s=0.1)
    return SpectopApp(settings, AutoCollector(url), sampler)


@pytest.mark.parametrize("routes", [HostileLlama(), hostile_vllm()], ids=["llama-server", "vllm"])
async def test_dashboard_polls_a_hostile_server(routes):
    with serving(routes) as url:
        app = hostile_app(url)
        async with app.run_test(size=(160, 45), notifications=True) as pilot:
            await wait_until(pilot, lambda: app.state.latest is not None and app.state.latest.ok)
            await wait_until(pilot, lambda: ESC_SHOWN in screen_text(app))
            assert controls(screen_text(app)) == []
            assert "x] [bold" in screen_text(app)  # the model's file name: after the "/" of "[/x]"


async def test_dashboard_survives_a_wrongly_typed_answer_from_a_hostile_server():
    # a /slots id that is not a number: the poll fails, naming the field, and polling goes on
    with serving(HostileLlama(slot_id=TEXT)) as url:
        app = hostile_app(url)
        async with app.run_test(size=(160, 45), notifications=True) as pilot:
            await wait_until(pilot, lambda: "/slots answered" in screen_text(app))
            await pilot.pause(0.3)
            assert app.is_running and controls(screen_text(app)) == []
            assert app.state.latest is not None and app.state.latest.status == "error"


class RaisingCollector:
    """A collector whose every poll raises `exc`: a parser that quotes the server in its error."""

    backend = "llama.cpp"

    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    async def poll(self):
        raise self.exc

    async def busy_slots(self) -> int | None:
        return None


@pytest.mark.parametrize(
    "exc",
    [SpectopError(f"/props answered {TEXT}", "fix it"), ValueError(f"invalid literal for int(): {TEXT}")],
    ids=["SpectopError", "a parser's bug"],
)
async def test_dashboard_survives_a_poll_that_fails_quoting_server_text(exc):
    app = SpectopApp(Settings(server_url=synthetic.URL, interval_s=0.1), RaisingCollector(exc), None)
    async with app.run_test(size=(160, 45), notifications=True) as pilot:
        await wait_until(pilot, lambda: "[/x] [bold" in screen_text(app))
        await pilot.pause(0.3)
        shown = screen_text(app)
        assert app.is_running and controls(shown) == [] and ESC_SHOWN in shown


@pytest.mark.parametrize("stream", ["ok", "sse-error", "http-error"])
async def test_dashboard_probe_of_a_hostile_server(stream):
    with serving(HostileLlama(stream=stream)) as url:
        app = hostile_app(url)
        seen: list[messages.ProbeFinished] = []
        hook = lambda m: seen.append(m) if isinstance(m, messages.ProbeFinished) else None  # noqa: E731
        async with app.run_test(size=(160, 45), notifications=True, message_hook=hook) as pilot:
            await wait_until(pilot, lambda: app.state.latest is not None)
            await pilot.press("r")
            await wait_until(pilot, lambda: bool(seen))
            await pilot.pause(0.2)
            assert app.is_running
            shown = screen_text(app)
            assert controls(shown) == []
            if stream != "ok":
                assert ESC_SHOWN in shown and "[/x] [bold" in shown  # the error, in the notification


async def test_dashboard_meter_error_and_sweep_error_are_shown_safely():
    sampler = FakeSampler(
        MeterInfo(f"dcgm {TEXT}", (TEXT,), TEXT, "counter", 1.0, detail=TEXT), synthetic.readings()
    )
    sampler.failed_ticks, sampler.last_error = 1, f"exporter said: {TEXT}"
    app = SpectopApp(Settings(server_url=synthetic.URL, poll=False), None, sampler)
    async with app.run_test(size=(160, 45), notifications=True) as pilot:
        app.read_meter()
        summary = summary_of(points(note25_rows()))
        app.post_message(
            messages.SweepProgressed(
                SweepEnded(Path("results/x"), summary, cancelled=False, error=f"stopped: {TEXT}")
            )
        )
        await pilot.pause(0.3)
        app.action_tab("sweep")
        await pilot.pause(0.2)
        shown = screen_text(app)
        assert controls(shown) == []
        assert ESC_SHOWN in shown and app.is_running


async def test_sweep_dialog_shows_a_bad_field_quoting_markup():
    app = SpectopApp(Settings(server_url=synthetic.URL, poll=False), None, None)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("s")
        app.screen.query_one("#batches", Input).value = "[/x] [bold"
        await pilot.click("#dialog-run")
        await pilot.pause()
        assert isinstance(app.screen, SweepDialog) and app.is_running
        assert "not '[/x] [bold'" in screen_text(app)  # the error quotes the field as typed


def test_exporter_labels_stay_printable():
    snapshot = synthetic.snapshots()[-1]
    collector = FakeCollector([snapshot])
    collector.url = f"http://127.0.0.1:8080/{TEXT}"  # type: ignore[attr-defined]
    exporter = SpectopExporter(collector, FakeSampler(synthetic.METER, synthetic.readings()))
    exporter.update(snapshot)
    registry = CollectorRegistry()
    registry.register(exporter)
    page = generate_latest(registry).decode()
    assert "spectop_up{" in page and "pwned" in page
    assert controls(page.replace("\n", "")) == []
