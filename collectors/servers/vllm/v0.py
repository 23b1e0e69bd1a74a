"""vLLM's V0 engine (0.6.x to 0.9.x with VLLM_USE_V1=0): spec figures that are not window counts.

Pitfalls handled (collectors/docs/servers.md, vLLM V0; read from vLLM 0.6.6):
- Every ~5 s the spec worker copies the rejection sampler's *cumulative* totals
  (`spec_decode/metrics.py:132-140,164-166`; the sampler only ever adds to them,
  `model_executor/layers/rejection_sampler.py:135-137`) and the stat logger *adds* each copy to
  `vllm:spec_decode_num_{accepted,draft,emitted}_tokens_total` (`engine/metrics.py:686-694`).
  Those counters are sums of running totals: their growth over a window is no window count
  (after a minute it is about 12 windows' worth, and it keeps growing). They are never read as counts.
- `vllm:spec_decode_draft_acceptance_rate` and `vllm:spec_decode_efficiency` are set from the same
  cumulative totals (`spec_decode/metrics.py:171-179`): lifetime figures. The acceptance gauge is
  shown as the lifetime acceptance, never as the window's.
- `vllm:generation_tokens_total` grows by the scheduler's batched tokens minus prompt tokens
  (`engine/llm_engine.py:1758-1766`): one per sequence per step, however many tokens a spec step
  emitted. With spec decoding it is a lower bound on tokens (live tokens/s marked "≥"), and the
  window's tokens, steps, drafted and accepted counts and requests per step are unknown.
V0 is told by series only its `engine/metrics.py` registers (`_V0_ONLY`); its series carry
`model_name` only, no `engine` label.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from collectors.promtext import Sample
from collectors.servers import series
from collectors.servers.snapshot import ServerSnapshot

ACCEPTANCE_GAUGE = "vllm:spec_decode_draft_acceptance_rate"  # engine/metrics.py:238-242
EFFICIENCY_GAUGE = "vllm:spec_decode_efficiency"  # engine/metrics.py:243-247
EMITTED = "vllm:spec_decode_num_emitted_tokens_total"  # engine/metrics.py:256-259
SPEC_GAUGES = (ACCEPTANCE_GAUGE, EFFICIENCY_GAUGE)
# registered by V0's Metrics only (engine/metrics.py:76-91); V1 has none of them
_V0_ONLY = (*SPEC_GAUGES, EMITTED, "vllm:num_requests_swapped", "vllm:cpu_cache_usage_perc")


def is_v0(metrics: Mapping[str, list[Sample]] | None) -> bool:
    return metrics is not None and any(name in metrics for name in _V0_ONLY)


def drafts_v0(metrics: Mapping[str, list[Sample]] | None) -> bool:
    """A V0 page with its spec series: its spec counters are sums of running totals."""
    return metrics is not None and any(name in metrics for name in (*SPEC_GAUGES, EMITTED))


def lifetime_acceptance(metrics: Mapping[str, list[Sample]] | None) -> float | None:
    """The acceptance gauge (accepted / drafted since start); None when absent or not a number yet."""
    rows = series.series(metrics, ACCEPTANCE_GAUGE)
    values = [v for v in rows.values() if 0.0 <= v <= 1.0]  # NaN until the first collection
    return sum(values) / len(values) if values else None


@dataclass(frozen=True, slots=True)
class VllmV0Snapshot(ServerSnapshot):
    """A V0 snapshot: lifetime acceptance from V0's gauge, window spec figures unknown."""

    acceptance_lifetime_gauge: float | None = None

    @property
    def acceptance_lifetime(self) -> float | None:
        return self.acceptance_lifetime_gauge


# what a V0 drafting page cannot say: its counters are sums of running totals, its tokens steps
UNKNOWN_TOTALS = dict(
    tokens_predicted_total=None,
    drafted_total=None,
    accepted_total=None,
    steps_total=None,
    drafted_steps_total=None,
    per_position_total=(),
)
UNKNOWN_WINDOW = dict(
    window_tokens=None,
    live_tok_s_exact=False,  # one per sequence per step: a lower bound
    window_drafted=None,
    window_accepted=None,
    window_steps=None,
    window_drafted_steps=None,
    window_per_position=(),
    busy_slots_per_decode=None,
)


def snapshot(
    base: dict[str, Any], window: dict[str, Any], metrics: Mapping[str, list[Sample]]
) -> VllmV0Snapshot:
    """The V1 reading of a V0 drafting page with what V0 cannot say taken out."""
    fields = {**base, **window, **UNKNOWN_TOTALS}
    if window:
        fields.update(UNKNOWN_WINDOW)
    return VllmV0Snapshot(**fields, acceptance_lifetime_gauge=lifetime_acceptance(metrics))
