"""How truthfully the load client records a stream: its timestamps against a known send schedule.

Run by hand (not collected by pytest): `python tests/bench/bench_client_truth.py [rounds] [levels]`,
e.g. `python tests/bench/bench_client_truth.py 3 1,16,64,256`.
A small asyncio server, in its own process so its scheduling does not share the client's loop,
answers llama-server's `/completion` stream shape (one event per token, cumulative
`tokens_predicted`, per-token `timings`): after a 20 ms prefill, a burst of 1-5 token events
(seeded) every 10 ms, each burst one write, and it records the instant it sent every burst.
Both processes read CLOCK_MONOTONIC, which Linux shares across processes, so a client's stamp
minus the server's send instant is the client's error (loopback transit included).
Each round runs, interleaved, spectop's client as the sweep runs it (`sweep.measure.measure`
with the sweep's own httpx client) and a plain httpx `aiter_lines` loop, at each concurrency.
It prints, per client and concurrency: events/s, the timestamp error per event (p50/p99/max),
the error of the gaps between events (p99, what the client's own processing adds), TTFT and
decode tok/s errors, and the server's own send jitter against its schedule; then the highest
events/s each client records with p99 error under 1 ms. `--uvloop` runs the client on uvloop.
"""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
import time
from dataclasses import dataclass, field

import httpx
import numpy as np

from collectors.requests.client import RequestSpec
from collectors.launch.process import free_port
from collectors.sweep.measure import measure
from collectors.sweep.runner import _client as sweep_client

STEP_S = 0.010
PREFILL_S = 0.020
TOKENS = 300  # about 100 bursts: one second of decode per stream


# -- the server (its own process) ---------------------------------------------------------------
def _event(n_done: int, step: int, stop: bool) -> bytes:
    timings = {"prompt_n": 12, "cache_n": 0, "predicted_n": n_done, "predicted_ms": step * 10.0}
    body: dict[str, object] = {
        "index": 0,
        "content": " tok",
        "tokens": [1000 + n_done],
        "stop": stop,
        "id_slot": -1,
        "tokens_predicted": n_done,
        "tokens_evaluated": 12,
        "timings": timings,
    }
    if stop:
        body.update(content="", tokens=[], model="bench", stop_type="limit")
    return b"data: " + json.dumps(body, separators=(",", ":")).encode() + b"\n\n"


async def _stream(writer: asyncio.StreamWriter, key: str, n_tokens: int, log: dict[str, object]) -> None:
    t_recv = time.monotonic()
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
    rng = random.Random(key)
    t_due, sent, step, sends = t_recv + PREFILL_S, 0, 0, []
    while sent < n_tokens:
        k = min(rng.randint(1, 5), n_tokens - sent)
        data = b"".join(_event(sent + i + 1, step, False) for i in range(k))
        sent += k
        if sent == n_tokens:
            data += _event(sent, step, True)
        delay = t_due - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        t_sent = time.monotonic()
        writer.write(b"%x\r\n%s\r\n" % (len(data), data))
        sends.append((t_due, t_sent, k))
        await writer.drain()
        t_due += STEP_S
        step += 1
    writer.write(b"0\r\n\r\n")
    await writer.drain()
    log[key] = {"recv": t_recv, "sends": sends}


async def _serve_conn(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, log: dict) -> None:
    try:
        while True:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
            method, path, _ = head.split("\r\n", 1)[0].split(" ", 2)
            length = next(
                (
                    int(h.split(":", 1)[1])
                    for h in head.split("\r\n")
                    if h.lower().startswith("content-length")
                ),
                0,
            )
            body = await reader.readexactly(length) if length else b""
            if method == "POST" and path == "/completion":
                req = json.loads(body)
                await _stream(writer, req["prompt"], int(req["n_predict"]), log)
            else:  # GET /sends: the send log so far, then forget it
                out = json.dumps(log).encode()
                log.clear()
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(out), out))
                await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        writer.close()


async def _serve(port: int) -> None:
    log: dict[str, object] = {}
    server = await asyncio.start_server(lambda r, w: _serve_conn(r, w, log), "127.0.0.1", port, backlog=1024)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


# -- the clients ----------------------------------------------------------------------------------
@dataclass
class Run:
    """One client's streams at one concurrency: per stream, its event stamps and its send time."""

    stamps: dict[str, list[float]] = field(default_factory=dict)
    t_send: dict[str, float] = field(default_factory=dict)
    tok_s: dict[str, float | None] = field(default_factory=dict)
    wall_s: float = 0.0


async def run_spectop(url: str, keys: list[str]) -> Run:
    specs = [RequestSpec(prompt=k, max_tokens=TOKENS) for k in keys]
    async with sweep_client(None) as client:
        window = await measure(client, url, specs, None, lambda: False, "bench")
    run = Run(wall_s=window.t1_s - window.t0_s)
    for spec, record in zip(specs, window.records):
        if record.error:
            raise SystemExit(f"spectop's client failed: {record.error}")
        run.stamps[spec.prompt] = [e.t_s for e in record.events for _ in range(e.n_tokens)]
        run.t_send[spec.prompt] = record.t_send_s
        run.tok_s[spec.prompt] = record.decode_tok_s
    return run


async def run_plain(url: str, keys: list[str]) -> Run:
    run = Run()

    async def one(client: httpx.AsyncClient, key: str) -> None:
        stamps: list[float] = []
        run.t_send[key] = time.monotonic()
        body = {"prompt": key, "n_predict": TOKENS, "stream": True}
        async with client.stream("POST", url + "/completion", json=body) as response:
            async for line in response.aiter_lines():
                t = time.monotonic()
                if line.startswith("data:"):
                    stamps.append(t)
        run.stamps[key] = stamps[:TOKENS]  # the last line is the stop event
        decode_s = time.monotonic() - stamps[0]
        run.tok_s[key] = (TOKENS - 1) / decode_s

    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        t0 = time.monotonic()
        await asyncio.gather(*(one(client, k) for k in keys))
        run.wall_s = time.monotonic() - t0
    return run


def figures(run: Run, log: dict) -> dict[str, float]:
    errors, gap_errors, ttft_errors, jitter, tok_err = [], [], [], [], []
    for key, stamps in run.stamps.items():
        sends = [t for _, t, k in log[key]["sends"] for _ in range(k)]
        jitter += [t - due for due, t, _ in log[key]["sends"]]
        if len(stamps) != len(sends):
            raise SystemExit(f"{key}: {len(stamps)} stamps for {len(sends)} events")
        err = np.asarray(stamps) - np.asarray(sends)
        errors += list(err)
        gap_errors += list(np.abs(np.diff(err)))
        ttft_errors.append(err[0])
        true_tok_s = (TOKENS - 1) / (sends[-1] - sends[0])
        if run.tok_s[key]:
            tok_err.append(abs(run.tok_s[key] / true_tok_s - 1))
    ms = 1000.0
    n_events = sum(len(s) for s in run.stamps.values())
    return {
        "events_s": n_events / run.wall_s,
        "p50": ms * float(np.percentile(errors, 50)),
        "p99": ms * float(np.percentile(errors, 99)),
        "max": ms * float(np.max(errors)),
        "gap_p99": ms * float(np.percentile(gap_errors, 99)),
        "ttft_p50": ms * float(np.median(ttft_errors)),
        "tok_s_err_pct": 100 * float(np.median(tok_err)),
        "jitter_p99": ms * float(np.percentile(jitter, 99)),
    }


async def fetch_log(url: str) -> dict:
    async with httpx.AsyncClient(timeout=30) as client:
        return (await client.get(url + "/sends")).json()


async def bench(url: str, rounds: int, levels: list[int]) -> None:
    clients = {"spectop": run_spectop, "httpx loop": run_plain}
    results: dict[tuple[str, int], list[dict[str, float]]] = {}
    for r in range(rounds):
        for n in levels:
            order = list(clients) if r % 2 == 0 else list(reversed(clients))
            for name in order:
                keys = [f"{name}-{r}-{n}-{i}" for i in range(n)]
                run = await clients[name](url, keys)
                results.setdefault((name, n), []).append(figures(run, await fetch_log(url)))
    cols = ["events_s", "p50", "p99", "max", "gap_p99", "ttft_p50", "tok_s_err_pct", "jitter_p99"]
    print(f"median of {rounds} interleaved rounds; errors in ms (client stamp - server send instant)")
    print(f"{'client':11s} {'streams':>7s} " + " ".join(f"{c:>13s}" for c in cols))
    best: dict[str, float] = {}
    for (name, n), rows in sorted(results.items(), key=lambda kv: (kv[0][0] != "spectop", kv[0][1])):
        med = {c: float(np.median([row[c] for row in rows])) for c in cols}
        print(f"{name:11s} {n:7d} " + " ".join(f"{med[c]:13.3f}" for c in cols))
        if med["p99"] < 1.0:
            best[name] = max(best.get(name, 0.0), med["events_s"])
    for name in clients:
        print(f"{name}: highest events/s with p99 error < 1 ms: {best.get(name, 0):,.0f}")


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if "--serve" in sys.argv:
        asyncio.run(_serve(int(args[0])))
        return
    rounds = int(args[0]) if args else 3
    levels = [int(x) for x in args[1].split(",")] if len(args) > 1 else [1, 16, 64, 256]
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == "ready"
        url = f"http://127.0.0.1:{port}"
        if "--uvloop" in sys.argv:
            import uvloop  # optional: only for this comparison

            uvloop.run(bench(url, rounds, levels))
        else:
            asyncio.run(bench(url, rounds, levels))
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
