"""`spectop watch` of a server whose draft is loaded and never used (`-md` without `--spec-type`).

The server is the real capture of that server (tests/data/llama-server/void.*, taken from
llama-server build 11434 started with `-md draft.gguf --metrics -np 4 -c 4096`), served on a
loopback port as llama-server answers; the dashboard is built by `spectop watch`'s own settings.
Over HTTP the capture is exactly a plain server (the captures' README): only the command says VOID.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from collectors.launch.process import ServerProcess
from collectors.servers.auto import AutoCollector
from tests.support.captures import read_text
from tests.support.dashboard import text_of, wait_until
from tests.support.fake_servers import Answer
from tests.support.loopback import serving
from tui.app import SpectopApp
from tui.commands import watch
from tui.widgets.source_bar import SourceBar

JSON = "application/json; charset=utf-8"
PAGES = {  # what the captured llama-server answered on each path
    "/health": ("void.health.json", JSON),
    "/props": ("void.props.json", JSON),
    "/slots": ("void.slots.idle.json", JSON),
    "/v1/models": ("void.models.json", JSON),
    "/metrics": ("void.metrics.after.txt", "text/plain; version=0.0.4"),
}
NOT_FOUND = b'{"error":{"code":404,"message":"File Not Found","type":"not_found_error"}}'


def void_server(path: str, query: dict[str, str]) -> Answer:
    if path not in PAGES:
        return 404, JSON, NOT_FOUND
    name, content_type = PAGES[path]
    return 200, content_type, read_text(name).encode()


def watched_app(url: str, tmp_path: Path, *draft_args: str) -> SpectopApp:
    """The app `spectop watch --meter none -- llama-server … --port P` runs, on the served capture."""
    port = url.rsplit(":", 1)[1]
    argv = ["llama-server", "-m", "target.gguf", *draft_args, "--metrics", "-np", "4", "--port", port]
    parser = argparse.ArgumentParser()
    watch.add_options(parser)
    args = parser.parse_args(["--meter", "none", "--", *argv])
    log = tmp_path / "server.log"
    log.touch()
    server = ServerProcess(watch.server_argv(args), log_path=log)  # the served capture stands for it
    settings = watch.watch_settings(server, args)
    return SpectopApp(settings, AutoCollector(settings.server_url), None)


def styles_of(widget, word: str) -> list[str]:
    """The colours the widget paints `word` in, on screen."""
    return [
        str(segment.style.color.name if segment.style and segment.style.color else None)
        for y in range(widget.size.height)
        for segment in widget.render_line(y)
        if word in segment.text
    ]


async def test_watch_of_a_void_draft_says_void_in_red_inside_the_dashboard(tmp_path: Path) -> None:
    with serving(void_server) as url:
        app = watched_app(url, tmp_path, "-md", "draft.gguf")
        async with app.run_test(size=(120, 40), notifications=True) as pilot:
            bar = app.query_one(SourceBar)
            await wait_until(
                pilot, lambda: bar.view and bar.view.snapshot and app.query_one("#drafting").view
            )
            top = text_of(bar)
            # the capture's /slots say speculative false: the bar would read "not drafting"
            server_line = top.splitlines()[0]
            assert "● ok llama.cpp" in server_line and server_line.endswith("VOID")
            assert "⚠ VOID: the draft model is loaded with -md but --spec-type is missing" in top
            assert styles_of(bar, "VOID") == ["red", "red"]  # the drafting state and the warning line
            energy = " ".join(text_of(app.query_one("#energy")).split())
            assert "VOID: a draft is configured, nothing drafted" in energy and "does not draft" not in energy
            assert styles_of(app.query_one("#energy"), "VOID") == ["red"]
            assert app.query_one("#drafting").has_class("-failed")
            await wait_until(pilot, lambda: app.screen.query("Toast"))
            told = [" ".join(text_of(toast).split()) for toast in app.screen.query("Toast")]
            assert told == [
                "drafting VOID: the draft model is loaded with -md but --spec-type is missing, so nothing "
                "is drafted (add --spec-type draft-simple)"
            ]


async def test_watch_of_the_same_server_without_a_draft_says_not_drafting(tmp_path: Path) -> None:
    with serving(void_server) as url:
        app = watched_app(url, tmp_path)
        async with app.run_test(size=(120, 40), notifications=True) as pilot:
            bar = app.query_one(SourceBar)
            await wait_until(pilot, lambda: bar.view and bar.view.snapshot)
            assert "not drafting" in text_of(bar) and "VOID" not in text_of(bar)
            await pilot.pause(0.3)  # a notification would have come with the first poll
            assert not app.screen.query("Toast")
