"""Remote meters: dcgm-exporter (two GPUs, MIG host, counter reset), node_exporter RAPL, Prometheus API."""

from __future__ import annotations

import http.server
import json
import threading
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from collectors.errors import MeterUnavailable
from collectors.meters.exporters import ExporterMeter, PrometheusMeter
from tests.support.fake_exporters import (
    NODE_ZONES,
    DcgmExporter,
    DcgmGpu,
    RaplZoneRow,
    node_page,
    prom_vector,
)
from tests.support.meter_fakes import FakeClock


def client_for(handler) -> httpx.Client:
    return httpx.Client(transport=httpx.MockTransport(handler))


def dcgm_meter(exporter: DcgmExporter, url: str = "http://gpu-box:9400/metrics", **kw):
    clock = FakeClock()
    meter = ExporterMeter(url, "dcgm", client=client_for(exporter.handler), clock=clock, **kw)
    return meter, clock


def test_dcgm_two_gpus_counter():
    gpus = [DcgmGpu(0, "GPU-aaaa"), DcgmGpu(1, "GPU-bbbb", energy_mj=5_000)]
    exporter = DcgmExporter(gpus)
    meter, clock = dcgm_meter(exporter)
    info = meter.info
    assert info.name == "dcgm" and info.method == "counter" and info.boundary == "GPU board (remote)"
    assert info.devices == ("NVIDIA H100 80GB HBM3 #0 @gpu-box", "NVIDIA H100 80GB HBM3 #1 @gpu-box")
    assert info.update_period_s == 30.0  # dcgm-exporter's default collect interval
    assert any("-c 1000" in n for n in info.notes)
    assert meter.read().energy_j == 0.0
    clock.advance(2.0)
    gpus[0].advance(2.0, 400.0)
    gpus[1].advance(2.0, 250.0)
    r = meter.read()
    assert r.energy_j == pytest.approx(1300.0)  # mJ counter -> J, both GPUs
    assert r.power_w == pytest.approx(650.0)


def test_dcgm_mig_rows_count_once_per_gpu():
    mig = DcgmGpu(0, "GPU-mig0", model="NVIDIA A100-SXM4-80GB", mig_instances=(1, 5, 7, 13))
    whole = DcgmGpu(1, "GPU-full", model="NVIDIA A100-SXM4-80GB")
    exporter = DcgmExporter([mig, whole], host_label="hostname")  # newer exporters: lower case
    meter, clock = dcgm_meter(exporter)
    assert exporter.page().count("GPU-mig0") == 3 * 4  # the page really repeats the GPU per instance
    assert len(meter.info.devices) == 2
    assert any("MIG" in n and "other tenants" in n for n in meter.info.notes)
    meter.read()
    clock.advance(1.0)
    mig.advance(1.0, 300.0)
    whole.advance(1.0, 200.0)
    r = meter.read()
    assert r.energy_j == pytest.approx(500.0)
    assert r.power_w == pytest.approx(500.0)


def test_dcgm_counter_reset_does_not_go_negative():
    gpu = DcgmGpu(0, "GPU-aaaa")
    meter, clock = dcgm_meter(DcgmExporter([gpu]))
    meter.read()
    clock.advance(1.0)
    gpu.advance(1.0, 300.0)
    before = meter.read().energy_j
    clock.advance(1.0)
    gpu.energy_mj = 120_000  # driver reloaded: the counter restarted, 120 J since then
    after = meter.read().energy_j
    assert after == pytest.approx(before + 120.0)
    clock.advance(1.0)
    gpu.advance(1.0, 300.0)
    assert meter.read().energy_j == pytest.approx(after + 300.0)


def test_dcgm_power_only_is_integrated_and_period_option_is_ours():
    gpu = DcgmGpu(0, "GPU-aaaa", power_w=200.0)
    exporter = DcgmExporter([gpu], with_energy=False)
    meter, clock = dcgm_meter(exporter, url="gpu-box:9400?period=1")
    assert exporter.requests[0].url == "http://gpu-box:9400/metrics"  # ?period= stays here
    assert meter.info.method == "integrated" and meter.info.update_period_s == 1.0
    assert not any("-c 1000" in n for n in meter.info.notes)
    meter.read()
    clock.advance(3.0)
    assert meter.read().energy_j == pytest.approx(600.0)


def test_reads_are_throttled_to_the_minimum_interval():
    exporter = DcgmExporter([DcgmGpu(0, "GPU-aaaa")])
    meter, clock = dcgm_meter(exporter, min_interval_s=1.0)
    n = len(exporter.requests)
    clock.advance(0.2)
    first = meter.read()
    clock.advance(0.2)
    assert meter.read() is first and len(exporter.requests) == n
    clock.advance(1.0)
    meter.read()
    assert len(exporter.requests) == n + 1


def test_not_a_dcgm_page():
    def llama_metrics(request):
        return httpx.Response(
            200, text="# TYPE llamacpp:prompt_tokens_total counter\nllamacpp:prompt_tokens_total 10\n"
        )

    with pytest.raises(MeterUnavailable, match="has no GPU power series") as info:
        ExporterMeter("http://srv:8080/metrics", "dcgm", client=client_for(llama_metrics))
    assert ":9400/metrics" in info.value.fix


def test_bad_period_and_bad_url():
    exporter = DcgmExporter([DcgmGpu(0, "GPU-aaaa")])
    with pytest.raises(MeterUnavailable, match="bad period"):
        dcgm_meter(exporter, url="http://gpu-box:9400/metrics?period=soon")
    with pytest.raises(MeterUnavailable, match="not a URL"):
        dcgm_meter(exporter, url="http://")


class _Page(http.server.BaseHTTPRequestHandler):
    body = b""

    def do_GET(self):  # noqa: N802 (http.server's naming)
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


def test_real_loopback_exporter_and_a_dead_port():
    exporter = DcgmExporter([DcgmGpu(0, "GPU-aaaa"), DcgmGpu(1, "GPU-bbbb")])
    handler = type("Handler", (_Page,), {"body": exporter.page().encode()})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    try:
        meter = ExporterMeter(f"http://127.0.0.1:{port}", "dcgm")
        assert len(meter.info.devices) == 2 and meter.read().energy_j == 0.0
        meter.close()
    finally:
        server.shutdown()
        server.server_close()
    with pytest.raises(MeterUnavailable, match="did not answer") as info:
        ExporterMeter(f"http://127.0.0.1:{port}/metrics", "dcgm")
    assert "reachable" in info.value.fix


def test_node_exporter_rapl_packages_and_dram_only():
    zones = [RaplZoneRow(z.metric, z.index, z.path, z.joules) for z in NODE_ZONES]
    clock = FakeClock()
    meter = ExporterMeter(
        "http://cpu-box:9100",
        "node",
        client=client_for(lambda r: httpx.Response(200, text=node_page(zones))),
        clock=clock,
    )
    info = meter.info
    assert info.name == "node" and info.method == "counter" and info.boundary == "CPU package (remote RAPL)"
    assert sorted(info.devices) == ["CPU dram-2", "CPU package-0", "CPU package-1"]
    assert info.update_period_s == 1.0
    meter.read()
    for z in zones:
        z.joules += 10.0  # every zone moves; only package-0, package-1 and dram may count
    clock.advance(1.0)
    assert meter.read().energy_j == pytest.approx(30.0)


def test_node_exporter_without_rapl_explains_root():
    page = node_page([])
    with pytest.raises(MeterUnavailable, match="no RAPL series") as info:
        ExporterMeter(
            "http://cpu-box:9100/metrics", "node", client=client_for(lambda r: httpx.Response(200, text=page))
        )
    assert "root" in info.value.fix


class FakePrometheus:
    def __init__(self, dcgm_rows, node_rows=()):
        self.dcgm_rows, self.node_rows, self.queries = dcgm_rows, list(node_rows), []

    def handler(self, request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/api/v1/query"
        query = parse_qs(urlsplit(str(request.url)).query)["query"][0]
        self.queries.append(query)
        rows = self.dcgm_rows if query.startswith("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION") else self.node_rows
        return httpx.Response(200, text=prom_vector(rows))


def dcgm_row(name, host, uuid, value, **extra):
    labels = {
        "__name__": name,
        "gpu": "0",
        "UUID": uuid,
        "modelName": "NVIDIA H200",
        "Hostname": host,
        "instance": f"{host}:9400",
        "job": "dcgm",
    }
    return labels | extra, value


def test_prometheus_dcgm_counter_by_host_with_mig_rows():
    energy = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"
    rows = [
        dcgm_row(energy, "a", "GPU-a", 1_000_000),
        dcgm_row(energy, "a", "GPU-a", 1_000_000, GPU_I_ID="1"),
        dcgm_row(energy, "a", "GPU-a", 1_000_000, GPU_I_ID="2"),
        dcgm_row("DCGM_FI_DEV_POWER_USAGE", "a", "GPU-a", 300.0),
        dcgm_row(energy, "b", "GPU-b", 7_000_000),
    ]
    prom = FakePrometheus(rows)
    clock = FakeClock()
    meter = PrometheusMeter("http://prom:9090/?host=a", client=client_for(prom.handler), clock=clock)
    assert meter.info.name == "prometheus" and meter.info.devices == ("NVIDIA H200 #0 @a",)
    assert meter.info.update_period_s == 60.0
    meter.read()
    prom.dcgm_rows = [(labels, v + 50_000 if "ENERGY" in labels["__name__"] else v) for labels, v in rows]
    clock.advance(1.0)
    r = meter.read()
    assert r.energy_j == pytest.approx(50.0)  # host b and the MIG duplicates left out
    assert r.power_w == pytest.approx(300.0)


def test_prometheus_falls_back_to_node_rapl():
    node = [
        (
            {
                "__name__": "node_rapl_package_joules_total",
                "index": "0",
                "path": "/sys/class/powercap/intel-rapl:0",
                "instance": "cpu:9100",
            },
            100.0,
        ),
        (
            {
                "__name__": "node_rapl_core_joules_total",
                "index": "0",
                "path": "/sys/class/powercap/intel-rapl:0:0",
                "instance": "cpu:9100",
            },
            60.0,
        ),
    ]
    prom = FakePrometheus([], node)
    meter = PrometheusMeter("prom:9090?period=15", client=client_for(prom.handler), clock=FakeClock())
    assert len(prom.queries) == 2 and "node_rapl" in prom.queries[1]
    assert meter.info.boundary == "CPU package (remote RAPL)" and meter.info.update_period_s == 15.0
    assert meter.info.devices == ("CPU package-0 @cpu:9100",)


def test_prometheus_errors_are_one_line():
    def error(request):
        return httpx.Response(400, json={"status": "error", "errorType": "bad_data", "error": "parse error"})

    with pytest.raises(MeterUnavailable, match="did not answer"):
        PrometheusMeter("http://prom:9090", client=client_for(error))
    with pytest.raises(MeterUnavailable, match="no DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"):
        PrometheusMeter("http://prom:9090", client=client_for(FakePrometheus([]).handler))

    def not_prometheus(request):
        return httpx.Response(200, text="<html>Grafana</html>")

    with pytest.raises(MeterUnavailable, match="unreadable answer"):
        PrometheusMeter("http://prom:9090", client=client_for(not_prometheus))
    assert json.loads(prom_vector([]))["status"] == "success"
