"""What reading a DCGM exporter's page costs spectop: parsing it, against seeing that it did not change.

Run by hand: `python tests/bench/bench_meter_page.py [--gpus 8] [--rounds 200]`. The page is built like
dcgm-exporter's with its default counters (`default-counters.csv`, 3.x: about 35 fields, each a gauge or
counter with the labels gpu, UUID, pci_bus_id, device, modelName, Hostname, DCGM_FI_DRIVER_VERSION), so
its size is a real exporter's on a GPU box of that many GPUs. dcgm-exporter collects every 30 s by
default (`-c 30000`), so most of the reads a 1 Hz poll makes get the page it served before: those are
compared, not parsed, and a changed page has only its power and energy lines parsed
(collectors/meters/exporters.py). Printed: the page's size, the median time to parse all of it and
pick the GPUs' series, to parse only those two families, and to compare it with the last page; then
the CPU time (this thread's) of a whole meter read over loopback HTTP from a server whose energy
moves each read, through httpx's client against the kept-alive http.client connection a plain
http:// page is read on (collectors/meters/page_get.py), side by side, medians.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

from collectors import promtext
from collectors.meters.exporters import ExporterMeter
from collectors.meters.remote import DCGM_ENERGY, DCGM_POWER, dcgm_series

FIELDS = (  # dcgm-exporter's default counters (name, type)
    *(
        (name, "gauge")
        for name in (
            "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_MEM_CLOCK", "DCGM_FI_DEV_MEMORY_TEMP", "DCGM_FI_DEV_GPU_TEMP",
            "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "DCGM_FI_DEV_GPU_UTIL",
            "DCGM_FI_DEV_MEM_COPY_UTIL", "DCGM_FI_DEV_ENC_UTIL", "DCGM_FI_DEV_DEC_UTIL", "DCGM_FI_DEV_XID_ERRORS",
            "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_RESERVED",
            "DCGM_FI_DEV_VGPU_LICENSE_STATUS", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
            "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_ROW_REMAP_FAILURE",
            "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_DRAM_ACTIVE",
            "DCGM_FI_PROF_PCIE_TX_BYTES", "DCGM_FI_PROF_PCIE_RX_BYTES", "DCGM_FI_PROF_SM_ACTIVE",
            "DCGM_FI_PROF_SM_OCCUPANCY", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "DCGM_FI_DEV_POWER_MGMT_LIMIT",
        )
    ),
    *(
        (name, "counter")
        for name in (
            "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
            "DCGM_FI_DEV_PCIE_REPLAY_COUNTER_TOTAL", "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
            "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL",
        )
    ),
)  # fmt: skip


def page(gpus: int) -> bytes:
    lines = []
    for name, kind in FIELDS:
        lines += [f"# HELP {name} {name.lower()}.", f"# TYPE {name} {kind}"]
        for gpu in range(gpus):
            labels = (
                f'gpu="{gpu}",UUID="GPU-{gpu:08x}-1c2d-4e5f-8a9b-0c1d2e3f4a5b",pci_bus_id="00000000:{gpu + 0x18:02X}:00.0",'
                f'device="nvidia{gpu}",modelName="NVIDIA H200",Hostname="gpu-box-01",DCGM_FI_DRIVER_VERSION="570.124.06"'
            )
            lines.append(f"{name}{{{labels}}} {1234567.0 + gpu}")
    return ("\n".join(lines) + "\n").encode()


class _Moving(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    gpus = 8

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        body = page(self.gpus).replace(b" 1234567.0", f" {time.monotonic():.3f}".encode())  # energy moves
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def read_cpu_ms(gpus: int, rounds: int) -> tuple[float, float]:
    """Median thread CPU of a meter read through httpx, and through the plain connection."""
    _Moving.gpus = gpus
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Moving)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/metrics"
    meters = [
        ExporterMeter(url, client=httpx.Client(timeout=3.0), min_interval_s=0),
        ExporterMeter(url, min_interval_s=0),
    ]
    times: list[list[float]] = [[], []]
    for _ in range(rounds):
        for meter, spent in zip(meters, times):
            t0 = time.thread_time()
            meter.read()
            spent.append(time.thread_time() - t0)
            time.sleep(0.005)
    for meter in meters:
        meter.close()
    server.shutdown()
    return 1000 * statistics.median(times[0]), 1000 * statistics.median(times[1])


def median_ms(work, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        work()
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    body = page(args.gpus)
    again = bytes(bytearray(body))  # the next read: equal bytes, another object
    parse_ms = median_ms(lambda: dcgm_series(list(promtext.samples(body.decode())), None), args.rounds)
    wanted = (DCGM_ENERGY, DCGM_POWER)
    only_ms = median_ms(
        lambda: dcgm_series(list(promtext.samples(body.decode(), families=wanted)), None), args.rounds
    )
    compare_ms = median_ms(lambda: body == again, args.rounds)
    lines = body.count(b"\n")
    print(f"page: {len(body) / 1024:.0f} KiB, {lines} lines, {args.gpus} GPUs")
    print(
        f"parse the whole page and pick: {parse_ms:.2f} ms median ({parse_ms / 10:.2f} % of a core at 1 Hz)"
    )
    print(f"parse only power and energy:   {only_ms:.2f} ms median ({only_ms / 10:.2f} % of a core at 1 Hz)")
    print(f"compare with the last page:    {compare_ms:.4f} ms (a page the exporter has not recollected)")
    with_httpx_ms, plain_ms = read_cpu_ms(args.gpus, args.rounds)
    print(
        f"a read over loopback HTTP, CPU: httpx {with_httpx_ms:.2f} ms, kept-alive http.client "
        f"{plain_ms:.2f} ms median (ratio {plain_ms / with_httpx_ms:.2f})"
    )


if __name__ == "__main__":
    main()
