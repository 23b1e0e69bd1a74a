"""What reading a DCGM exporter's page costs spectop: parsing it, against seeing that it did not change.

Run by hand: `python tests/bench/bench_meter_page.py [--gpus 8] [--rounds 200]`. The page is built like
dcgm-exporter's with its default counters (`default-counters.csv`, 3.x: about 35 fields, each a gauge or
counter with the labels gpu, UUID, pci_bus_id, device, modelName, Hostname, DCGM_FI_DRIVER_VERSION), so
its size is a real exporter's on a GPU box of that many GPUs. dcgm-exporter collects every 30 s by
default (`-c 30000`), so most of the reads a 1 Hz poll makes get the page it served before: those are
compared, not parsed, and a changed page has only its power and energy lines parsed
(collectors/meters/exporters.py). Printed: the page's size, the median time to parse all of it and
pick the GPUs' series, to parse only those two families, and to compare it with the last page.
"""

from __future__ import annotations

import argparse
import statistics
import time

from collectors import promtext
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


if __name__ == "__main__":
    main()
