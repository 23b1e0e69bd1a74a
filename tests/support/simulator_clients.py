"""Small clients for the simulator tests: plain httpx, no spectop client code."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

PROMPT = "Explain how the power supply of a laptop chip works."


def shape(value: Any) -> Any:
    """The key structure of a JSON value, with scalars reduced to their JSON type."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value and isinstance(value[0], (dict, list)) else "array"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return "null" if value is None else "string"


def families(text: str) -> dict[str, Any]:
    return {fam.name: fam for fam in text_string_to_metric_families(text)}


def metric(text: str, sample_name: str) -> float:
    """The first sample called `sample_name` (the parser adds `_total` to counters without it)."""
    for fam in text_string_to_metric_families(text):
        for sample in fam.samples:
            if sample.name in (sample_name, sample_name + "_total"):
                return sample.value
    raise KeyError(sample_name)


def stream_lines(client: httpx.Client, url: str, body: dict[str, Any]) -> list[tuple[float, str]]:
    """(arrival time, line) of every non-empty SSE line of one streamed request."""
    out: list[tuple[float, str]] = []
    with client.stream("POST", url, json=body) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line:
                out.append((time.monotonic(), line))
    return out


def data_events(lines: list[tuple[float, str]]) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for _, line in lines if line.startswith("data: {")]


@dataclass(frozen=True)
class BatchResult:
    window_s: float
    tokens: int
    energy_mj: float
    drafted: int
    accepted: int
    finals: list[dict[str, Any]]


class Meter:
    """Reads the DCGM energy counter over one kept-alive connection."""

    def __init__(self, meter_url: str) -> None:
        self._url = meter_url + "/metrics"
        self._client = httpx.Client(timeout=10)

    def energy_mj(self) -> float:
        return metric(self._client.get(self._url).text, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION")

    def power_w(self) -> float:
        return metric(self._client.get(self._url).text, "DCGM_FI_DEV_POWER_USAGE")

    def close(self) -> None:
        self._client.close()


def run_batch(url: str, meter: Meter, batch: int, n_tokens: int, prompt: str = PROMPT) -> BatchResult:
    """B concurrent streamed requests; window = first send to last completion, energy over it."""
    clients = [httpx.Client(timeout=60) for _ in range(batch)]
    for client in clients:
        client.get(url + "/health")  # one open connection per request, before the window
    barrier = threading.Barrier(batch + 1)
    sends = [0.0] * batch
    ends = [0.0] * batch
    finals: list[dict[str, Any]] = [{} for _ in range(batch)]
    body = {"prompt": prompt, "n_predict": n_tokens, "temperature": 0, "ignore_eos": True, "stream": True}

    def worker(i: int) -> None:
        barrier.wait()
        sends[i] = time.monotonic()
        with clients[i].stream("POST", url + "/completion", json=body) as response:
            for line in response.iter_lines():
                if line.startswith("data: "):
                    event = json.loads(line[6:])
                    if event.get("stop"):
                        finals[i] = event
        ends[i] = time.monotonic()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(batch)]
    for thread in threads:
        thread.start()
    e0 = meter.energy_mj()
    barrier.wait()
    for thread in threads:
        thread.join()
    e1 = meter.energy_mj()
    for client in clients:
        client.close()
    timings = [f["timings"] for f in finals]
    return BatchResult(
        window_s=max(ends) - min(sends),
        tokens=sum(t["predicted_n"] for t in timings),
        energy_mj=e1 - e0,
        drafted=sum(t.get("draft_n", 0) for t in timings),
        accepted=sum(t.get("draft_n_accepted", 0) for t in timings),
        finals=finals,
    )
