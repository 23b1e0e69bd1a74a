"""The README's "Your own server in three steps", run as written against the wheel's real llama-server.

The commands are read out of the README's section (its `sh` blocks), so this breaks when the README
changes; each is run through `spectop`'s own entry point (`tui.cli.main`), the dashboard under
Pilot. Only what a test machine needs is put in: the tiny generated models for `target.gguf` and
`draft.gguf`, free ports for 8080 and 8081, and `-t 1` (the machine is shared). A request from a
client that is not spectop must reach the Requests tab as a row with its figures, and `s` must
open the sweep.
"""

from __future__ import annotations

import asyncio
import re
import shlex
from pathlib import Path

import httpx
import pytest

from collectors.launch.process import ServerProcess, free_port
from collectors.servers.llamacpp.tinymodels import ModelPair
from tests.support.dashboard import wait_until
from tui import cli
from tui.commands import dashboard
from tui.widgets.requests_table import COLUMNS, RequestsTable
from tui.widgets.sweep_dialog import SweepDialog

pytestmark = [pytest.mark.llama, pytest.mark.slow]
README = Path(__file__).resolve().parents[2] / "README.md"
N_PREDICT = 24  # tokens the client asks for (ignore_eos: exactly these many are committed)


def three_steps() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("## Your own server in three steps")
    return text[start : text.index("\n## ", start + 1)]


def readme_commands() -> dict[str, list[str]]:
    """The section's commands by what they start: the server, the dashboard with its proxy, watch."""
    blocks = [shlex.split(b) for b in re.findall(r"```sh\n(.*?)\n\s*```", three_steps(), re.S)]
    assert [b[:2] for b in blocks] == [["llama-server", "-m"], ["spectop", "--server"], ["spectop", "watch"]]
    return dict(zip(("server", "proxy", "watch"), blocks))


def on_this_machine(argv: list[str], models: ModelPair, port: int) -> list[str]:
    """The README's llama-server command with the tiny models, a free port and one thread."""
    paths = {"target.gguf": str(models.target_path), "draft.gguf": str(models.draft_path)}
    return [paths.get(word, word) for word in argv] + ["--port", str(port), "-t", "1"]


def stream_one(url: str) -> None:
    """A client that is not spectop: one streamed temperature-0 completion."""
    body = {"prompt": "Write a short story about the sun.", "n_predict": N_PREDICT, "temperature": 0}
    body |= {"ignore_eos": True, "stream": True}
    with httpx.stream("POST", url + "/completion", json=body, timeout=60, trust_env=False) as response:
        response.raise_for_status()
        for _ in response.iter_lines():
            pass


def rows(app) -> list[dict[str, str]]:
    """The Requests tab as shown: one dict per row, by column."""
    table = app.query_one(RequestsTable)
    keys = [key for _, key in COLUMNS]
    return [{k: str(getattr(c, "plain", c)) for k, c in zip(keys, table.get_row(row))} for row in table.rows]


def run_the_dashboard_under_pilot(monkeypatch, send_to: str, who: str) -> dict:
    """`dashboard.run_app` replaced by a Pilot run that sends one request and presses `s`."""
    seen: dict = {}

    async def drive(app) -> None:
        async with app.run_test(size=(140, 42)) as pilot:
            await wait_until(pilot, lambda: app.state.latest is not None and app.state.latest.ok)
            await asyncio.to_thread(stream_one, send_to)
            await wait_until(
                pilot, lambda: any(r["who"].startswith(who) and r["tokens"] != "—" for r in rows(app))
            )
            seen["rows"] = [r for r in rows(app) if r["who"].startswith(who)]
            await pilot.press("s")
            await wait_until(pilot, lambda: isinstance(app.screen, SweepDialog))
            seen["sweep dialog"] = True

    def run_app(app) -> int:
        asyncio.run(drive(app))
        return 0

    monkeypatch.setattr(dashboard, "run_app", run_app)
    return seen


def assert_a_row_with_figures(seen: dict) -> None:
    (row,) = seen["rows"]
    assert row["tokens"] == str(N_PREDICT)  # ignore_eos: the server commits what was asked
    assert re.fullmatch(r"\d+\.\d %", row["accept"]), row  # the draft model drafted, some accepted
    assert float(row["tok_s"]) > 0 and float(row["G"]) >= 1.0, row
    assert seen["sweep dialog"]


def test_step_2_proxy_gives_a_row_per_request(llama_server_binary, tiny_models, tmp_path, monkeypatch):
    steps = readme_commands()
    port, proxy_port = free_port(), free_port()
    server = ServerProcess(
        on_this_machine(steps["server"], tiny_models, port),
        log_path=tmp_path / "server.log",
        name="llama-server",
    )
    assert server.argv[0] != "llama-server" or server.located is None  # found off PATH, or on it
    with server:
        ports = {"http://127.0.0.1:8080": server.url, "8081": str(proxy_port)}
        argv = [ports.get(word, word) for word in steps["proxy"]]
        seen = run_the_dashboard_under_pilot(monkeypatch, f"http://127.0.0.1:{proxy_port}", "proxy")
        assert cli.main(argv[1:]) == 0
    assert_a_row_with_figures(seen)


def test_step_2_watch_starts_the_server_and_gives_a_row_per_request(
    llama_server_binary, tiny_models, tmp_path, monkeypatch
):
    steps = readme_commands()
    at = steps["watch"].index("--")
    assert steps["watch"][at + 1 :] == steps["server"]  # "instead of step 1": the same server
    port = free_port()
    argv = steps["watch"][: at + 1] + on_this_machine(steps["watch"][at + 1 :], tiny_models, port)
    seen = run_the_dashboard_under_pilot(monkeypatch, f"http://127.0.0.1:{port}", "log")
    assert cli.main(argv[1:]) == 0
    assert_a_row_with_figures(seen)
    with pytest.raises(httpx.TransportError):  # and stopped it when the dashboard ended
        httpx.get(f"http://127.0.0.1:{port}/health", trust_env=False, timeout=2)
