"""A password in a server's URL (`--server http://admin:PW@host`) is a secret: it reaches the server
as Basic auth and nothing else: not the top bar, not the recording, not the proxy's error reply to
its clients, not the exporter's page, not a meter's error."""

from __future__ import annotations

import asyncio
import base64
import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from collectors.errors import MeterUnavailable
from collectors.launch.process import free_port
from collectors.meters import choose_meter
from collectors.requests.proxy_server import ListenAddress, ProxyServer
from collectors.servers import check_url
from tests.support.hostile_server import captured_llama, serving
from tui.cli import main

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "s3cretPW-in-url"
BASIC = "Basic " + base64.b64encode(f"admin:{PASSWORD}".encode()).decode()


def with_password(url: str) -> str:
    return url.replace("http://", f"http://admin:{PASSWORD}@")


def test_the_dashboard_sends_the_password_and_shows_and_records_none(tmp_path, monkeypatch):
    seen: list = []
    screens: list[str] = []
    record = tmp_path / "session.jsonl"
    proxy_port = free_port()

    def run_app(app) -> int:  # the dashboard as the CLI starts it, driven headless
        async def drive() -> None:
            async with app.run_test(size=(160, 45)) as pilot:
                for _ in range(100):
                    await pilot.pause(0.1)
                    screen = "\n".join(s.text for s in app.screen._compositor.render_strips())
                    if "/completion" in str(seen) and "connecting" not in screen:
                        break
                    if len(seen) > 3 and not any(p == "/completion" for p, _ in seen):
                        # a request through the proxy: it carries the client's headers, the
                        # password is added upstream
                        await asyncio.to_thread(
                            httpx.post, f"http://127.0.0.1:{proxy_port}/completion", json={"prompt": "p"}
                        )
                screens.append(screen)

        asyncio.run(drive())
        return 0

    monkeypatch.setattr("tui.commands.dashboard.run_app", run_app)
    with serving(captured_llama, seen) as url:
        code = main(
            ["--server", with_password(url), "--meter", "none", "--record", str(record)]
            + ["--proxy", str(proxy_port)]
        )
    assert code == 0 and screens
    assert url.removeprefix("http://") in screens[0] and PASSWORD not in screens[0]
    assert "admin" not in screens[0]
    assert seen and all(headers.get("Authorization") == BASIC for _, headers in seen)
    assert "/completion" in [path for path, _ in seen]
    text = record.read_text(encoding="utf-8")
    assert json.loads(text.splitlines()[0])["server_url"] == url
    assert PASSWORD not in text and "admin" not in text


def test_the_proxy_error_reply_names_the_server_without_its_password():
    closed = f"http://127.0.0.1:{free_port()}"
    with ProxyServer(
        check_url(with_password(closed)), ListenAddress("127.0.0.1", 0), lambda r: None
    ) as proxy:
        answer = httpx.post(proxy.url + "/completion", json={"prompt": "p"}, trust_env=False)
    assert answer.status_code == 502
    message = answer.json()["error"]["message"]
    assert closed in message and PASSWORD not in answer.text and "admin" not in answer.text


def test_the_exporter_page_has_no_password():
    seen: list = []
    port = free_port()
    with serving(captured_llama, seen) as url:
        args = ["export", "--server", with_password(url), "--meter", "none", "--interval", "0.2"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "tui", *args, "--listen", f"127.0.0.1:{port}"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert proc.stderr is not None and "serving" in proc.stderr.readline()
            page = ""
            for _ in range(100):
                page = httpx.get(f"http://127.0.0.1:{port}/metrics", trust_env=False).text
                if "spectop_up" in page and 'backend="llama.cpp"' in page:
                    break
                time.sleep(0.2)
        finally:
            proc.terminate()
            out, err = proc.communicate(timeout=30)
    assert f'server="{url}"' in page
    assert PASSWORD not in page + out + err and "admin" not in page
    assert seen and all(headers.get("Authorization") == BASIC for _, headers in seen)


@pytest.mark.parametrize("spec", [f"dcgm=http://admin:{PASSWORD}@127.0.0.1:{{port}}/metrics", "bogus=x"])
def test_a_meter_url_password_is_not_in_its_error(spec):
    with pytest.raises(MeterUnavailable) as failed:
        choose_meter(spec.format(port=free_port()).replace("bogus=x", f"bogus=http://a:{PASSWORD}@h"))
    assert PASSWORD not in f"{failed.value.what} {failed.value.fix}"
