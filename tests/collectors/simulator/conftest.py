from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from collectors.simulator import Simulator


@pytest.fixture(scope="module")
def sim() -> Iterator[Simulator]:
    with Simulator(seed=0, speedup=20) as simulator:
        yield simulator


@pytest.fixture()
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as c:
        yield c
