"""vLLM's per-request speculative figures, `metrics.speculative_decoding` (vLLM 0.33).

With `--per-request-spec-decode-metrics summary|detailed` (`config/observability.py:50-62`)
vLLM keeps, per request, its verify steps that drafted as `RequestSpecDecodeMetrics`
(`v1/metrics/stats.py:349-420`): a histogram over accepted drafts (`observe`, :386-393), the
proposed drafts, and with `detailed` the per-step arrays; `to_dict` (:397-420) gives the
response's figures. Pitfall handled: `num_spec_steps` counts only steps that drafted, not every
decode step (a request's last token may come from a step with no draft).
"""

from __future__ import annotations

MAX_KEPT_REQUESTS = 4096  # finished requests whose figures no client took


class RequestSpecRecords:
    """Each running request's figures, taken once by its stream's last chunk."""

    def __init__(self, num_spec_tokens: int, level: str = "none") -> None:
        self.level = level  # "none", "summary" or "detailed", as vLLM's flag
        self._k = num_spec_tokens
        self._requests: dict[int, tuple[list[int], list[int], list[int]]] = {}

    def observe(self, task_id: int, drafted: int, accepted: int) -> None:
        if self.level == "none":
            return
        histogram, per_step_accepted, per_step_drafted = self._requests.setdefault(
            task_id, ([0] * (self._k + 1), [], [])
        )
        histogram[min(accepted, self._k)] += 1
        per_step_accepted.append(accepted)
        per_step_drafted.append(drafted)

    def trim(self) -> None:
        while len(self._requests) > MAX_KEPT_REQUESTS:
            self._requests.pop(next(iter(self._requests)))

    def take(self, task_id: int) -> dict[str, object] | None:
        """The request's `metrics.speculative_decoding`; None when off or it never drafted."""
        found = self._requests.pop(task_id, None)
        if found is None:
            return None
        histogram, per_step_accepted, per_step_drafted = found
        steps = sum(histogram)
        accepted = sum(j * count for j, count in enumerate(histogram))
        drafted = sum(per_step_drafted)
        out: dict[str, object] = {
            "mean_acceptance_length": 1.0 + accepted / steps if steps else 1.0,
            "draft_acceptance_rate": accepted / drafted if drafted else 0.0,
            "acceptance_histogram": histogram,
            "num_spec_steps": steps,
            "num_accepted_draft_tokens": accepted,
            "num_draft_tokens": drafted,
            "num_spec_tokens": self._k,
        }
        if self.level == "detailed":
            out.update(per_step_accepted=per_step_accepted, per_step_drafted=per_step_drafted)
        return out
