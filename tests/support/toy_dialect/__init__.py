"""A server dialect defined outside spectop, as one package: an Ollama-like server with its own
request format (POST /api/generate) and an NDJSON stream.

`ToyCollector` is the whole dialect; a test adds it to the registry with one line
(`monkeypatch.setattr(registry, "DIALECTS", [*registry.DIALECTS, ToyCollector])`) and then
uses spectop through the registry, as the dashboard, probe and sweep do. The fake server that
speaks it is tests/support/toy_server.py.
"""

from __future__ import annotations

from tests.support.toy_dialect.collector import ToyCollector

__all__ = ["ToyCollector"]
