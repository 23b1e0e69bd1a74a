"""What the capture proxy adds to each streamed event, on loopback.

Run by hand (not collected by pytest): `python tests/bench/bench_proxy.py [rounds] [events]`.
A loopback SSE server (its own process) sends llama-server-like events (so the proxy's recording
is part of the cost) and stamps every event with the monotonic clock as it writes
it; a plain httpx client reads the stream directly and through the proxy, in alternating rounds
so machine noise hits both alike, and takes each event's latency as arrival − stamp
(CLOCK_MONOTONIC is one clock for every process on the machine). It prints the p50 and p99 of
per-event latency each way and what the proxy adds (target: under 0.5 ms at p99).
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import statistics
import sys
import time

import httpx
import numpy as np

from collectors.requests.proxy_server import ListenAddress, ProxyServer

EVENT_GAP_S = 0.002  # a fast decode: 500 events/s


def serve_sse(port_out: multiprocessing.Queue, events: int) -> None:
    """A minimal SSE server: every POST gets `events` events, EVENT_GAP_S apart, each stamped."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                return  # the client closed its connection
            length = next(
                (
                    int(h.split(b":")[1])
                    for h in head.split(b"\r\n")
                    if h.lower().startswith(b"content-length")
                ),
                0,
            )
            await reader.readexactly(length)
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
            )
            for i in range(events):
                data = (
                    b"data: "
                    + json.dumps(
                        {"content": "x", "tokens_predicted": i + 1, "t_ns": time.monotonic_ns()}
                    ).encode()
                    + b"\n\n"
                )
                writer.write(b"%x\r\n%s\r\n" % (len(data), data))
                await writer.drain()
                await asyncio.sleep(EVENT_GAP_S)
            writer.write(b"0\r\n\r\n")
            await writer.drain()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port_out.put(server.sockets[0].getsockname()[1])
        await server.serve_forever()

    asyncio.run(main())


def one_stream(client: httpx.Client, url: str) -> list[float]:
    """Per-event latency in ms: arrival on this side less the server's stamp."""
    out = []
    with client.stream("POST", url + "/completion", json={"prompt": "p", "stream": True}) as response:
        for line in response.iter_lines():
            if line.startswith("data: "):
                arrived_ns = time.monotonic_ns()
                out.append((arrived_ns - json.loads(line[6:])["t_ns"]) / 1e6)
    return out


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    events = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    ports: multiprocessing.Queue = multiprocessing.Queue()
    upstream = multiprocessing.Process(target=serve_sse, args=(ports, events), daemon=True)
    upstream.start()
    url = f"http://127.0.0.1:{ports.get(timeout=30)}"
    recorded = []
    try:
        with ProxyServer(url, ListenAddress("127.0.0.1", 0), recorded.append) as proxy:
            with httpx.Client(timeout=60, trust_env=False) as client:
                one_stream(client, url), one_stream(client, proxy.url)  # warm both paths
                direct, through = [], []
                rows = []
                for _ in range(rounds):
                    d, p = one_stream(client, url), one_stream(client, proxy.url)
                    direct += d
                    through += p
                    rows.append(
                        (
                            np.percentile(p, 50) - np.percentile(d, 50),
                            np.percentile(p, 99) - np.percentile(d, 99),
                        )
                    )
    finally:
        upstream.terminate()
    d50, d99 = np.percentile(direct, [50, 99])
    p50, p99 = np.percentile(through, [50, 99])
    print(f"{rounds} rounds x {events} events, one event every {EVENT_GAP_S * 1000:g} ms, loopback")
    print(f"direct        p50 {d50:.3f} ms  p99 {d99:.3f} ms")
    print(f"through proxy p50 {p50:.3f} ms  p99 {p99:.3f} ms")
    print(f"added         p50 {p50 - d50:.3f} ms  p99 {p99 - d99:.3f} ms  (target < 0.5 ms at p99)")
    print(
        f"median over rounds of the added p50 {statistics.median(r[0] for r in rows):.3f} ms, "
        f"added p99 {statistics.median(r[1] for r in rows):.3f} ms; p99 ratio {p99 / d99:.2f}"
    )
    print(f"recorded {len(recorded)} requests, {sum(r.latency.events for r in recorded)} events")


if __name__ == "__main__":
    main()
