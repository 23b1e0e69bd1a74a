"""The server log reader against the wheel's real llama-server on the tiny draft pair.

Traffic comes from a plain httpx client, not spectop: every request must appear in the Requests
tab from the log alone, its drafted/accepted counts summing to the server's /metrics deltas. Also
`spectop watch`'s start (a watched server whose log is followed; a void draft told inside the
dashboard, not on the terminal it hides)
and `--server-log -` from a real pipe.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from collectors.errors import SpectopError
from collectors.launch.process import ServerProcess, free_port
from collectors.servers.auto import AutoCollector
from collectors.servers.llamacpp.launch import llama_server_argv
from tui.app import SpectopApp
from tui.commands import watch
from tui.config import Settings

pytestmark = pytest.mark.llama
COUNTERS = ("spec_decode_num_draft_tokens_total", "spec_decode_num_accepted_tokens_total")


def counters(url: str) -> tuple[float, float]:
    text = httpx.get(url + "/metrics", timeout=10, trust_env=False).text
    found = {m[1]: float(m[2]) for m in re.finditer(r"^llamacpp:(\w+) (\S+)$", text, re.M)}
    return found[COUNTERS[0]], found[COUNTERS[1]]


def send(url: str, prompts: list[str]) -> None:
    """Temperature-0 completions from a client that is not spectop, several at once."""

    def one(i: int) -> None:
        body = {"prompt": prompts[i], "n_predict": 16 + 4 * i, "temperature": 0, "ignore_eos": True}
        httpx.post(url + "/completion", json=body, timeout=60, trust_env=False).raise_for_status()

    with ThreadPoolExecutor(len(prompts)) as pool:
        list(pool.map(one, range(len(prompts))))


PROMPTS = ["Write a short story about the sun.", "Explain speculative decoding.", "hello world the"]


async def watched_rows(settings: Settings, url: str, expected: int) -> list:
    """The app on `settings`; traffic sent; the log rows once `expected` arrived (or 40 s: a loaded machine)."""
    app = SpectopApp(settings, AutoCollector(url), None)
    async with app.run_test(size=(140, 42)) as pilot:
        await asyncio.to_thread(send, url, PROMPTS[:expected])
        for _ in range(400):
            rows = [r for r in app.state.records.values() if r.tag.startswith("log")]
            if len(rows) >= expected:
                break
            await pilot.pause(0.1)
        table = app.query_one("RequestsTable")
        shown = {str(table.get_cell(r.request_id, "who")) for r in rows}
        assert shown == {f"log s{r.tag.split()[-1]}" for r in rows}
        return rows


async def test_every_request_in_the_log_matches_the_metrics_deltas(
    llama_server, draft_args: list[str]
) -> None:
    server: ServerProcess = llama_server(*draft_args)
    before = counters(server.url)
    settings = Settings(server_url=server.url, server_log=str(server.log_path), interval_s=0.2)
    rows = await watched_rows(settings, server.url, 3)
    after = counters(server.url)
    assert len(rows) == 3
    assert sum(r.draft_n or 0 for r in rows) == after[0] - before[0] > 0
    assert sum(r.draft_n_accepted or 0 for r in rows) == after[1] - before[1]
    assert sorted(r.committed_tokens for r in rows) == [16, 20, 24]
    assert all(r.concurrency_max is None or r.concurrency_max >= 1 for r in rows)  # each ran in a slot


async def test_server_log_from_a_pipe(llama_server, draft_args: list[str]) -> None:
    server: ServerProcess = llama_server(*draft_args)
    # a real pipe carrying the server's log as it is written
    tail = subprocess.Popen(["tail", "-F", "-n", "0", str(server.log_path)], stdout=subprocess.PIPE)
    try:
        assert tail.stdout is not None
        settings = Settings(server_url=server.url, server_log="-", server_log_fd=tail.stdout.fileno())
        rows = await watched_rows(settings, server.url, 2)
        assert sorted(r.committed_tokens for r in rows) == [16, 20]
    finally:
        tail.kill()
        tail.wait()


async def test_watch_starts_the_server_and_follows_its_log(
    llama_server_binary: str, tiny_models, draft_args: list[str], tmp_path: Path, capsys
) -> None:
    argv = llama_server_argv(
        llama_server_binary,
        tiny_models.target_path,
        free_port(),
        "--metrics",
        "-np",
        "2",
        "-t",
        "1",
        *draft_args,
    )
    parser = argparse.ArgumentParser()
    watch.add_options(parser)  # the command's own parser keeps the argv after -- whole
    args_ns = parser.parse_args(["--meter", "none", "--", *argv])
    assert watch.server_argv(args_ns) == argv
    server = watch.start_server(argv, tmp_path)
    try:
        rows = await watched_rows(watch.watch_settings(server, args_ns), server.url, 1)
        assert rows[0].committed_tokens == 16 and rows[0].draft_n
    finally:
        server.stop()
    assert not server.running


def test_watch_prints_no_void_warning_the_dashboard_would_hide(tmp_path: Path, capsys) -> None:
    # the dashboard says it (tests/tui/test_watch_void.py); a line printed first is hidden by it
    argv = [str(tmp_path / "no-such-llama-server"), "-m", "t.gguf", "-md", "d.gguf"]
    with pytest.raises(SpectopError, match="cannot start"):
        watch.start_server(argv, tmp_path)
    assert "--spec-type" not in capsys.readouterr().err
