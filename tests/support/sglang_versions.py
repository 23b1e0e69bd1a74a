"""SGLang 0.4.10, 0.5.4, 0.5.9, 0.5.10 and 0.5.11 scheduler pages over one window, each with the
rate its release computes.

The window (the last 40 decode iterations, one DP rank): F = 400 request-verifies (Σ batch size)
and A accepted drafts, with `--speculative-num-steps 3` and `--speculative-num-draft-tokens` D.
Each release sets (sglang/srt/…, line numbers of that release's wheel):
- accept length L = (A + F) / F: 0.5.4 `managers/scheduler_metrics_mixin.py:70-71,255-257`,
  0.5.10 `observability/scheduler_metrics_mixin.py:181-182,614-616`, 0.5.11 the same file `:192-193,528-530`;
- accept rate: 0.5.4 (A + F) / (F × (steps + 1)) (`managers/scheduler_metrics_mixin.py:258-266`);
  0.5.10 (A + F) / (F × D) (`observability/scheduler_metrics_mixin.py:617-628`);
  0.5.11 A / (F × (D − 1)) (`observability/scheduler_metrics_mixin.py:531-544`);
- 0.5.9 as 0.5.10: L = (A + F) / F and rate L / D, D falling back to steps + 1
  (`managers/scheduler_metrics_mixin.py:148-149,369-385`); HELP `metrics/collector.py:386-396`;
- 0.4.10: only the length gauge, L = (A + F) / F over the log interval (`managers/scheduler.py:1687-1688`,
  `managers/scheduler_metrics_mixin.py:173-176`; `metrics/collector.py:209-214`), no rate gauge and no
  `realtime_tokens`: tokens come from `sglang:generation_tokens_total` (`collector.py:330-334`), and the
  args and `version` from `/get_server_info` (`entrypoints/http_server.py:308-319`).
HELP strings: 0.5.4 `metrics/collector.py:228-239`, 0.5.10 `observability/metrics_collector.py:275-286`,
0.5.11 `observability/metrics_collector.py:296-307`. None of the three has `sglang:spec_num_draft_tokens`.
`/get_server_info` (0.5.4) and `/server_info` carry the server args and `version`
(0.5.4 `entrypoints/http_server.py:497-507`).
"""

from __future__ import annotations

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from tests.support.fake_servers import MODEL, render

OLD_HELP = (
    "The average acceptance rate of speculative decoding (`accepted tokens / total draft tokens` in batch)."
)
HELP = {
    "0.4.10": ("The average acceptance length of speculative decoding.", ""),
    "0.5.9": ("The average acceptance length of speculative decoding.", OLD_HELP),
    "0.5.4": ("The average acceptance length of speculative decoding.", OLD_HELP),
    "0.5.10": ("The average acceptance length of speculative decoding.", OLD_HELP),
    "0.5.11": (
        "Mean acceptance length of speculative decoding (accepted drafts + bonus token per forward).",
        "Speculative acceptance rate (`accepted drafts / proposed drafts` in batch).",
    ),
}
FORWARDS = 400


def rate_of(version: str, accepted: int, draft_tokens: int, steps: int = 3) -> float:
    """The spec_accept_rate gauge `version` computes for A accepted drafts over the window."""
    if version == "0.5.4":
        return (accepted + FORWARDS) / (FORWARDS * (steps + 1))
    if version in ("0.5.9", "0.5.10"):
        return (accepted + FORWARDS) / (FORWARDS * draft_tokens)
    return accepted / (FORWARDS * (draft_tokens - 1))


def page(version: str, accepted: int, draft_tokens: int, decode_tokens: float) -> str:
    labels = ["engine_type", "model_name", "moe_ep_rank", "pp_rank", "tp_rank"]
    row = ["unified", MODEL, "0", "0", "0"]
    length_doc, rate_doc = HELP[version]
    length = GaugeMetricFamily("sglang:spec_accept_length", length_doc, labels=labels)
    length.add_metric(row, (accepted + FORWARDS) / FORWARDS)
    if (
        version == "0.4.10"
    ):  # scheduler labels (scheduler_metrics_mixin.py:43-48); the tokenizer's: model_name
        old_row = ["unified", MODEL, "0", "0"]
        length = GaugeMetricFamily(
            "sglang:spec_accept_length",
            length_doc,
            labels=["engine_type", "model_name", "pp_rank", "tp_rank"],
        )
        length.add_metric(old_row, (accepted + FORWARDS) / FORWARDS)
        generated = CounterMetricFamily(
            "sglang:generation_tokens", "Number of generation tokens processed.", labels=["model_name"]
        )
        generated.add_metric([MODEL], decode_tokens)
        return render([length, generated])
    rate = GaugeMetricFamily("sglang:spec_accept_rate", rate_doc, labels=labels)
    rate.add_metric(row, rate_of(version, accepted, draft_tokens))
    running = GaugeMetricFamily("sglang:num_running_reqs", "The number of running requests.", labels=labels)
    running.add_metric(row, 10)
    realtime = CounterMetricFamily(
        "sglang:realtime_tokens",
        "Total number of tokens processed (updated on each log interval). mode: prefill_compute, prefill_cache, decode.",
        labels=[*labels, "mode"],
    )
    realtime.add_metric([*row, "decode"], decode_tokens)
    return render([length, rate, running, realtime])


def info(version: str, draft_tokens: int, topk: int) -> dict:
    return {
        "model_path": MODEL,
        "speculative_algorithm": "EAGLE3",
        "speculative_num_steps": 3,
        "speculative_eagle_topk": topk,
        "speculative_num_draft_tokens": draft_tokens,
        "version": version,
    }
