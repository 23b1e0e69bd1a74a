"""`spectop doctor --server` on healthy vLLM and SGLang servers: the dialect and version found,
its /metrics as spectop reads it, and exit 0 (an optional endpoint left off is "skipped", not a failure).

The fakes serve what the released servers serve: vLLM 0.33 answers /version and /metrics and has
no load endpoint (vllm/entrypoints/openai/api_server.py); SGLang 0.5.23 answers /server_info with
`version` and /v1/loads (sglang/srt/entrypoints/http_server.py); /v1/loads is new in 0.5.8, so an
older SGLang answers it 404; /metrics exists only with --enable-metrics.
"""

from __future__ import annotations

from collectors.checkup import run_doctor
from tests.support.fake_servers import FakeVllm, VllmEngine, mock_client
from tests.support.fake_sglang import FakeSglang, SglangRank
from tests.support.loopback import serving
from tui.cli import main


def _rows(report):
    return {r.name.rsplit(":", 1)[-1]: r for r in report.rows if r.kind == "server"}


def test_healthy_vllm_names_itself_and_its_version_and_passes():
    fake = FakeVllm([VllmEngine()], dev_mode=True)  # /server_info gives the speculative config
    report = run_doctor("none", "http://srv:8000", client=mock_client(fake))
    rows = _rows(report)
    assert "vLLM 0.33.0 answers (backend vllm)" in rows["8000"].message
    assert rows["8000/metrics"].status == "ok" and "drafting (eagle3 k=3)" in rows["8000/metrics"].message
    assert report.ok


def test_healthy_sglang_names_itself_and_its_version_and_passes():
    report = run_doctor("none", "http://srv:30000", client=mock_client(FakeSglang([SglangRank()])))
    rows = _rows(report)
    assert "SGLang 0.5.23 answers (backend sglang)" in rows["30000"].message
    assert [r.status for r in rows.values()] == ["ok", "ok", "ok", "ok"]
    assert "drafting (EAGLE3 steps=3 topk=1 draft_tokens=4)" in rows["30000/metrics"].message
    assert report.ok


def test_sglang_without_metrics_or_loads_is_healthy_and_says_what_to_turn_on():
    old = FakeSglang([SglangRank()], enable_metrics=False, old=True)
    report = run_doctor("none", "http://srv:30000", client=mock_client(old))
    rows = _rows(report)
    assert rows["30000/v1/loads"].status == "skipped" and "0.5.8" in rows["30000/v1/loads"].fix
    assert rows["30000/metrics"].status == "skipped" and "--enable-metrics" in rows["30000/metrics"].fix
    assert report.ok


def test_unhealthy_vllm_fails_the_report():
    class Sick(FakeVllm):
        def __call__(self, path, query):
            return (503, "text/plain", b"") if path == "/health" else super().__call__(path, query)

    report = run_doctor("none", "http://srv:8000", client=mock_client(Sick([VllmEngine()])))
    assert _rows(report)["8000/health"].status == "failed" and not report.ok


def test_doctor_command_exits_0_on_healthy_vllm_and_sglang(capsys):
    for fake, name in (
        (FakeVllm([VllmEngine()]), "vLLM 0.33.0"),
        (FakeSglang([SglangRank()]), "SGLang 0.5.23"),
    ):
        with serving(fake) as url:
            assert main(["doctor", "--meter", "none", "--server", url]) == 0
        out = capsys.readouterr().out
        assert f"{name} answers" in out and "/metrics: readable; drafting" in out and "FAIL" not in out
