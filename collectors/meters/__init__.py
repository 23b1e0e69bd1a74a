"""Power meters: one module per source, a background sampler, and `open_meter(spec)`.

Every meter turns its source into a cumulative joule counter with monotonic timestamps
(`Meter.read() -> MeterReading`), labelled with what it measures (`Meter.info`). Meters whose
libraries may be missing (pynvml, amdsmi) import them only when opened.
"""

from collectors.meters.base import Meter, MeterInfo, MeterMethod, MeterReading
from collectors.meters.sampler import Sampler, WindowEnergy
from collectors.meters.specs import (
    AUTO_ORDER,
    METER_SPEC_HELP,
    MeterChoice,
    ProbeResult,
    choose_meter,
    describe_meters,
    open_meter,
    parse_spec,
    probe_all,
    sampling,
)

__all__ = [
    "AUTO_ORDER",
    "METER_SPEC_HELP",
    "Meter",
    "MeterChoice",
    "MeterInfo",
    "MeterMethod",
    "MeterReading",
    "ProbeResult",
    "Sampler",
    "WindowEnergy",
    "choose_meter",
    "describe_meters",
    "open_meter",
    "parse_spec",
    "probe_all",
    "sampling",
]
