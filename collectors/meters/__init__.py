"""Power meters: one module per source, a background sampler, and `open_meter(spec)`.

Every meter turns its source into a cumulative joule counter with monotonic timestamps
(`Meter.read() -> MeterReading`), labelled with what it measures (`Meter.info`). Meters whose
libraries may be missing (pynvml, amdsmi) import them only when opened.
"""

from collectors.meters.base import MeterInfo, MeterReading
from collectors.meters.sampler import Sampler
from collectors.meters.specs import (
    choose_meter,
    describe_meters,
    open_meter,
    parse_spec,
    sampling,
)

__all__ = [
    "MeterInfo",
    "MeterReading",
    "Sampler",
    "choose_meter",
    "describe_meters",
    "open_meter",
    "parse_spec",
    "sampling",
]
