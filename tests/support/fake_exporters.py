"""Fake dcgm-exporter, node_exporter and Prometheus answers, in their real formats (collectors/docs/meters.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import httpx

DCGM_HEADER = {
    "DCGM_FI_DEV_SM_CLOCK": ("gauge", "SM clock frequency (in MHz)."),
    "DCGM_FI_DEV_POWER_USAGE": ("gauge", "Power draw (in W)."),
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": ("counter", "Total energy consumption since boot (in mJ)."),
}


@dataclass
class DcgmGpu:
    index: int
    uuid: str
    model: str = "NVIDIA H100 80GB HBM3"
    host: str = "gpu-box"
    energy_mj: int = 987_654_321_000
    power_w: float = 312.5
    mig_instances: tuple[int, ...] = ()  # GPU_I_ID values; each row repeats the whole GPU's numbers

    def advance(self, dt_s: float, power_w: float) -> None:
        self.energy_mj += round(power_w * dt_s * 1000)
        self.power_w = power_w

    def labels(self, host_label: str) -> list[dict[str, str]]:
        base = {
            "gpu": str(self.index),
            "UUID": self.uuid,
            "pci_bus_id": f"00000000:{0x18 + self.index:02X}:00.0",
            "device": f"nvidia{self.index}",
            "modelName": self.model,
        }
        rows = [dict(base, GPU_I_PROFILE="1g.10gb", GPU_I_ID=str(i)) for i in self.mig_instances] or [base]
        for row in rows:
            row[host_label] = self.host
            row["DCGM_FI_DRIVER_VERSION"] = "550.54.15"
        return rows


def _label_text(labels: dict[str, str]) -> str:
    return ",".join(f'{k}="{v}"' for k, v in labels.items())


@dataclass
class DcgmExporter:
    gpus: list[DcgmGpu]
    host_label: str = "Hostname"  # renamed to "hostname" after 4.5.3-4.8.2
    with_energy: bool = True
    requests: list[httpx.Request] = field(default_factory=list)

    def page(self) -> str:
        out = []
        for metric, (kind, help_text) in DCGM_HEADER.items():
            if metric.endswith("ENERGY_CONSUMPTION") and not self.with_energy:
                continue
            out += [f"# HELP {metric} {help_text}", f"# TYPE {metric} {kind}"]
            for gpu in self.gpus:
                value = {"DCGM_FI_DEV_SM_CLOCK": 1980, "DCGM_FI_DEV_POWER_USAGE": gpu.power_w}.get(
                    metric, gpu.energy_mj
                )
                out += [f"{metric}{{{_label_text(row)}}} {value}" for row in gpu.labels(self.host_label)]
        return "\n".join(out) + "\n"

    def handler(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(200, text=self.page(), headers={"content-type": "text/plain; version=0.0.4"})


@dataclass
class RaplZoneRow:
    metric: str  # node_rapl_<name>_joules_total
    index: str
    path: str
    joules: float


NODE_ZONES = [
    RaplZoneRow("package", "0", "/sys/class/powercap/intel-rapl:0", 38_000.5),
    RaplZoneRow("core", "0", "/sys/class/powercap/intel-rapl:0:0", 11_565.0),
    RaplZoneRow("dram", "2", "/sys/class/powercap/intel-rapl:0:2", 5_000.0),
    RaplZoneRow("package", "1", "/sys/class/powercap/intel-rapl:1", 12_000.25),
    RaplZoneRow("package", "0", "/sys/class/powercap/intel-rapl-mmio:0", 38_000.5),
    RaplZoneRow("psys", "1", "/sys/class/powercap/intel-rapl:2", 90_000.0),
]


def node_page(zones: list[RaplZoneRow]) -> str:
    out = [
        "# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.",
        "# TYPE node_cpu_seconds_total counter",
        'node_cpu_seconds_total{cpu="0",mode="idle"} 12345.6',
    ]
    for name in dict.fromkeys(z.metric for z in zones):
        metric = f"node_rapl_{name}_joules_total"
        out += [f"# HELP {metric} Current RAPL {name} value in joules", f"# TYPE {metric} counter"]
        out += [
            f'{metric}{{index="{z.index}",path="{z.path}"}} {z.joules}' for z in zones if z.metric == name
        ]
    return "\n".join(out) + "\n"


def prom_vector(rows: list[tuple[dict[str, str], float]], t: float = 1_717_000_000.123) -> str:
    """An instant-query answer; Prometheus sends sample values as strings."""
    result = [{"metric": m, "value": [t, repr(float(v))]} for m, v in rows]
    return json.dumps({"status": "success", "data": {"resultType": "vector", "result": result}})
