"""Broken power meters, for the tests that check spectop never takes their numbers for measurements.

`FaultyDcgm` serves the simulator's own dcgm-exporter page (collectors/simulator/dcgm.py) on a
loopback port and breaks it on demand, the ways exporters and sensors are seen to break:

- `dying`: the exporter stops answering (503), as when its pod is evicted;
- `stale`: the same page forever (a caching proxy, a hung collector): the counter stands still;
- `backwards`: the energy counter drops by `drop_mj` and counts on from there (two exporters
  behind one name, a re-based counter): not a reset, since the new value is far from 0;
- `flapping`: every third scrape reads `drop_mj` lower than the truth, the next the truth again;
- `implausible`: the counter runs 1000 times too fast (a unit mix-up: joules written as mJ).

The mode can be switched while a sweep runs (`fault = "stale"`), so a test breaks the meter after
the points it wants measured cleanly. `ScriptedMeter` is a Meter fed readings by hand.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler
from typing import Any

from collectors.meters.base import MeterInfo, MeterReading
from collectors.meters.sampler import Sampler
from collectors.simulator import Simulator
from collectors.simulator.dcgm import dcgm_page, device_labels
from collectors.simulator.loopback import LoopbackServer

ENERGY = re.compile(r"^(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION\{[^}]*\}) (\d+)$", re.M)
FAULTS = ("dying", "stale", "backwards", "flapping", "implausible")


class FaultyDcgm(LoopbackServer):
    """The simulator's accelerator behind a dcgm-exporter page that breaks when told to."""

    thread_name = "faulty-dcgm"

    def __init__(self, sim: Simulator, fault: str | None = None, drop_mj: int = 10_000_000) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.sim, self.fault, self.drop_mj = sim, fault, drop_mj
        self.scrapes = 0
        self._frozen: str | None = None
        self._lock = threading.Lock()
        self._base_mj: int | None = None  # the counter when `implausible` began

    def __enter__(self) -> FaultyDcgm:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """What `--meter dcgm=` takes, with the page's real update period."""
        return f"http://127.0.0.1:{self.server_address[1]}/metrics?period=0.1"

    def wait_scrapes(self, n: int, timeout_s: float = 10.0) -> None:
        """Return once `n` more scrapes came (a sampler reading at 10 Hz: a few tenths of a second)."""
        target, deadline = self.scrapes + n, time.monotonic() + timeout_s
        while self.scrapes < target and time.monotonic() < deadline:
            time.sleep(0.01)

    def page(self) -> str | None:
        """This scrape's page; None when the exporter is down."""
        with self._lock:
            self.scrapes += 1
            fault = self.fault
            true = dcgm_page(self.sim.accelerator, device_labels(self.sim.profile.chip, self.sim.seed))
            if fault == "dying":
                return None
            if fault == "stale":
                self._frozen = self._frozen or true
                return self._frozen
            self._frozen = None
            if fault == "backwards":
                return _shift(true, lambda mj: mj - self.drop_mj)
            if fault == "flapping" and self.scrapes % 3 == 0:
                return _shift(true, lambda mj: mj - self.drop_mj)
            if fault == "implausible":
                base = self._base_mj = self._base_mj or _energy_mj(true)
                return _shift(true, lambda mj: base + 1000 * (mj - base))
            return true


def _energy_mj(page: str) -> int:
    match = ENERGY.search(page)
    assert match is not None
    return int(match.group(2))


def _shift(page: str, change: Any) -> str:
    return ENERGY.sub(lambda m: f"{m.group(1)} {int(change(int(m.group(2))))}", page)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: FaultyDcgm

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        return

    def do_GET(self) -> None:  # noqa: N802 - stdlib hook
        page = self.server.page()
        status, body = (503, b"exporter gone\n") if page is None else (200, page.encode())
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class ScriptedMeter:
    """A Meter that returns the readings it is given, one per read (exceptions are raised)."""

    def __init__(
        self,
        items: Iterable[MeterReading | Exception],
        method: str = "counter",
        period_s: float = 0.1,
        boundary: str = "GPU board",
        power_limit_w: float | None = None,
    ) -> None:
        self.items = list(items)
        self.info = MeterInfo("scripted", ("GPU #0",), boundary, method, period_s, power_limit_w)  # type: ignore[arg-type]

    def read(self) -> MeterReading:
        item = self.items.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    def close(self) -> None:
        pass


def fed(*items: MeterReading | Exception, **kw: Any) -> Sampler:
    """A sampler that has already taken one reading of each of `items`, in order."""
    sampler = Sampler(ScriptedMeter(items, **kw), rate_hz=10.0)
    for _ in items:
        sampler.tick()
    return sampler
