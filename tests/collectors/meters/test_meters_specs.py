"""--meter SPEC parsing, `auto` selection with the reasons for each skipped source, doctor rows."""

from __future__ import annotations

import httpx
import pytest

from collectors.checkup import check_server, format_report, run_doctor
from collectors.errors import MeterUnavailable
from collectors.meters import choose_meter, describe_meters, open_meter, parse_spec
from collectors.meters.base import MeterInfo, MeterReading
from tests.support.fake_servers import FakeVllm, VllmEngine, mock_client
from tests.support.fake_sglang import FakeSglang, SglangRank
from tests.support.meter_fakes import this_machine_has_a_meter


class Dummy:
    def __init__(self, name: str, method: str = "counter") -> None:
        self.info = MeterInfo(name, (f"{name} device",), "GPU board", method, 0.1, detail="d")
        self.closed = False

    def read(self) -> MeterReading:
        return MeterReading(0.0, 0.0)

    def close(self) -> None:
        self.closed = True


def failing(what: str, fix: str):
    def opener(arg):
        raise MeterUnavailable(what, fix)

    return opener


def openers(**overrides):
    base = {
        "nvml": failing("no NVIDIA driver: libnvidia-ml.so.1 (NVML) not found", "install the driver"),
        "amd": failing("no AMD GPU found", "install ROCm"),
        "rapl": failing("no RAPL powercap interface under /sys/class/powercap", "modprobe"),
        "macmon": failing("macmon reads Apple silicon power, and this is not macOS", "use another"),
        "estimate": lambda arg: Dummy("estimate", "estimate"),
    }
    return base | overrides


@pytest.mark.parametrize(
    ("spec", "parsed"),
    [
        ("auto", ("auto", None)),
        ("", ("auto", None)),
        ("nvml", ("nvml", None)),
        ("NVML:0,1", ("nvml", "0,1")),
        ("dcgm=http://gpu:9400/metrics?period=1", ("dcgm", "http://gpu:9400/metrics?period=1")),
        ("prometheus=http://prom:9090", ("prometheus", "http://prom:9090")),
        ("estimate=65", ("estimate", "65")),
        ("none", ("none", None)),
    ],
)
def test_parse_spec(spec, parsed):
    assert parse_spec(spec) == parsed


@pytest.mark.parametrize("spec", ["gpu", "http://gpu:9400/metrics", "none=1", "nvidia:0"])
def test_bad_spec_names_it_and_lists_valid_ones(spec):
    with pytest.raises(MeterUnavailable) as info:
        parse_spec(spec)
    assert repr(spec) in info.value.what
    assert "nvml[:0,1]" in info.value.fix and "dcgm=URL" in info.value.fix and "estimate" in info.value.fix


def test_auto_picks_the_first_working_source_and_says_why_others_were_skipped():
    choice = choose_meter("auto", openers=openers(rapl=lambda arg: Dummy("rapl")))
    assert choice.meter.info.name == "rapl"
    assert [(r.name, r.ok) for r in choice.results] == [("nvml", False), ("amd", False), ("rapl", True)]
    assert "no NVIDIA driver" in choice.results[0].message and choice.results[0].fix == "install the driver"
    assert choice.meter.probe_results == choice.results  # also reachable from the meter itself


def test_auto_falls_back_to_the_labelled_estimate():
    choice = choose_meter("auto", openers=openers())
    assert choice.meter.info.method == "estimate"
    assert "ESTIMATE" in choice.results[-1].message
    assert len(choice.results) == 5


def test_auto_with_nothing_working_and_named_meter_failures():
    with pytest.raises(MeterUnavailable, match="no power meter works here") as info:
        choose_meter("auto", openers=openers(estimate=failing("broken", "x")))
    assert "nvml: no NVIDIA driver" in info.value.what and "--meter none" in info.value.fix
    with pytest.raises(MeterUnavailable, match="meter 'rapl': no RAPL") as info:
        choose_meter("rapl", openers=openers())
    assert info.value.fix == "modprobe"


def test_named_meters_get_their_argument_and_none_is_none():
    seen = []
    choice = choose_meter("nvml:0,1", openers=openers(nvml=lambda arg: seen.append(arg) or Dummy("nvml")))
    assert seen == ["0,1"] and choice.meter.info.name == "nvml"
    assert choose_meter("none").meter is None
    assert open_meter("none") is None


def test_unexpected_library_errors_become_results_not_tracebacks():
    def crash(arg):
        raise KeyError("surprise")

    choice = choose_meter("auto", openers=openers(nvml=crash))
    assert choice.results[0].message == "KeyError: 'surprise'" and choice.meter.info.name == "estimate"


def test_real_spec_errors_are_meter_unavailable():
    with pytest.raises(MeterUnavailable, match="bad GPU indices"):
        open_meter("nvml:zero")
    with pytest.raises(MeterUnavailable, match="needs a URL"):
        open_meter("dcgm")
    with pytest.raises(MeterUnavailable, match="bad TDP"):
        open_meter("estimate=lots")


def test_help_and_descriptions_cover_every_spec():
    specs = [s for s, _ in describe_meters()]
    for name in (
        "auto",
        "nvml",
        "amd",
        "rapl",
        "macmon",
        "dcgm=URL",
        "node=URL",
        "prometheus=URL",
        "estimate",
        "none",
    ):
        assert any(s.startswith(name) for s in specs)


def test_doctor_rows_and_report():
    report = run_doctor("auto", openers=openers())
    chosen = report.chosen
    assert chosen is not None and chosen.name == "estimate" and report.ok
    failed = {r.name: r for r in report.rows if r.status == "failed"}
    assert set(failed) == {"nvml", "amd", "rapl", "macmon"} and all(r.fix for r in failed.values())
    assert {r.name for r in report.rows if r.status == "skipped"} == {"dcgm", "node", "prometheus"}
    text = format_report(report)
    assert "[FAIL] meter nvml: no NVIDIA driver" in text and "fix: install the driver" in text
    assert "using meter: estimate (an ESTIMATE" in text
    data = report.to_dict()
    assert data["meter"] == "estimate" and len(data["checks"]) == len(report.rows)


def test_doctor_with_nothing_working_is_not_ok():
    report = run_doctor("auto", openers=openers(estimate=failing("broken", "x")))
    assert not report.ok and report.chosen is None
    assert "no power meter works here" in format_report(report)
    bad = run_doctor("gpu")
    assert not bad.ok and "unknown meter" in bad.rows[0].message


def async_client(handler) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


def test_server_check_detects_the_dialect_and_checks_its_own_endpoints():
    def llama(request):
        if request.url.path == "/health":
            return httpx.Response(200, json={"status": "ok"})
        if request.url.path == "/slots":
            return httpx.Response(501, json={"error": {"message": "This server does not support slots"}})
        return httpx.Response(200, json={"model_path": "/models/qwen.gguf", "build_info": "b5000"})

    rows = check_server("http://srv:8080/", async_client(llama))
    assert [(r.name, r.status) for r in rows] == [
        ("http://srv:8080", "ok"),
        ("http://srv:8080/health", "ok"),
        ("http://srv:8080/slots", "skipped"),
        ("http://srv:8080/metrics", "skipped"),  # a JSON answer is no metrics page
    ]
    assert "llama-server" in rows[0].message and "llama.cpp" in rows[0].message
    assert "--no-slots" in rows[2].fix

    rows = check_server("http://srv:8000", mock_client(FakeVllm([VllmEngine()])))
    assert [(r.name, r.status) for r in rows] == [
        ("http://srv:8000", "ok"),
        ("http://srv:8000/health", "ok"),
        ("http://srv:8000/metrics", "ok"),
    ]
    assert "vLLM" in rows[0].message  # no load endpoint: vLLM's running requests are on /metrics

    rows = check_server("http://srv:30000", mock_client(FakeSglang([SglangRank()])))
    assert [r.name for r in rows] == [
        "http://srv:30000",
        "http://srv:30000/health",
        "http://srv:30000/v1/loads",
        "http://srv:30000/metrics",
    ]
    assert all(r.status == "ok" for r in rows) and "SGLang" in rows[0].message


def test_server_check_failures_say_how_to_fix_them():
    def loading(request):
        return httpx.Response(503, json={"error": {"message": "Loading model"}})

    rows = check_server("http://srv:8080", async_client(loading))
    assert rows[0].status == "failed" and "503" in rows[0].message and "loading" in rows[0].fix
    assert rows[1].status == "failed" and "not as llama-server" in rows[1].message and rows[1].fix

    def needs_key(request):
        return httpx.Response(200 if request.url.path == "/health" else 401, text="")

    rows = check_server("http://srv:8080", async_client(needs_key))
    assert rows[-1].status == "failed" and "API key" in rows[-1].message and "--api-key" in rows[-1].fix
    rows = check_server("http://127.0.0.1:9")
    assert len(rows) == 1 and rows[0].status == "failed" and "start the server" in rows[0].fix
    rows = check_server("localhost:8080")
    assert rows[0].status == "failed" and "--server http://" in rows[0].fix


def test_server_check_shows_only_a_short_line_of_server_text():
    def chatty(request):
        if request.url.path == "/health":
            return httpx.Response(500, text="[bold red]boom[/]\n" * 200)
        return httpx.Response(200, json={"build_info": "b5000", "total_slots": 1})

    rows = check_server("http://srv:8080", async_client(chatty))
    health = next(r for r in rows if r.name.endswith("/health"))
    assert health.status == "failed" and "\n" not in health.message and len(health.message) <= 90


@pytest.mark.skipif(this_machine_has_a_meter(), reason="this machine has a GPU, RAPL or is a Mac")
def test_doctor_on_a_machine_without_sensors():
    report = run_doctor("auto")
    rows = {r.name: r for r in report.rows}
    assert rows["nvml"].status == "failed" and "no NVIDIA driver" in rows["nvml"].message
    assert rows["rapl"].status == "failed" and "no RAPL" in rows["rapl"].message
    assert rows["macmon"].status == "failed" and "not macOS" in rows["macmon"].message
    assert rows["amd"].status == "failed"
    assert report.chosen is rows["estimate"] and "ESTIMATE" in rows["estimate"].message
    assert report.ok
