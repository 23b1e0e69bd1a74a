"""Power meters: one module per source, a background sampler, and `open_meter(spec)`."""

from collectors.meters.base import Meter, MeterInfo, MeterMethod, MeterReading

__all__ = ["Meter", "MeterInfo", "MeterMethod", "MeterReading"]
