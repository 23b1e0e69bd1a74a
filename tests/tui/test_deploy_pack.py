"""The Prometheus + Grafana pack `spectop deploy` writes: its alert rules and dashboard read only series
the exporter serves (checked against a real page), its files hang together, and its spectop service
(run-spectop.sh) serves two servers under one meter when run as the container runs it."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from collectors.export.exporter import SpectopExporter
from collectors.meters import MeterInfo, MeterReading
from collectors.servers.snapshot import ServerSnapshot
from collectors.sweep.summary import summary_of
from collectors.sweep.textfile import SweepSeries
from tests.support.cli_runs import spectop
from tests.support.processes import reaped
from tests.support.sweep_rows import note25_rows, points

PROMQL_WORDS = {"and", "or", "unless", "offset", "bool", "group_left", "group_right"}


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression reads (not functions, labels, strings or keywords)."""
    expr = re.sub(r'"[^"]*"', "", expr)
    expr = re.sub(r"\{[^}]*\}|\[[^\]]*\]", "", expr)
    expr = re.sub(r"\b(by|without|on|ignoring)\s*\([^)]*\)", "", expr)
    names = set()
    for match in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", expr):
        if match.group(0) in PROMQL_WORDS or expr[match.end() :].lstrip().startswith("("):
            continue
        names.add(match.group(0))
    return names


def test_metric_names_are_read_out_of_promql():
    expr = 'sum by (server) (rate(spectop_energy_joules_total{meter="x"}[5m])) > 1 and spectop_up == 1'
    assert metric_names(expr) == {"spectop_energy_joules_total", "spectop_up"}


class _Sampler:
    reads_on_marks = False  # its readings are given: nothing to read at a poll

    def __init__(self) -> None:
        self.meter = type("Meter", (), {"info": MeterInfo("dcgm", ("gpu0",), "GPU", "counter", 0.1)})()

    def readings(self, since_t_s=None):
        return [
            MeterReading(t / 10, 3.5 * t, 35.0) for t in range(101) if since_t_s is None or t / 10 > since_t_s
        ]


def served_names() -> set[str]:
    """Every sample name on a page of a drafting server with an idle spell, a meter and a sweep."""
    summary = summary_of(points(note25_rows()))
    exporter = SpectopExporter(None, _Sampler(), summary=summary)
    for t in range(1, 11):
        busy = t > 2
        exporter.update(
            ServerSnapshot(
                url="http://d", backend="llama.cpp", taken_at_s=float(t), status="ok", window_s=1.0,
                window_tokens=125 if busy else 0, slots_busy=2 if busy else 0, slots_total=4,
                live_tok_s=125.0 if busy else 0.0, drafting=True, busy_slots_per_decode=2.0 if busy else None,
                window_steps=50 if busy else 0, window_drafted=150 if busy else 0,
                window_accepted=70 if busy else 0, window_per_position=(40, 20, 10) if busy else (),
            )
        )  # fmt: skip
    registry = CollectorRegistry()
    registry.register(exporter)
    registry.register(SweepSeries(summary, "r"))
    return {
        s.name for f in text_string_to_metric_families(generate_latest(registry).decode()) for s in f.samples
    }


@pytest.fixture(scope="module")
def pack(tmp_path_factory) -> Path:
    pack_dir = tmp_path_factory.mktemp("fleet") / "pack"
    result = spectop("deploy", str(pack_dir))
    assert result.returncode == 0, result.stderr
    return pack_dir


@pytest.mark.slow
def test_deploy_writes_the_pack_and_the_source_to_build_from(pack):
    for name in ("compose.yaml", "Dockerfile", "prometheus.yml", "alerts.yml", "run-spectop.sh"):
        assert (pack / name).is_file()
    assert (pack / "spectop-src" / "pyproject.toml").is_file()
    assert (pack / "spectop-src" / "tui" / "deploy" / "alerts.yml").is_file()  # the image has the pack too
    assert not list((pack / "spectop-src").rglob("__pycache__"))
    again = spectop("deploy", str(pack))
    assert again.returncode == 2 and "exists and is not an empty folder" in again.stderr


def test_every_alert_reads_only_served_series(pack):
    served = served_names()
    rules = [r for g in yaml.safe_load((pack / "alerts.yml").read_text())["groups"] for r in g["rules"]]
    alerts = {r["alert"] for r in rules}
    assert {"SpectopDraftingCostsEnergy", "SpectopAcceptanceLow", "SpectopMeterStale"} <= alerts
    for rule in rules:
        names = metric_names(rule["expr"])
        assert names and names <= served, (rule["alert"], names - served)


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool (Prometheus) is not installed")
def test_promtool_loads_the_rules_and_they_fire_as_meant(pack, tmp_path):
    check = subprocess.run(
        ["promtool", "check", "rules", str(pack / "alerts.yml")], capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout + check.stderr
    # drafting costs 10 % more than plain for 12 minutes: the energy alert fires after its 10 minutes
    cases = {
        "rule_files": [str(pack / "alerts.yml")],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [
                    {"series": 'spectop_draft_energy_ratio{server="s",source="live"}', "values": "1.1x12"},
                    {"series": 'spectop_draft_energy_ratio{server="p",source="sweep"}', "values": "1.3x12"},
                ],
                "alert_rule_test": [
                    {"eval_time": "5m", "alertname": "SpectopDraftingCostsEnergy", "exp_alerts": []},
                    {
                        "eval_time": "11m",
                        "alertname": "SpectopDraftingCostsEnergy",
                        "exp_alerts": [
                            {
                                "exp_labels": {"severity": "warning", "server": "s", "source": "live"},
                                "exp_annotations": {
                                    "summary": "Drafting costs energy on s",
                                    "description": "Live drafting mJ/token is 110% of the last sweep's plain "
                                    "curve at the current batch: turn the draft off at this load, or sweep again.",
                                },
                            }
                        ],
                    },
                ],
            }
        ],
    }
    path = tmp_path / "cases.yml"
    path.write_text(yaml.safe_dump(cases))
    result = subprocess.run(["promtool", "test", "rules", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_dashboard_queries_only_served_series(pack):
    served = served_names()
    dashboard = json.loads((pack / "grafana" / "dashboards" / "spectop.json").read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    assert len(exprs) >= 10
    for expr in exprs:
        names = metric_names(expr)
        assert names and names <= served, (expr, names - served)
    (variable,) = dashboard["templating"]["list"]
    metric = re.fullmatch(r"label_values\((\w+), (\w+)\)", variable["query"]["query"])
    assert metric and metric.group(1) in served and metric.group(2) == "server"
    titles = " ".join(p["title"] for p in dashboard["panels"])
    for figure in ("mJ/token", "acceptance", "crossover", "Power"):
        assert figure in titles


def test_the_compose_files_hang_together(pack):
    compose = yaml.safe_load((pack / "compose.yaml").read_text())
    assert set(compose["services"]) == {"spectop", "prometheus", "grafana"}
    named = set(compose.get("volumes") or {})  # volumes docker keeps, declared at the top level
    for service in compose["services"].values():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            assert source in named or (pack / source).exists(), volume
    prometheus = yaml.safe_load((pack / "prometheus.yml").read_text())
    (target,) = prometheus["scrape_configs"][0]["static_configs"][0]["targets"]
    assert target == "spectop:9464" and "127.0.0.1:9464:9464" in compose["services"]["spectop"]["ports"]
    assert "0.0.0.0:9464" in (pack / "run-spectop.sh").read_text()
    assert "/etc/prometheus/alerts.yml" in prometheus["rule_files"]
    datasource = yaml.safe_load((pack / "grafana/provisioning/datasources/prometheus.yml").read_text())
    dashboard = json.loads((pack / "grafana" / "dashboards" / "spectop.json").read_text())
    assert dashboard["panels"][0]["datasource"]["uid"] == datasource["datasources"][0]["uid"]


def free_port_run(count: int) -> int:
    """The first of `count` consecutive loopback ports that were free a moment ago, below the kernel's
    ephemeral range: a port picked inside it (as `free_port` does) has neighbours any outgoing
    connection can take before the demo binds them (seen beside other test runs)."""
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    rng = random.Random()
    for _ in range(500):
        base = rng.randrange(10000, low - count)
        held: list[socket.socket] = []
        try:
            for p in range(base, base + count):
                held.append(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
                held[-1].bind(("127.0.0.1", p))
            return base
        except OSError:
            continue
        finally:
            for sock in held:
                sock.close()
    raise RuntimeError(f"no {count} consecutive free ports between 10000 and {low}")


Page = dict[str, list[dict[str, str]]]  # sample name → the label sets it is served with


def page_of(text: str) -> Page:
    page: Page = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            page.setdefault(s.name, []).append(s.labels)
    return page


def run_service(pack: Path, env: dict[str, str], done, timeout_s: float = 240) -> tuple[Page, str, int]:
    """The pack's spectop service as the container runs it (run-spectop.sh), on free loopback ports
    and with the given environment, scraped until `done(page)`: the last page, its stderr, the demo's port."""
    base = free_port_run(4)  # the demo takes base, base + 1 and base + 2; the exporter listens on base + 3
    port = base + 3
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "SPECTOP_DEMO_PORT": str(base),
        "SPECTOP_LISTEN": f"127.0.0.1:{port}",
        **env,
    }
    popen = subprocess.Popen(
        ["sh", str(pack / "run-spectop.sh"), "--interval", "0.5", "--window", "5"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # the script's demo child is stopped with it
    )
    page: Page = {}
    with reaped(popen):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and not done(page) and popen.poll() is None:
            time.sleep(1.0)
            try:
                page = page_of(httpx.get(f"http://127.0.0.1:{port}/metrics").text)
            except httpx.TransportError:
                continue
        os.killpg(popen.pid, 15)
        _, stderr = popen.communicate(timeout=10)
    return page, stderr, base


SAVED_SWEEP = Path(__file__).resolve().parents[1] / "data" / "sweeps" / "paired-20261201T223229Z"


@pytest.mark.slow
def test_the_packs_spectop_service_serves_two_servers_under_one_meter(pack):
    # a sweep the user points at (SPECTOP_SWEEP): no sweep is run before the exporter starts
    page, stderr, base = run_service(
        pack, {"SPECTOP_SWEEP": str(SAVED_SWEEP)}, lambda page: len(page.get("spectop_mj_per_token", [])) >= 2
    )
    servers = {labels["server"] for labels in page.get("spectop_mj_per_token", [])}
    assert servers == {f"http://127.0.0.1:{base}", f"http://127.0.0.1:{base + 1}"}, stderr
    assert {labels["energy"] for labels in page["spectop_mj_per_token"]} == {"shared"}
    assert "spectop_sweep_mj_per_token" in page and "quick sweep" not in stderr


def alert_reads(pack: Path, name: str) -> tuple[str, dict[str, str]]:
    """The series an alert's expression compares: its metric name and its label matchers."""
    rules = [r for g in yaml.safe_load((pack / "alerts.yml").read_text())["groups"] for r in g["rules"]]
    expr = next(r["expr"] for r in rules if r["alert"] == name)
    match = re.match(r"\s*([A-Za-z_:][A-Za-z0-9_:]*)(?:\{([^}]*)\})?", expr)
    assert match, expr
    labels = dict(re.findall(r'(\w+)="([^"]*)"', match.group(2) or ""))
    return match.group(1), labels


@pytest.mark.slow
def test_the_packs_headline_alert_has_its_series_out_of_the_box(pack, tmp_path):
    # as shipped: no sweep anywhere, so the service runs a quick one on the demo at first start
    # (sped up 4x here; mJ/token and their ratios are the speedup's invariants)
    metric, labels = alert_reads(pack, "SpectopDraftingCostsEnergy")
    assert (metric, labels) == ("spectop_draft_energy_ratio", {"source": "live"})
    results = tmp_path / "results"

    def headline(page: Page) -> bool:
        return any(labels.items() <= served.items() for served in page.get(metric, []))

    env = {"SPECTOP_RESULTS": str(results), "SPECTOP_DEMO_SPEEDUP": "4"}
    page, stderr, base = run_service(pack, env, headline)
    assert headline(page), stderr
    # the live ratio is the drafting server's (the demo's draft arm, on the port after the plain one)
    (live,) = [served for served in page[metric] if served["source"] == "live"]
    assert live["server"] == f"http://127.0.0.1:{base + 1}"
    (run,) = [p.parent for p in results.glob("*/summary.json")]  # the sweep is kept for later starts
    assert "quick sweep" in stderr
    # a second start reads the kept sweep instead of sweeping again
    page, stderr, _ = run_service(pack, env, lambda page: "spectop_sweep_mj_per_token" in page, 90)
    assert "spectop_sweep_mj_per_token" in page and "quick sweep" not in stderr, stderr
    assert [p.parent for p in results.glob("*/summary.json")] == [run]


def test_grafana_has_a_password_of_its_own_and_every_port_is_on_loopback(pack, tmp_path):
    compose = yaml.safe_load((pack / "compose.yaml").read_text())
    for service in compose["services"].values():
        for port in service.get("ports", []):
            assert port.startswith("127.0.0.1:"), port
    grafana = compose["services"]["grafana"]
    assert grafana["environment"]["GF_AUTH_ANONYMOUS_ENABLED"] == "false"
    assert grafana["environment"]["GF_SECURITY_ADMIN_PASSWORD__FILE"] == "/run/secrets/grafana_admin_password"
    assert grafana["secrets"] == ["grafana_admin_password"]
    password_file = pack / compose["secrets"]["grafana_admin_password"]["file"]
    password = password_file.read_text()
    assert len(password) >= 20 and password != "admin"
    assert password_file.stat().st_mode & 0o777 == 0o600
    # a second pack gets a password of its own, printed once
    result = spectop("deploy", str(tmp_path / "second"))
    other = (tmp_path / "second" / "grafana-admin-password").read_text()
    assert other != password and f"password {other}" in result.stderr
    assert result.stdout.count(other) == 0  # stdout lists files, it never holds the password
