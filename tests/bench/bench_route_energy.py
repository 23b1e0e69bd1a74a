"""What routing by batch saves on the simulator: one load sent to the drafting server, to the plain
one, and through the routing proxy, each on note 25's calibrated pair on one simulated accelerator.

Run by hand (not collected by pytest): `python tests/bench/bench_route_energy.py [speedup] [rounds]`
(defaults 8 and 2). The load is a closed loop that holds 2 requests in flight for 12 s, then 8 for
4 s (a burst), `rounds` times; each request asks 64 tokens. Energy is the simulated DCGM page's
counter read before and after each run (exact up to the scrape), tokens the servers' own counts;
it prints joules, tokens and mJ/token for each target, and routing's saving against each. The
crossover is note 25's, 3.26 (collectors/docs/note25.md). The simulator's accelerator runs both
arms' batches at once by its own model, not a measurement: the figure checks that routing's saving
comes out end to end, and is no measured saving on hardware.
"""

from __future__ import annotations

import asyncio
import re
import sys
import time

import httpx

from collectors.requests.proxy_server import ListenAddress, ProxyServer
from collectors.requests.router import RoutePlan
from collectors.simulator.simulator import Simulator

CROSSOVER = 3.26
TOKENS = 64


def energy_j(meter_url: str) -> float:
    page = httpx.get(meter_url, timeout=10, trust_env=False).text
    found = re.search(r"^DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION\{[^}]*\} (\S+)$", page, re.M)
    assert found is not None, "no energy counter on the simulated DCGM page"
    return float(found[1]) / 1000


async def load(url: str, rounds: int) -> int:
    """Run the closed-loop load against `url`; the tokens the server committed."""
    phases = [(2, 12.0), (8, 4.0)] * rounds
    end_s = time.monotonic() + sum(d for _, d in phases)
    bounds, t = [], time.monotonic()
    for level, duration_s in phases:
        t += duration_s
        bounds.append((t, level))
    tokens = 0

    def level_now() -> int:
        now = time.monotonic()
        return next((level for until_s, level in bounds if now < until_s), 0)

    async def worker(k: int, client: httpx.AsyncClient) -> None:
        nonlocal tokens
        body = {"prompt": "hello", "n_predict": TOKENS, "temperature": 0, "ignore_eos": True}
        while time.monotonic() < end_s:
            if k >= level_now():
                await asyncio.sleep(0.02)
                continue
            answer = await client.post(url + "/completion", json=body)
            tokens += int(answer.json()["tokens_predicted"])

    async with httpx.AsyncClient(trust_env=False, timeout=120) as client:
        await asyncio.gather(*(worker(k, client) for k in range(8)))
    return tokens


def main(speedup: float = 8.0, rounds: int = 2) -> None:
    with Simulator(seed=0, speedup=speedup) as sim:
        plan = RoutePlan(sim.plain_url, sim.draft_url, CROSSOVER, "note 25")
        with ProxyServer(sim.draft_url, ListenAddress("127.0.0.1", 0), lambda r: None, route=plan) as proxy:
            results = {}
            for name, url in (
                ("always draft", sim.draft_url),
                ("always plain", sim.plain_url),
                ("routed", proxy.url),
            ):
                time.sleep(2.0)  # the previous run's requests are over
                before = energy_j(sim.meter_url + "/metrics")
                tokens = asyncio.run(load(url, rounds))
                joules = energy_j(sim.meter_url + "/metrics") - before
                results[name] = 1000 * joules / tokens
                print(f"{name:13} {joules:9.1f} J {tokens:7d} tokens {results[name]:7.1f} mJ/token")
    routed = results["routed"]
    for name in ("always draft", "always plain"):
        print(f"routed against {name}: {100 * (routed / results[name] - 1):+.1f} %")


if __name__ == "__main__":
    main(*(float(a) for a in sys.argv[1:2]), *(int(a) for a in sys.argv[2:3]))
