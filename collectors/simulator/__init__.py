"""A simulated llama-server pair (plain and draft arms) and GPU meter, calibrated to note 25 (collectors/docs/note25.md).

    with Simulator(seed=0, speedup=10) as sim:
        sim.plain_url, sim.draft_url      # llama-server dialect, incl. /metrics and /slots
        sim.meter_page_url                # its dcgm-exporter page, with ?period= for --meter dcgm=

See `simulator.Simulator` for the parameters and `profiles` for the calibration data.
"""

from __future__ import annotations

from collectors.simulator.profiles import NOTE25_TABLE, PROFILES
from collectors.simulator.simulator import Simulator

__all__ = ["NOTE25_TABLE", "PROFILES", "Simulator"]
