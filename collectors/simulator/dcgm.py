"""The simulated accelerator as a dcgm-exporter `/metrics` page.

Labels follow dcgm-exporter's GPU template (`gpu`, `UUID`, `pci_bus_id`, `device`, `modelName`,
`Hostname`, then the `DCGM_FI_DRIVER_VERSION` attribute); HELP texts are those of its default
counters file. The energy counter is integrated exactly up to the scrape (no collection interval).
"""

from __future__ import annotations

import uuid
from http.server import BaseHTTPRequestHandler
from typing import Any

from collectors.simulator.accelerator import Accelerator
from collectors.simulator.loopback import LoopbackServer
from collectors.simulator.prom import dcgm_text

# How often the page's values change, as spectop's `?period=` should state it: the counter is
# integrated up to each scrape, so the sampler's own 10 Hz is the floor.
UPDATE_PERIOD_S = 0.1
POWER_HELP = "Power draw (in W)."
ENERGY_HELP = "Total energy consumption since boot (in mJ)."


def device_labels(chip: str, seed: int, hostname: str = "spectop-sim") -> dict[str, str]:
    """dcgm-exporter's labels for the one simulated device (UUID stable for a seed)."""
    return {
        "gpu": "0",
        "UUID": f"GPU-{uuid.uuid5(uuid.NAMESPACE_URL, f'spectop-sim:{seed}')}",
        "pci_bus_id": "00000000:01:00.0",
        "device": "nvidia0",
        "modelName": f"{chip} (simulated)",
        "Hostname": hostname,
        "DCGM_FI_DRIVER_VERSION": "simulated",
    }


def dcgm_page(accel: Accelerator, labels: dict[str, str]) -> str:
    reading = accel.read()
    busy = min(100, 20 * reading.active_requests) if reading.active_requests else 0
    fields: list[tuple[str, str, str, float | int]] = [
        ("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", 1398 if busy else 0),
        ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", 38 + int(reading.power_w // 4)),
        ("DCGM_FI_DEV_POWER_USAGE", "gauge", POWER_HELP, round(reading.power_w, 3)),
        ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", ENERGY_HELP, int(reading.energy_mj)),
        ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", busy),
        ("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", 17_204),
        ("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", 6_921),
    ]
    return dcgm_text(labels, fields)


class DcgmServer(LoopbackServer):
    """Serves `dcgm_page` at `/metrics`."""

    thread_name = "sim-dcgm"

    def __init__(self, address: tuple[str, int], accel: Accelerator, labels: dict[str, str]) -> None:
        super().__init__(address, _Handler)
        self.accel = accel
        self.labels = labels


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body leave at once, without a delayed-ACK stall
    server: DcgmServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        return

    def do_GET(self) -> None:  # noqa: N802 - stdlib hook
        if self.path.split("?", 1)[0] == "/metrics":
            status, body = 200, dcgm_page(self.server.accel, self.server.labels).encode()
            content_type = "text/plain; version=0.0.4; charset=utf-8"
        else:
            status, body, content_type = 404, b"404 page not found\n", "text/plain; charset=utf-8"
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
