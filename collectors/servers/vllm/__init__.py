"""vLLM: everything spectop knows about it, in one package.

`collector` (detection, poll and derive), `dp` (data-parallel and multiprocess pages), `v0` (the
V0 engine's metrics); the rest follows the contract every dialect implements
(collectors/servers/base.py).
"""
