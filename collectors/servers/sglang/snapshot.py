"""SGLang's snapshot: drafting figures from its gauges, which are not counts.

Pitfalls handled (collectors/docs/servers.md, SGLang): `spec_accept_length` is tokens committed per
request per verify pass (the bonus token included, the prefill token not) over the last 40
decode iterations, i.e. G with every step counted, since each SGLang decode step is a verify
pass. The gauges keep their last value while the server idles, so they stand for a window only
when it decoded (else None); the lifetime length has its own name, never a window's.
"""

from __future__ import annotations

from dataclasses import dataclass

from collectors.servers.snapshot import ServerSnapshot


@dataclass(frozen=True, slots=True)
class SglangSnapshot(ServerSnapshot):
    """A ServerSnapshot whose drafting figures come from SGLang's gauges, not from counts."""

    accept_rate_gauge: float | None = None  # accepted / drafted over the gauges' last 40 decode iterations
    accept_length_gauge: float | None = None  # sglang:spec_accept_length, bonus token included
    accept_length_lifetime: float | None = None  # since start (or the last /flush_cache)
    verify_width_tokens: int | None = None  # speculative_num_draft_tokens now, the root included

    def _decoded(self) -> bool:
        return self.drafting is not False and bool(self.window_tokens)

    @property
    def acceptance(self) -> float | None:
        return self.accept_rate_gauge if self._decoded() else None

    @property
    def mean_advance(self) -> float | None:
        return self.accept_length_gauge if self._decoded() else None

    @property
    def mean_advance_lifetime(self) -> float | None:
        return self.accept_length_lifetime if self.drafting is not False else None

    @property
    def verified_width(self) -> float | None:
        width = self.verify_width_tokens if self.drafting is not False else None
        return float(width) if width else None

    @property
    def survival(self) -> tuple[float, ...]:
        return ()  # per-position counts exist only per request, in meta_info
