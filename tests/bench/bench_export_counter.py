"""`spectop export` with an energy COUNTER meter on a real llama-server, beside llamastat.

Run by hand: `python tests/bench/bench_export_counter.py [bench_monitor_cpu.py's options]`. A machine
without RAPL gets a fake powercap tree in a temp dir (reference/power.md's RAPL section: a
`package-0` zone's `energy_uj`, wrapping at `max_energy_range_uj`), advanced by a writer thread in
this process at 100 Hz (about 65 W), replaced atomically so no read sees a half-written file. The
monitors are bench_monitor_cpu.py's, with `--meter rapl=ROOT` and only `export` and llamastat:
the export reads the counter once a second and at each poll, as it would a real package.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import bench_monitor_cpu  # noqa: E402

POWER_W = 65.0
WRITE_HZ = 100.0
MAX_UJ = 262143328850  # a real client part's max_energy_range_uj


def fake_powercap(root: Path, stop: threading.Event) -> threading.Thread:
    """One package zone under `root`, its counter advanced at POWER_W until `stop` is set."""
    zone = root / "intel-rapl:0"
    zone.mkdir(parents=True)
    (root / "intel-rapl").mkdir()
    (root / "intel-rapl" / "enabled").write_text("1\n")
    (zone / "name").write_text("package-0\n")
    (zone / "max_energy_range_uj").write_text(f"{MAX_UJ}\n")
    t0_s = time.monotonic()

    def write() -> None:
        fresh = zone / "energy_uj.new"
        while True:
            fresh.write_text(f"{int(POWER_W * 1e6 * (time.monotonic() - t0_s)) % MAX_UJ}\n")
            os.replace(fresh, zone / "energy_uj")
            if stop.wait(1 / WRITE_HZ):
                return

    write_once = threading.Thread(target=write, daemon=True)
    write_once.start()
    time.sleep(0.05)  # the first value is on disk before a meter opens the zone
    return write_once


def main() -> None:
    stop = threading.Event()
    with tempfile.TemporaryDirectory(prefix="powercap-") as tmp:
        writer = fake_powercap(Path(tmp), stop)
        sys.argv[1:] = ["--meter", f"rapl={tmp}", "--only", "export,llamastat", *sys.argv[1:]]
        try:
            bench_monitor_cpu.main()
        finally:
            stop.set()
            writer.join()


if __name__ == "__main__":
    main()
