"""The headless commands against a server that answers badly, endlessly or not at all, run as a
user runs them (a subprocess): one line on stderr naming the endpoint, exit code 2, no traceback;
a sweep ends with its summary and its own exit code."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.captures import read_json
from tests.support.fault_server import (
    Drop,
    FaultServer,
    Hang,
    Reply,
    Script,
    Stream,
    endless,
    events,
    llama_routes,
)

pytestmark = pytest.mark.slow  # the CLI in a subprocess against fault servers, and sweeps

PROPS = read_json("draft-simple.props.json")
TOKEN = {"content": "x", "tokens_predicted": 1, "stop": False}


def spectop(*args: str) -> subprocess.CompletedProcess[str]:
    # timeout: a hang here would be the bug under test; it fails the test instead of the run
    return subprocess.run(
        [sys.executable, "-m", "tui.cli", *args], capture_output=True, text=True, timeout=120, check=False
    )


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("spectop: "), result.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("faults", "says"),
    [
        ({"/props": Reply({**PROPS, "total_slots": "four"})}, "/props answered a `total_slots` that is not"),
        ({"/slots": Reply({"id": 0})}, "/slots answered something that is not a list"),
        ({"/slots": Reply([{"id": 0, "next_token": "x"}])}, "/slots answered a `[0].next_token` that is not"),
        ({"/slots": Reply(b"\xff\xfe[")}, "/slots answered something that is not JSON"),
        (
            {"/metrics": Stream(lambda: iter(lambda: b"# x\n" * 4096, None))},
            "/metrics sent a page longer than 8 MB",
        ),
        ({"/slots": Hang()}, "/slots accepted the connection but did not answer within 3 s"),
        ({"/slots": Drop()}, "/slots closed the connection before its answer was complete"),
    ],
    ids=["props-type", "slots-object", "slots-field", "slots-not-utf8", "endless-page", "hang", "drop"],
)
def test_snapshot_of_a_server_it_cannot_read(faults, says):
    with FaultServer(faults) as server:
        line = one_line(spectop("snapshot", "--server", server.url, "--meter", "none"))
    assert says in line and "cannot reach" not in line


def test_snapshot_of_a_server_with_junk_metrics_shows_the_rest():
    with FaultServer({"/metrics": Reply("<html>", content_type="text/html")}) as server:
        result = spectop("snapshot", "--server", server.url, "--meter", "none", "--window", "0.1")
    assert result.returncode == 0 and not result.stderr
    assert "tiny-target.gguf" in result.stdout and "unreadable" in result.stdout


def test_snapshot_of_a_server_that_hangs_before_detection_is_a_timeout():
    with FaultServer({"/props": Hang()}) as server:
        line = one_line(spectop("snapshot", "--server", server.url, "--meter", "none"))
    assert "/props accepted the connection but did not answer within 3 s" in line


@pytest.mark.parametrize(
    ("stream", "says"),
    [
        (Stream(events("42")), "/completion streamed an event that is not a JSON object"),
        (
            Stream(events({**TOKEN, "tokens_predicted": [1]})),
            "a `tokens_predicted` that is not a whole number",
        ),
        (Stream(endless(TOKEN)), "/completion sent more than 96 events for 8 tokens"),
        (Stream(events(TOKEN, TOKEN), drop=True), "/completion closed the connection before"),
        (
            Reply(b"\x1f\x8b not gzip", headers={"Content-Encoding": "gzip"}),
            "/completion sent a body that cannot be decoded",
        ),
        (Stream(lambda: iter(lambda: b"x" * 65536, None), status=500), "/completion answered HTTP 500: xxx"),
    ],
    ids=["not-object", "wrong-type", "endless", "dropped", "undecodable", "endless-error-body"],
)
def test_probe_of_a_stream_it_cannot_read(stream, says):
    with FaultServer({"/completion": stream}) as server:
        line = one_line(spectop("probe", "--server", server.url, "--meter", "none", "--tokens", "8"))
    assert says in line


def test_sweep_that_fails_twice_ends_with_its_summary(tmp_path):
    bad = {"/completion": Stream(events("42"))}
    with FaultServer() as plain, FaultServer(bad) as draft:
        result = spectop(
            "sweep", "--plain", plain.url, "--draft", draft.url, "--meter", "none", "--batches", "1",
            "--passes", "1", "--tokens", "48", "--idle", "0", "--results", str(tmp_path),
        )  # fmt: skip
    assert result.returncode == 1 and "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert (
        last.startswith("spectop: sweep stopped: ") and "streamed an event that is not a JSON object" in last
    )
    assert "1 completed points saved" in last
    assert len(list(tmp_path.glob("*/summary.json"))) == 1


def test_sweep_outlives_one_bad_stream(tmp_path):
    once = {"/completion": Script(Stream(events("42")), llama_routes()["/completion"])}
    with FaultServer() as plain, FaultServer(once) as draft:
        result = spectop(
            "sweep", "--plain", plain.url, "--draft", draft.url, "--meter", "none", "--batches", "1",
            "--passes", "1", "--tokens", "48", "--idle", "0", "--results", str(tmp_path), "--json",
        )  # fmt: skip
    # 3: finished, but the fake server's points are no trustworthy pair (tui/commands/sweep.py)
    assert result.returncode in (0, 3), result.stderr
    assert '"error": null' in result.stdout and '"points": 3' in result.stdout


@pytest.mark.parametrize("port", ["99999", "0"])
def test_a_server_url_with_a_port_out_of_range_is_one_line(port):
    line = one_line(spectop("snapshot", "--server", f"http://127.0.0.1:{port}"))
    assert f"port {port} is not 1-65535" in line


def test_an_error_no_part_of_spectop_expected_is_one_line_naming_it(monkeypatch, capsys):
    from tui import cli

    def boom(args):  # what a library may raise from inside an event loop: a group, nested
        raise ExceptionGroup(  # noqa: F821 (Python 3.11, which CI runs; the project reads 3.10 too)
            "unhandled errors in a TaskGroup", [OverflowError("connect(): port must be 0-65535.")]
        )

    args = cli.parse(["snapshot", "--server", "http://127.0.0.1:8080"])
    monkeypatch.setattr(cli, "parse", lambda argv: args)
    monkeypatch.setattr(args, "run", boom)
    monkeypatch.delenv("SPECTOP_DEBUG", raising=False)
    assert cli.main(["snapshot"]) == 1
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        "spectop: unexpected OverflowError: connect(): port must be 0-65535. "
        "(please report it; SPECTOP_DEBUG=1 shows the traceback)"
    ]


def test_a_host_name_that_does_not_resolve_is_said_so():
    # .invalid never resolves (RFC 2606): no lookup can succeed, here or on any machine
    line = one_line(spectop("snapshot", "--server", "http://no-such-host.invalid:8080"))
    assert "the name no-such-host.invalid did not resolve" in line and "ConnectError" not in line
